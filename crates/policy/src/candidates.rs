//! The rules one evaluation walks: the index's candidates, or (the
//! reference) every rule with whether its globs matched.

use crate::compile::{CompiledRule, PolicyEngine};
use crate::index::Candidates;
use crate::scan::Scans;

/// No groups, for the reference scan.
static NO_SCANS: Scans = Scans::NONE;

/// Which rules' server and tool patterns admit the call.
pub(crate) enum Selection {
    /// The index's candidates, in policy order (see [`crate::index`]).
    Indexed(Candidates),
    /// Every rule, matched glob by glob: the reference the index is tested
    /// against (see [`crate::PolicyEngine::evaluate_scanning_all`]).
    Scanned(Vec<bool>),
}

impl Selection {
    /// The string tests that run together: the engine's, or none for the
    /// reference scan, which tests each pattern alone as the engine did.
    pub(crate) fn scans<'e>(&self, engine: &'e PolicyEngine) -> &'e Scans {
        match self {
            Selection::Indexed(_) => &engine.scans,
            Selection::Scanned(_) => &NO_SCANS,
        }
    }

    /// Whether the rule at `index` is a candidate.
    pub(crate) fn admits(&self, index: usize) -> bool {
        match self {
            Selection::Indexed(found) => u32::try_from(index).is_ok_and(|index| found.binary_search(&index).is_ok()),
            Selection::Scanned(matched) => matched.get(index).copied().unwrap_or(false),
        }
    }

    /// Whether some candidate judges tool calls.
    pub(crate) fn any_for_tools(&self, rules: &[CompiledRule]) -> bool {
        match self {
            Selection::Indexed(found) => {
                found.iter().any(|&index| rules.get(index as usize).is_some_and(|rule| rule.methods.tools))
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
            Selection::Indexed(found) if !all => (None, Some(found)),
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
