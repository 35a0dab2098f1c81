//! What must be true of a call for a rule's `args` to hold, tested before
//! the condition itself.
//!
//! A policy often has many rules on one tool whose conditions do not hold
//! for most calls: fifty `contains` needles on `text` that a call's text has
//! none of, a limit on `amount` that the call does not pass. Walking each
//! condition's tree costs tens of nanoseconds a rule. A [`Trigger`] is a
//! short list of facts about the call, at least one of which is true
//! whenever the condition holds:
//! - an argument is present;
//! - some string of an argument has a needle of a group (the group's
//!   automaton answers for all its needles in one search, see
//!   [`crate::scan`]), and then the needle itself;
//! - some string of an argument has a needle tested alone on it.
//!
//! The facts of a policy are numbered once, so one evaluation works each
//! out at most once and remembers it in two bits ([`Facts`]): a rule whose
//! trigger is false costs a few bit tests, and its condition is not looked
//! at.
//!
//! A trigger is a necessary condition, never a sufficient one: when it is
//! true the condition is tested as before, so decisions cannot change; a
//! trigger that is true too often only costs time. What makes one false
//! must make the condition false:
//! - a test on an absent (or `null`) argument holds only for `exists: false`
//!   and `notContains` (those have no trigger: they hold for nothing);
//! - a case-sensitive `contains` holds only on a string (or, with `some` or
//!   `each`, an array's string item) that has the needle: the fact is
//!   "some string there (the value, or an item of it) has the needle";
//! - `all` holds only if each part does: any part's trigger will do (the
//!   shortest); `any` holds only if some part does: the union of the parts'
//!   triggers (none if one part has none); `not` has none.

use std::collections::HashMap;

use serde_json::Value;
use smallvec::SmallVec;

use crate::condition::{ArgPath, Cond, Test, contains};
use crate::fold::{Place, has};
use crate::scan::{Member, Memo, Scans};

/// The most clauses a trigger lists; a condition that would need more has
/// none (it is tested whole each time).
const MOST_CLAUSES: usize = 8;

/// Clauses at least one of which holds whenever a condition does.
#[derive(Debug, Clone)]
pub(crate) struct Trigger {
    clauses: SmallVec<[Clause; 2]>,
}

/// One clause of a trigger; each names its fact's number in [`FactBook`].
#[derive(Debug, Clone)]
enum Clause {
    /// The argument is present.
    Present { fact: u32, arg: ArgPath },
    /// A needle of a compiled group on an argument: the group's fact (some
    /// string there has one of its needles) first, then this needle itself.
    Needle { group: u32, arg: ArgPath, needle: String, member: Member },
    /// A needle tested alone on an argument.
    Alone { fact: u32, arg: ArgPath, needle: String },
}

/// What a clause is filed under (see [`crate::sieve`]).
pub(crate) enum Key<'t> {
    /// The argument's presence.
    Present(&'t ArgPath),
    /// A needle of a compiled group on the argument.
    Needle(&'t ArgPath, Member),
    /// A needle tested alone on the argument.
    Alone(&'t ArgPath, &'t str),
}

impl Key<'_> {
    /// The argument the clause is about.
    pub(crate) fn arg(&self) -> &ArgPath {
        match self {
            Key::Present(arg) | Key::Needle(arg, _) | Key::Alone(arg, _) => arg,
        }
    }
}

/// What a fact says of the call.
#[derive(Debug, Clone)]
enum FactKind {
    /// The argument is present (not absent, not `null`).
    Present(ArgPath),
    /// Some string there has a needle of this compiled group.
    GroupHit { arg: ArgPath, group: u32 },
    /// Some string there has this needle (tested alone).
    Has { arg: ArgPath, needle: String },
}

/// The facts a policy's triggers ask about, numbered.
#[derive(Debug, Default)]
pub(crate) struct FactBook {
    kinds: Vec<FactKind>,
    /// (kind, slot, group, needle) → number.
    numbers: HashMap<(u8, u32, u32, String), u32>,
}

impl FactBook {
    /// The number of `kind`, given one if new.
    fn number(&mut self, kind: FactKind) -> u32 {
        let key = match &kind {
            FactKind::Present(arg) => (0, arg.slot, 0, String::new()),
            FactKind::GroupHit { arg, group } => (1, arg.slot, *group, String::new()),
            FactKind::Has { arg, needle } => (2, arg.slot, 0, needle.clone()),
        };
        let next = u32::try_from(self.kinds.len()).unwrap_or(u32::MAX);
        let number = *self.numbers.entry(key).or_insert(next);
        if number == next {
            self.kinds.push(kind);
        }
        number
    }

    /// Whether fact `number` holds for `args`, worked out once per
    /// evaluation.
    fn holds<'v>(&self, number: u32, args: &'v Value, memo: &mut Memo<'v, '_>) -> bool {
        if let Some(known) = memo.facts().get(number) {
            return known;
        }
        let holds = match self.kinds.get(number as usize) {
            Some(FactKind::Present(arg)) => memo.argument(arg, args).is_some(),
            Some(FactKind::GroupHit { arg, group }) => {
                let scans = memo.scans();
                some_string(memo.argument(arg, args), |text| scans.any(*group, text))
            }
            Some(FactKind::Has { arg, needle }) => {
                some_string(memo.argument(arg, args), |text| has(text, needle, false, Place::Anywhere))
            }
            // Not a number of this book: assume it holds (never skip a rule).
            None => true,
        };
        memo.facts().set(number, holds);
        holds
    }
}

/// Whether `value` is a string for which `test` holds, or an array with one
/// among its items.
pub(crate) fn some_string<'v>(value: Option<&'v Value>, mut test: impl FnMut(&'v str) -> bool) -> bool {
    match value {
        Some(Value::String(text)) => test(text),
        Some(Value::Array(items)) => items.iter().any(|item| item.as_str().is_some_and(&mut test)),
        _ => false,
    }
}

/// Two bits per fact of one evaluation: whether it was worked out, and
/// whether it holds. Inline for the first 256 facts.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    known: SmallVec<[u64; 4]>,
    holds: SmallVec<[u64; 4]>,
}

impl Facts {
    /// What fact `number` was found to be, if it was.
    fn get(&self, number: u32) -> Option<bool> {
        let (word, bit) = ((number / 64) as usize, 1u64 << (number % 64));
        let known = self.known.get(word).is_some_and(|w| w & bit != 0);
        known.then(|| self.holds.get(word).is_some_and(|w| w & bit != 0))
    }

    fn set(&mut self, number: u32, holds: bool) {
        let (word, bit) = ((number / 64) as usize, 1u64 << (number % 64));
        if self.known.len() <= word {
            self.known.resize(word + 1, 0);
            self.holds.resize(word + 1, 0);
        }
        if let (Some(known), Some(value)) = (self.known.get_mut(word), self.holds.get_mut(word)) {
            *known |= bit;
            if holds {
                *value |= bit;
            }
        }
    }
}

impl Trigger {
    /// The trigger of `cond`, its facts numbered in `book`; `None` when it
    /// has none (it may hold for any call, or would need too many clauses).
    pub(crate) fn of(cond: &Cond, scans: &Scans, book: &mut FactBook) -> Option<Trigger> {
        let clauses = clauses(cond, scans, book)?;
        Some(Trigger { clauses: clauses.into_iter().collect() })
    }

    /// Whether the condition may hold for `args`: `false` only when it
    /// cannot.
    pub(crate) fn may_hold<'v>(&self, book: &FactBook, args: &'v Value, memo: &mut Memo<'v, '_>) -> bool {
        self.clauses.iter().any(|clause| match clause {
            Clause::Present { fact, .. } | Clause::Alone { fact, .. } => book.holds(*fact, args, memo),
            Clause::Needle { group, arg, needle, member } => {
                book.holds(*group, args, memo)
                    && some_string(memo.argument(arg, args), |text| contains(text, needle, false, Some(*member), memo))
            }
        })
    }

    /// What each clause is filed under.
    pub(crate) fn keys(&self) -> impl Iterator<Item = Key<'_>> {
        self.clauses.iter().map(|clause| match clause {
            Clause::Present { arg, .. } => Key::Present(arg),
            Clause::Needle { arg, member, .. } => Key::Needle(arg, *member),
            Clause::Alone { arg, needle, .. } => Key::Alone(arg, needle),
        })
    }
}

/// The clauses of `cond` (see the module's rules); `None`: no trigger.
fn clauses(cond: &Cond, scans: &Scans, book: &mut FactBook) -> Option<Vec<Clause>> {
    match cond {
        Cond::Not(_) => None,
        Cond::All(parts) => parts.iter().filter_map(|part| clauses(part, scans, book)).min_by_key(Vec::len),
        Cond::Any(parts) => {
            let mut union: Vec<Clause> = Vec::new();
            for part in parts {
                for clause in clauses(part, scans, book)? {
                    if !union.iter().any(|known| known.same(&clause)) {
                        union.push(clause);
                    }
                }
                if union.len() > MOST_CLAUSES {
                    return None;
                }
            }
            Some(union)
        }
        Cond::Test { arg, test, .. } => match test {
            Test::Exists(false) | Test::NotContains { .. } => None,
            Test::Contains { needle, ignore_case: false, member } => Some(vec![match member {
                Some(member) if scans.compiled(member.group) => Clause::Needle {
                    group: book.number(FactKind::GroupHit { arg: arg.clone(), group: member.group }),
                    arg: arg.clone(),
                    needle: needle.clone(),
                    member: *member,
                },
                _ => Clause::Alone {
                    fact: book.number(FactKind::Has { arg: arg.clone(), needle: needle.clone() }),
                    arg: arg.clone(),
                    needle: needle.clone(),
                },
            }]),
            _ => Some(vec![Clause::Present { fact: book.number(FactKind::Present(arg.clone())), arg: arg.clone() }]),
        },
    }
}

impl Clause {
    /// Whether two clauses are the same (so a union lists it once).
    fn same(&self, other: &Clause) -> bool {
        match (self, other) {
            (Clause::Present { fact: a, .. }, Clause::Present { fact: b, .. })
            | (Clause::Alone { fact: a, .. }, Clause::Alone { fact: b, .. }) => a == b,
            (Clause::Needle { group: a, member: x, .. }, Clause::Needle { group: b, member: y, .. }) => {
                a == b && x == y
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::CondCompiler;
    use crate::scan::Memo;
    use serde_json::json;
    use warden_config::{Condition, Policy};

    fn compile(yaml: &str) -> (Cond, Scans) {
        let policy = Policy::default();
        let mut compiler = CondCompiler::new(&policy);
        let condition: Condition = serde_saphyr::from_str(yaml).unwrap();
        let mut problems = Vec::new();
        let cond = compiler.compile(&condition, "test", &mut problems).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        (cond, compiler.scans())
    }

    fn trigger(cond: &Cond, scans: &Scans) -> Option<(Trigger, FactBook)> {
        let mut book = FactBook::default();
        Trigger::of(cond, scans, &mut book).map(|trigger| (trigger, book))
    }

    /// Whenever the condition holds, the trigger does (on calls chosen to
    /// reach every kind of fact, absent, null, wrong types and arrays).
    #[test]
    fn a_trigger_holds_whenever_its_condition_does() {
        let conditions = [
            "{arg: text, contains: bad}",
            "{arg: text, contains: bad, some: true}",
            "{arg: text, contains: bad, each: true}",
            "{arg: text, contains: Bad, ignoreCase: true}",
            "{any: [{arg: text, contains: a}, {arg: n, gt: 3}]}",
            "{any: [{arg: text, contains: a}, {arg: text, contains: b}, {arg: text, contains: c}]}",
            "{any: [{arg: text, contains: bad, some: true}, {arg: text, contains: x, each: true}, {arg: n, equals: 1}]}",
            "{all: [{arg: text, contains: bad}, {arg: text, contains: b}]}",
            "{all: [{arg: text, contains: a}, {arg: n, gt: 3}]}",
            "{all: [{not: {arg: x, exists: true}}, {arg: n, lt: 3}]}",
            "{any: [{arg: text, notContains: a}, {arg: n, gt: 3}]}",
            "{arg: x, exists: false}",
            "{arg: a.b, equals: 1}",
            "{arg: q, sql: {selectWithoutLimit: true}}",
            "{arg: cmd, regex: '^rm'}",
        ];
        let calls = [
            json!({}),
            json!({"text": null, "n": null}),
            json!({"text": "a bad b", "n": 4}),
            json!({"text": "BAD"}),
            json!({"text": ["x", "bad"], "n": 1}),
            json!({"text": ["bad", "bad"]}),
            json!({"text": [], "n": "5"}),
            json!({"text": 7, "x": 1}),
            json!({"text": {"bad": "bad"}}),
            json!({"a": {"b": 1}}),
            json!({"a.b": 1}),
            json!({"q": "SELECT * FROM t"}),
            json!({"q": 1}),
            json!({"cmd": "rm -rf /"}),
            json!({"text": "c", "n": 2}),
        ];
        for yaml in conditions {
            let (cond, scans) = compile(yaml);
            let Some((trigger, book)) = trigger(&cond, &scans) else { continue };
            for args in &calls {
                let mut memo = Memo::new(&scans);
                let holds = cond.holds(args, &mut memo);
                let mut fresh = Memo::new(&scans);
                let may = trigger.may_hold(&book, args, &mut fresh);
                assert!(may || !holds, "{yaml} holds for {args} but its trigger says it cannot");
                // Asked again, the remembered facts answer the same.
                assert_eq!(trigger.may_hold(&book, args, &mut fresh), may, "{yaml} on {args}");
            }
        }
    }

    #[test]
    fn conditions_that_hold_on_absent_arguments_have_no_trigger() {
        for yaml in [
            "{arg: x, exists: false}",
            "{arg: x, notContains: a}",
            "{not: {arg: x, equals: 1}}",
            "{any: [{arg: x, equals: 1}, {not: {arg: y, equals: 1}}]}",
        ] {
            let (cond, scans) = compile(yaml);
            assert!(trigger(&cond, &scans).is_none(), "{yaml}");
        }
        // `all` takes the part that has one.
        let (cond, scans) = compile("{all: [{arg: x, exists: false}, {arg: y, gt: 1}]}");
        assert!(trigger(&cond, &scans).is_some());
    }

    #[test]
    fn a_trigger_is_false_for_what_no_part_can_match() {
        let (cond, scans) = compile("{any: [{arg: text, contains: forbidden}, {arg: n, gt: 3}]}");
        let (trigger, book) = trigger(&cond, &scans).unwrap();
        let may = |args: Value| trigger.may_hold(&book, &args, &mut Memo::new(&scans));
        assert!(!may(json!({"text": "hello"})));
        assert!(may(json!({"text": "hello", "n": 1})), "n is present");
        assert!(may(json!({"text": "a forbidden word"})));
    }
}
