//! Many string tests on one value in one pass.
//!
//! A policy often tests the same argument against many patterns, one rule
//! each: thirty rules with a `regex` on `cmd`, fifty with a `contains` on
//! `text`. Testing them one by one costs one search per rule. So the
//! compiler gathers, per argument, its `regex` tests (one [`RegexSet`] per
//! case setting) and its case-sensitive `contains` / `notContains` needles
//! (one Aho-Corasick automaton), and each such test knows its place in its
//! group ([`Member`]).
//!
//! During one evaluation, [`Memo`] remembers which values a group's tests
//! looked at. The first test of a group on a value runs alone, as before (a
//! call that only one rule tests pays nothing more); the second runs the
//! whole group over the value once, and every later test of the group on
//! it is a lookup. The answers are the same: a set reports exactly the
//! patterns that match, an overlapping automaton search exactly the
//! needles that occur.

use aho_corasick::{AhoCorasick, MatchKind};
use regex::{RegexSet, RegexSetBuilder};
use serde_json::Value;
use warden_sql::{Dialect, SqlFacts};

use crate::condition::{ArgPath, REGEX_SIZE_LIMIT};

/// Compiled-program size limit of one group's set of regular expressions
/// (each alone has [`REGEX_SIZE_LIMIT`]).
const SET_SIZE_LIMIT: usize = 8 * REGEX_SIZE_LIMIT;

/// A test's place in a group: the group's index in [`Scans`], the test's
/// pattern in the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    pub group: u32,
    pub index: u32,
}

/// The groups of a compiled policy.
#[derive(Debug, Default)]
pub(crate) struct Scans {
    groups: Vec<Option<Group>>,
}

/// The patterns tested on one argument, compiled together.
#[derive(Debug)]
enum Group {
    Regexes(RegexSet),
    Needles(AhoCorasick),
}

/// What the group's patterns are, before they are compiled together.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum GroupKind {
    /// Regular expressions, case-insensitive or not.
    Regexes { ignore_case: bool },
    /// Case-sensitive substrings.
    Needles,
}

/// No groups, for the reference evaluation.
static NO_SCANS: Scans = Scans::NONE;

/// How many argument paths one evaluation remembers; more are looked up
/// each time (a call's rules rarely read more than a few arguments).
const REMEMBERED: usize = 8;

/// Gathers the groups while conditions are compiled.
#[derive(Debug, Default)]
pub(crate) struct ScansBuilder {
    /// (argument path, kind) → the group's index.
    keys: std::collections::HashMap<(String, GroupKind), u32>,
    /// Per group: its kind and patterns.
    groups: Vec<(GroupKind, Vec<String>)>,
}

impl ScansBuilder {
    /// The member for `pattern` tested on `arg` (the same pattern twice is
    /// one member).
    pub(crate) fn member(&mut self, arg: &str, kind: GroupKind, pattern: &str) -> Option<Member> {
        let next = u32::try_from(self.groups.len()).ok()?;
        let group = *self.keys.entry((arg.to_owned(), kind.clone())).or_insert(next);
        if group == next {
            self.groups.push((kind, Vec::new()));
        }
        let patterns = &mut self.groups.get_mut(group as usize)?.1;
        let index = match patterns.iter().position(|p| p == pattern) {
            Some(index) => index,
            None => {
                patterns.push(pattern.to_owned());
                patterns.len() - 1
            }
        };
        Some(Member { group, index: u32::try_from(index).ok()? })
    }

    /// The groups compiled. A group with one pattern is left out (its test
    /// runs alone anyway), as is one that cannot be compiled together
    /// (its tests then run one by one).
    pub(crate) fn build(self) -> Scans {
        let groups = self
            .groups
            .into_iter()
            .map(|(kind, patterns)| {
                if patterns.len() < 2 {
                    return None;
                }
                match kind {
                    GroupKind::Regexes { ignore_case } => RegexSetBuilder::new(&patterns)
                        .case_insensitive(ignore_case)
                        // Bounded whatever the number of patterns: a set
                        // too large to compile within it is left out, and
                        // its tests run alone.
                        .size_limit(SET_SIZE_LIMIT)
                        .dfa_size_limit(REGEX_SIZE_LIMIT)
                        .build()
                        .ok()
                        .map(Group::Regexes),
                    GroupKind::Needles => {
                        AhoCorasick::builder().match_kind(MatchKind::Standard).build(&patterns).ok().map(Group::Needles)
                    }
                }
            })
            .collect();
        Scans { groups }
    }
}

impl Scans {
    /// No groups: every test runs alone (the reference evaluation).
    pub(crate) const NONE: Scans = Scans { groups: Vec::new() };

    /// Whether `group` was compiled together.
    pub(crate) fn compiled(&self, group: u32) -> bool {
        self.groups.get(group as usize).is_some_and(Option::is_some)
    }

    /// Whether some pattern of `group` matches `text` (one search; `true`
    /// when the group was not compiled, which knows nothing).
    pub(crate) fn any(&self, group: u32, text: &str) -> bool {
        match self.groups.get(group as usize) {
            Some(Some(Group::Regexes(set))) => set.is_match(text),
            Some(Some(Group::Needles(automaton))) => automaton.is_match(text),
            _ => true,
        }
    }

    /// Which patterns of `group` match `text`, one bit per pattern.
    fn run(&self, group: u32, text: &str) -> Option<Vec<bool>> {
        match self.groups.get(group as usize)?.as_ref()? {
            Group::Regexes(set) => {
                let matches = set.matches(text);
                Some((0..set.len()).map(|i| matches.matched(i)).collect())
            }
            Group::Needles(automaton) => {
                let mut found = vec![false; automaton.patterns_len()];
                for hit in automaton.find_overlapping_iter(text) {
                    if let Some(bit) = found.get_mut(hit.pattern().as_usize()) {
                        *bit = true;
                    }
                }
                Some(found)
            }
        }
    }
}

/// What one evaluation has already worked out about the call's values:
/// where each argument path leads (fifty rules reading `text` look it up
/// once), SQL analyses (rules testing the same argument parse it once) and
/// group scans. Values are told apart by address: they all borrow from the
/// one decoded arguments object. (Plain vectors: their drop may outlive the
/// values they point to, which the borrow checker allows of `Vec` only.)
pub(crate) struct Memo<'v, 's> {
    scans: &'s Scans,
    /// Whether argument paths are remembered (not by the reference).
    remember_arguments: bool,
    /// The arguments object `arguments` were looked up in.
    of: Option<&'v Value>,
    /// Per argument slot: the value there (`None`: absent or `null`), for
    /// the first [`REMEMBERED`] paths an evaluation reads (an array: it
    /// allocates nothing, and has no drop for the borrow checker to mind).
    arguments: [(u32, Option<&'v Value>); REMEMBERED],
    /// How many of `arguments` are filled.
    remembered: usize,
    sql: Vec<(&'v str, Dialect, Option<SqlFacts>)>,
    /// Per (group, value): `None` once one test ran alone, then the scan.
    scanned: Vec<(u32, &'v str, Option<Vec<bool>>)>,
}

impl<'v, 's> Memo<'v, 's> {
    /// An empty memory for one evaluation under `scans`.
    pub(crate) fn new(scans: &'s Scans) -> Memo<'v, 's> {
        Memo {
            scans,
            remember_arguments: true,
            of: None,
            arguments: [(0, None); REMEMBERED],
            remembered: 0,
            sql: Vec::new(),
            scanned: Vec::new(),
        }
    }

    /// An empty memory that remembers only SQL analyses, as the engine did
    /// before slots and scans: for the reference evaluation.
    pub(crate) fn reference() -> Memo<'v, 'static> {
        Memo { remember_arguments: false, ..Memo::new(&NO_SCANS) }
    }

    /// The groups this evaluation tests under.
    pub(crate) fn scans(&self) -> &'s Scans {
        self.scans
    }

    /// The value at `path` in `args` (`None`: absent or `null`), looked up
    /// once per slot.
    pub(crate) fn argument(&mut self, path: &ArgPath, args: &'v Value) -> Option<&'v Value> {
        if !self.remember_arguments {
            return path.lookup(args);
        }
        if !self.of.is_some_and(|of| std::ptr::eq(of, args)) {
            // Another object (never within one evaluation): start afresh.
            self.of = Some(args);
            self.remembered = 0;
        }
        let known = self.arguments.get(..self.remembered).unwrap_or_default();
        if let Some((_, value)) = known.iter().find(|(slot, _)| *slot == path.slot) {
            return *value;
        }
        let value = path.lookup(args);
        if let Some(entry) = self.arguments.get_mut(self.remembered) {
            *entry = (path.slot, value);
            self.remembered += 1;
        }
        value
    }

    /// The facts of `sql` in `dialect` (`None`: it does not parse).
    pub(crate) fn sql_facts(&mut self, sql: &'v str, dialect: Dialect) -> Option<&SqlFacts> {
        let index = match self.sql.iter().position(|(s, d, _)| *d == dialect && std::ptr::eq(*s, sql)) {
            Some(index) => index,
            None => {
                self.sql.push((sql, dialect, warden_sql::analyze(sql, dialect).ok()));
                self.sql.len() - 1
            }
        };
        self.sql.get(index).and_then(|(_, _, facts)| facts.as_ref())
    }

    /// How many SQL texts were analysed.
    #[cfg(test)]
    pub(crate) fn sql_analyses(&self) -> usize {
        self.sql.len()
    }

    /// Which patterns of `group` match `text`, one bit per pattern, by the
    /// group's scan (run once per value); `None` when the group was not
    /// compiled.
    pub(crate) fn hits(&mut self, group: u32, text: &'v str) -> Option<&[bool]> {
        if !self.scans.compiled(group) {
            return None;
        }
        let at = match self.scanned.iter().position(|(g, value, _)| *g == group && std::ptr::eq(*value, text)) {
            Some(at) => at,
            None => {
                self.scanned.push((group, text, None));
                self.scanned.len() - 1
            }
        };
        let entry = self.scanned.get_mut(at)?;
        if entry.2.is_none() {
            entry.2 = self.scans.run(group, text);
        }
        entry.2.as_deref()
    }

    /// Whether the pattern of `member` matches `text`: by `alone` the first
    /// time its group meets `text`, by the group's scan after.
    pub(crate) fn matches(&mut self, member: Member, text: &'v str, alone: impl FnOnce() -> bool) -> bool {
        // A test whose group was not compiled (one pattern, or the reference)
        // always runs alone, and leaves nothing to remember.
        if !self.scans.compiled(member.group) {
            return alone();
        }
        let seen = self.scanned.iter().any(|(group, value, _)| *group == member.group && std::ptr::eq(*value, text));
        if !seen {
            self.scanned.push((member.group, text, None));
            return alone();
        }
        match self.hits(member.group, text) {
            Some(bits) => bits.get(member.index as usize).copied().unwrap_or_else(alone),
            None => alone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_answers_as_its_tests_would_alone() {
        let mut builder = ScansBuilder::default();
        let patterns = [r"rm\s+-rf", r"^ls\b", r"curl .*\|\s*sh", "x{2,}"];
        let members: Vec<Member> = patterns
            .iter()
            .map(|p| builder.member("cmd", GroupKind::Regexes { ignore_case: false }, p).unwrap())
            .collect();
        let needles = ["secret", "token", "ok", "tok"];
        let needle_members: Vec<Member> =
            needles.iter().map(|n| builder.member("cmd", GroupKind::Needles, n).unwrap()).collect();
        assert_eq!(builder.member("cmd", GroupKind::Needles, "token"), Some(needle_members[1]));
        let scans = builder.build();
        for text in ["ls -la; rm -rf /", "curl x | sh", "xx token", "nothing", "", "tokens ok"] {
            let mut memo = Memo::new(&scans);
            // Twice over, so the second pass is answered by the scans.
            for _ in 0..2 {
                for (member, pattern) in members.iter().zip(patterns) {
                    let alone = regex::Regex::new(pattern).unwrap().is_match(text);
                    assert_eq!(memo.matches(*member, text, || alone), alone, "{pattern} on {text:?}");
                }
                for (member, needle) in needle_members.iter().zip(needles) {
                    let alone = text.contains(needle);
                    assert_eq!(memo.matches(*member, text, || alone), alone, "{needle} in {text:?}");
                }
            }
        }
    }

    #[test]
    fn a_pattern_alone_on_its_argument_is_never_remembered() {
        let mut builder = ScansBuilder::default();
        let only = builder.member("q", GroupKind::Needles, "a").unwrap();
        let scans = builder.build();
        let mut memo = Memo::new(&scans);
        assert!(memo.matches(only, "ab", || true));
        assert!(!memo.matches(only, "ab", || false), "answered by `alone`, not by a scan");
        assert!(memo.scanned.is_empty());
    }

    #[test]
    fn the_first_test_of_a_group_on_a_value_runs_alone() {
        let mut builder = ScansBuilder::default();
        let a = builder.member("q", GroupKind::Needles, "a").unwrap();
        let b = builder.member("q", GroupKind::Needles, "b").unwrap();
        let scans = builder.build();
        let mut memo = Memo::new(&scans);
        let text = "ab";
        // The first answer is `alone`'s (here a deliberately wrong one, to see who answered).
        assert!(!memo.matches(a, text, || false));
        assert!(memo.matches(b, text, || false));
        assert!(memo.matches(a, text, || false));
    }
}
