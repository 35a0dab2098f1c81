//! Which rules can apply to a call, found by lookup.
//!
//! A rule's `if.server` and `if.tool` globs depend on nothing but the call's
//! names, so they select the candidate rules before anything else is looked
//! at. Each distinct pattern gets an id in its dimension (server or tool):
//! a literal pattern (no glob syntax) is found by one hash lookup, the
//! others by one compiled [`GlobSet`] per dimension, so a name's matching
//! patterns cost two lookups whatever the number of rules.
//!
//! Each rule is filed under the patterns of one of its dimensions (literal
//! tool names first, the most selective, then literal servers, then globs),
//! or among the rules that apply everywhere when it names neither. A call's
//! candidates are the rules filed under the patterns its names match plus
//! those, each checked against its other dimension, in policy order.

use std::cell::RefCell;

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use rustc_hash::FxHashMap;
use serde_json::Value;
use smallvec::SmallVec;

use crate::scan::Memo;
use crate::sieve::{Admitted, Sieve};
use crate::trigger::Trigger;

/// Rule indices (into the engine's rules), in policy order.
pub(crate) type Candidates = SmallVec<[u32; 16]>;

/// Ids of the patterns a name matches, sorted.
type Hits = SmallVec<[u32; 8]>;

thread_local! {
    /// Reused for [`GlobSet::matches_into`], so matching allocates nothing.
    static GLOB_HITS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The rules, indexed by their server and tool patterns.
#[derive(Debug)]
pub(crate) struct RuleIndex {
    servers: Dimension,
    tools: Dimension,
    /// Per rule, the ids of its server patterns and of its tool patterns
    /// (sorted; empty: any name).
    keys: Vec<(Vec<u32>, Vec<u32>)>,
    /// The rules with neither server nor tool patterns.
    everywhere: Vec<u32>,
    /// Those of `everywhere` that have triggers, by fact (see [`crate::sieve`]).
    everywhere_sieve: Sieve,
    /// One bit per rule: whether it has a trigger (a sieve admits it).
    triggered: Vec<u64>,
}

/// What a call's names select: the candidate rules, and the ids of the
/// patterns they were found under (for [`RuleIndex::sift`]).
#[derive(Debug)]
pub(crate) struct Selected {
    /// Rule indices, in policy order.
    pub candidates: Candidates,
    server_hits: Hits,
    tool_hits: Hits,
}

/// The patterns of one dimension (server or tool names).
#[derive(Debug, Default)]
struct Dimension {
    /// Pattern text → id, every pattern.
    ids: FxHashMap<String, u32>,
    /// Literal pattern → id.
    literals: FxHashMap<String, u32>,
    /// The other patterns, compiled together.
    globs: GlobSet,
    /// The id of each glob of `globs`, by its index there.
    glob_ids: Vec<u32>,
    /// The rules filed under each pattern id, in order.
    filed: Vec<Vec<u32>>,
    /// Per pattern id, those of its rules that have triggers, by fact.
    sieves: Vec<Sieve>,
}

/// A [`Dimension`] being built.
struct DimensionBuilder {
    dimension: Dimension,
    globs: GlobSetBuilder,
}

impl DimensionBuilder {
    fn new() -> DimensionBuilder {
        DimensionBuilder { dimension: Dimension::default(), globs: GlobSetBuilder::new() }
    }

    /// The id of `pattern`, added if new; whether it is literal.
    fn add(&mut self, pattern: &str) -> Result<(u32, bool), String> {
        let dimension = &mut self.dimension;
        if let Some(&id) = dimension.ids.get(pattern) {
            return Ok((id, dimension.literals.contains_key(pattern)));
        }
        let id = u32::try_from(dimension.filed.len()).map_err(|_| "too many patterns".to_owned())?;
        let glob = GlobBuilder::new(pattern).build().map_err(|err| format!("glob {pattern:?}: {}", err.kind()))?;
        // Without glob syntax a pattern matches its own text only; the check
        // that it does keeps any globset subtlety on the glob side.
        let literal =
            !pattern.contains(['*', '?', '[', ']', '{', '}', '\\']) && glob.compile_matcher().is_match(pattern);
        if literal {
            dimension.literals.insert(pattern.to_owned(), id);
        } else {
            dimension.glob_ids.push(id);
            self.globs.add(glob);
        }
        dimension.ids.insert(pattern.to_owned(), id);
        dimension.filed.push(Vec::new());
        dimension.sieves.push(Sieve::default());
        Ok((id, literal))
    }

    fn build(self) -> Result<Dimension, String> {
        let globs = self.globs.build().map_err(|err| err.to_string())?;
        Ok(Dimension { globs, ..self.dimension })
    }
}

impl Dimension {
    /// The ids of the patterns `name` matches, sorted.
    fn hits(&self, name: &str) -> Hits {
        let mut hits = Hits::new();
        if let Some(&id) = self.literals.get(name) {
            hits.push(id);
        }
        if !self.globs.is_empty() {
            let candidate = Candidate::new(name);
            let mut add = |indices: &[usize]| {
                hits.extend(indices.iter().filter_map(|&i| self.glob_ids.get(i).copied()));
            };
            GLOB_HITS.with(|buffer| match buffer.try_borrow_mut() {
                Ok(mut buffer) => {
                    self.globs.matches_candidate_into(&candidate, &mut buffer);
                    add(&buffer);
                }
                Err(_) => add(&self.globs.matches_candidate(&candidate)),
            });
        }
        hits.sort_unstable();
        hits
    }

    fn filed(&self, id: u32) -> &[u32] {
        self.filed.get(id as usize).map(Vec::as_slice).unwrap_or_default()
    }
}

impl RuleIndex {
    /// Indexes rules given as their (server patterns, tool patterns), in
    /// order. Fails only on an invalid glob, which compiling the rules
    /// reports first.
    pub(crate) fn build<'r>(
        rules: impl IntoIterator<Item = (&'r [String], &'r [String])>,
    ) -> Result<RuleIndex, String> {
        let mut servers = DimensionBuilder::new();
        let mut tools = DimensionBuilder::new();
        let mut keys = Vec::new();
        let mut everywhere = Vec::new();
        for (index, (server_patterns, tool_patterns)) in rules.into_iter().enumerate() {
            let index = u32::try_from(index).map_err(|_| "too many rules".to_owned())?;
            let add = |builder: &mut DimensionBuilder, patterns: &[String]| {
                let mut ids = Vec::with_capacity(patterns.len());
                let mut literal = true;
                for pattern in patterns {
                    let (id, is_literal) = builder.add(pattern)?;
                    ids.push(id);
                    literal &= is_literal;
                }
                ids.sort_unstable();
                ids.dedup();
                Ok::<_, String>((ids, literal))
            };
            let (server_ids, servers_literal) = add(&mut servers, server_patterns)?;
            let (tool_ids, tools_literal) = add(&mut tools, tool_patterns)?;
            // Filed under the dimension that selects fewest calls.
            let file = |builder: &mut DimensionBuilder, ids: &[u32]| {
                for &id in ids {
                    if let Some(filed) = builder.dimension.filed.get_mut(id as usize) {
                        filed.push(index);
                    }
                }
            };
            match (server_ids.is_empty(), tool_ids.is_empty()) {
                (true, true) => everywhere.push(index),
                (_, false) if tools_literal || !servers_literal || server_ids.is_empty() => file(&mut tools, &tool_ids),
                _ => file(&mut servers, &server_ids),
            }
            keys.push((server_ids, tool_ids));
        }
        Ok(RuleIndex {
            servers: servers.build()?,
            tools: tools.build()?,
            keys,
            everywhere,
            everywhere_sieve: Sieve::default(),
            triggered: Vec::new(),
        })
    }

    /// Files each rule that has a trigger (`triggers`, by rule index) in the
    /// sieve of every list it is filed in.
    pub(crate) fn add_triggers<'t>(&mut self, triggers: impl IntoIterator<Item = Option<&'t Trigger>>) {
        let triggers: Vec<Option<&Trigger>> = triggers.into_iter().collect();
        let trigger = |rule: u32| triggers.get(rule as usize).copied().flatten();
        self.triggered = vec![0; triggers.len().div_ceil(64)];
        for (rule, found) in triggers.iter().enumerate() {
            if found.is_some()
                && let Some(word) = self.triggered.get_mut(rule / 64)
            {
                *word |= 1 << (rule % 64);
            }
        }
        for dimension in [&mut self.servers, &mut self.tools] {
            for (filed, sieve) in dimension.filed.iter().zip(&mut dimension.sieves) {
                for &rule in filed {
                    if let Some(trigger) = trigger(rule) {
                        sieve.file(rule, trigger);
                    }
                }
            }
        }
        for &rule in &self.everywhere {
            if let Some(trigger) = trigger(rule) {
                self.everywhere_sieve.file(rule, trigger);
            }
        }
    }

    /// The rules whose server and tool patterns admit `server` and `tool`,
    /// in policy order.
    #[cfg(test)]
    pub(crate) fn candidates(&self, server: &str, tool: &str) -> Candidates {
        self.select(server, tool).candidates
    }

    /// Leaves out of `selected` the candidates whose trigger does not hold
    /// for `args`: the rules that have none stay, and of the others those
    /// the sieves of the lists they came from admit.
    pub(crate) fn sift<'v>(&self, selected: &mut Selected, args: &'v Value, memo: &mut Memo<'v, '_>) {
        let has_trigger =
            |rule: u32| self.triggered.get(rule as usize / 64).is_some_and(|word| word & (1 << (rule % 64)) != 0);
        if !selected.candidates.iter().any(|&rule| has_trigger(rule)) {
            return;
        }
        let mut admitted = Admitted::new();
        for (dimension, hits) in [(&self.tools, &selected.tool_hits), (&self.servers, &selected.server_hits)] {
            for &id in hits {
                if let Some(sieve) = dimension.sieves.get(id as usize) {
                    sieve.admit(args, memo, &mut admitted);
                }
            }
        }
        self.everywhere_sieve.admit(args, memo, &mut admitted);
        admitted.sort_unstable();
        admitted.dedup();
        selected.candidates.retain(|rule| !has_trigger(*rule) || admitted.binary_search(rule).is_ok());
    }

    /// The candidates for `server` and `tool`, with the pattern ids they
    /// came by.
    pub(crate) fn select(&self, server: &str, tool: &str) -> Selected {
        let server_hits = self.servers.hits(server);
        let tool_hits = self.tools.hits(tool);
        let mut found = Candidates::new();
        for &id in &tool_hits {
            found.extend_from_slice(self.tools.filed(id));
        }
        for &id in &server_hits {
            found.extend_from_slice(self.servers.filed(id));
        }
        found.extend_from_slice(&self.everywhere);
        found.sort_unstable();
        found.dedup();
        let admits = |ids: &[u32], hits: &Hits| ids.is_empty() || ids.iter().any(|id| hits.contains(id));
        found.retain(|index| {
            self.keys
                .get(*index as usize)
                .is_some_and(|(servers, tools)| admits(servers, &server_hits) && admits(tools, &tool_hits))
        });
        Selected { candidates: found, server_hits, tool_hits }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn candidates_come_by_literal_glob_or_everywhere_in_order() {
        let rules = [
            (strings(&["db"]), strings(&["query"])),
            (strings(&[]), strings(&["*_exec"])),
            (strings(&["ops*"]), strings(&[])),
            (strings(&[]), strings(&[])),
            (strings(&["db", "db2"]), strings(&["query", "q*"])),
            (strings(&["other"]), strings(&["query"])),
        ];
        let index = RuleIndex::build(rules.iter().map(|(s, t)| (s.as_slice(), t.as_slice()))).unwrap();
        assert_eq!(index.candidates("db", "query").as_slice(), [0, 3, 4]);
        assert_eq!(index.candidates("db2", "qx").as_slice(), [3, 4]);
        assert_eq!(index.candidates("ops-eu", "run_exec").as_slice(), [1, 2, 3]);
        assert_eq!(index.candidates("x", "y").as_slice(), [3]);
        assert_eq!(index.candidates("other", "query").as_slice(), [3, 5]);
    }
}
