//! The rules one evaluation walks: the index's candidates, or (the
//! reference) every rule with whether its globs matched.

use crate::compile::{CompiledRule, PolicyEngine};
use crate::index::Selected;
use crate::scan::Memo;

/// Which rules' server and tool patterns admit the call.
pub(crate) enum Selection {
    /// The index's candidates, in policy order (see [`crate::index`]).
    Indexed(Selected),
    /// Every rule, matched glob by glob: the reference the index is tested
    /// against (see [`crate::PolicyEngine::evaluate_scanning_all`]).
    Scanned(Vec<bool>),
}

impl Selection {
    /// The memory of one evaluation: with the engine's string tests that
    /// run together and its argument slots, or, for the reference scan,
    /// neither (each pattern tested alone, each path looked up, as the
    /// engine did).
    pub(crate) fn memo<'v, 'e>(&self, engine: &'e PolicyEngine) -> Memo<'v, 'e> {
        match self {
            Selection::Indexed(_) => Memo::new(&engine.scans),
            Selection::Scanned(_) => Memo::reference(),
        }
    }

    /// Leaves out the candidates whose trigger says they cannot apply to
    /// `args` (see [`crate::sieve`]); the reference keeps every rule.
    pub(crate) fn sift<'v>(&mut self, engine: &PolicyEngine, args: &'v serde_json::Value, memo: &mut Memo<'v, '_>) {
        if let Selection::Indexed(selected) = self {
            engine.index.sift(selected, args, memo);
        }
    }

    /// Whether the rule at `index` is a candidate.
    pub(crate) fn admits(&self, index: usize) -> bool {
        match self {
            Selection::Indexed(found) => {
                u32::try_from(index).is_ok_and(|index| found.candidates.binary_search(&index).is_ok())
            }
            Selection::Scanned(matched) => matched.get(index).copied().unwrap_or(false),
        }
    }

    /// Whether some candidate judges tool calls.
    pub(crate) fn any_for_tools(&self, rules: &[CompiledRule]) -> bool {
        match self {
            Selection::Indexed(found) => {
                found.candidates.iter().any(|&index| rules.get(index as usize).is_some_and(|rule| rule.methods.tools))
            }
            Selection::Scanned(matched) => rules.iter().zip(matched).any(|(rule, hit)| *hit && rule.methods.tools),
        }
    }

    /// Whether some candidate for tool calls reads the arguments (has an
    /// `args` condition). Always, for the reference scan, which decodes
    /// them as the engine always did.
    pub(crate) fn reads_arguments(&self, rules: &[CompiledRule]) -> bool {
        match self {
            Selection::Indexed(found) => found
                .candidates
                .iter()
                .any(|&index| rules.get(index as usize).is_some_and(|rule| rule.methods.tools && rule.args.is_some())),
            Selection::Scanned(_) => true,
        }
    }

    /// The rules of `list` (indices in order, such as the engine's
    /// `call_rules`) to walk, each with whether it is a candidate. Only the
    /// candidates, unless `all` (the trace tells about the others too) or
    /// this is the reference scan; `listed` says whether a rule is in `list`
    /// (in constant time: candidates are not searched for in it).
    pub(crate) fn walk<'s>(
        &'s self,
        list: &'s [usize],
        all: bool,
        listed: impl Fn(usize) -> bool + 's,
    ) -> impl Iterator<Item = (usize, bool)> + 's {
        let (everything, candidates) = match self {
            Selection::Indexed(found) if !all => (None, Some(&found.candidates)),
            _ => (Some(list), None),
        };
        let every = everything.into_iter().flatten().map(|&index| (index, self.admits(index)));
        let found = candidates
            .into_iter()
            .flatten()
            .map(|&index| index as usize)
            .filter(move |&index| listed(index))
            .map(|index| (index, true));
        every.chain(found)
    }
}
