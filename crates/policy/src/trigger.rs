//! What must be true of a call for a rule's `args` to hold.
//!
//! A policy often has many rules on one tool whose conditions do not hold
//! for most calls: fifty `contains` needles on `text` that a call's text has
//! none of, a limit on `amount` that the call does not pass. Walking each
//! condition's tree costs tens of nanoseconds a rule. A [`Trigger`] is a
//! short list of facts about the call, at least one of which is true
//! whenever the condition holds:
//! - an argument is present;
//! - some string of an argument has a needle of a compiled group (the
//!   group's automaton answers for all its needles in one search, see
//!   [`crate::scan`]);
//! - some string of an argument has a needle tested alone on it.
//!
//! Rules are filed under the facts of their triggers (see [`crate::sieve`]),
//! so the facts of a call are worked out once per list, and a rule whose
//! trigger is false is never looked at.
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

use smallvec::SmallVec;

use crate::condition::{ArgPath, Cond, Test};
use crate::scan::{Member, Scans};

/// The most clauses a trigger lists; a condition that would need more has
/// none (it is tested whole each time).
const MOST_CLAUSES: usize = 8;

/// Clauses at least one of which holds whenever a condition does.
#[derive(Debug, Clone)]
pub(crate) struct Trigger {
    clauses: SmallVec<[Clause; 2]>,
}

/// One fact of a trigger.
#[derive(Debug, Clone)]
pub(crate) enum Clause {
    /// The argument is present (not absent, not `null`).
    Present(ArgPath),
    /// Some string of the argument has this needle of a compiled group.
    Needle(ArgPath, Member),
    /// Some string of the argument has this needle, tested alone.
    Alone(ArgPath, String),
}

impl Clause {
    /// The argument the clause is about.
    pub(crate) fn arg(&self) -> &ArgPath {
        match self {
            Clause::Present(arg) | Clause::Needle(arg, _) | Clause::Alone(arg, _) => arg,
        }
    }

    /// Whether two clauses are the same (so a union lists it once).
    fn same(&self, other: &Clause) -> bool {
        match (self, other) {
            (Clause::Present(a), Clause::Present(b)) => a.slot == b.slot,
            (Clause::Needle(a, x), Clause::Needle(b, y)) => a.slot == b.slot && x == y,
            (Clause::Alone(a, x), Clause::Alone(b, y)) => a.slot == b.slot && x == y,
            _ => false,
        }
    }
}

impl Trigger {
    /// The trigger of `cond` under the compiled groups `scans`; `None` when
    /// it has none (it may hold for any call, or would need too many
    /// clauses).
    pub(crate) fn of(cond: &Cond, scans: &Scans) -> Option<Trigger> {
        Some(Trigger { clauses: clauses(cond, scans)?.into_iter().collect() })
    }

    /// Its clauses, any one of which may hold.
    pub(crate) fn clauses(&self) -> &[Clause] {
        &self.clauses
    }
}

/// The clauses of `cond` (see the module's rules); `None`: no trigger.
fn clauses(cond: &Cond, scans: &Scans) -> Option<Vec<Clause>> {
    match cond {
        Cond::Not(_) => None,
        Cond::All(parts) => parts.iter().filter_map(|part| clauses(part, scans)).min_by_key(Vec::len),
        Cond::Any(parts) => {
            let mut union: Vec<Clause> = Vec::new();
            for part in parts {
                for clause in clauses(part, scans)? {
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
                Some(member) if scans.compiled(member.group) => Clause::Needle(arg.clone(), *member),
                _ => Clause::Alone(arg.clone(), needle.clone()),
            }]),
            _ => Some(vec![Clause::Present(arg.clone())]),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::condition::CondCompiler;
    use crate::scan::Memo;
    use crate::sieve::{Admitted, Sieve};
    use serde_json::{Value, json};
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

    /// A sieve holding `cond`'s rule alone, when it has a trigger.
    fn sieve(cond: &Cond, scans: &Scans) -> Option<Sieve> {
        let trigger = Trigger::of(cond, scans)?;
        let mut sieve = Sieve::default();
        sieve.file(0, &trigger);
        Some(sieve)
    }

    /// Whether the sieve admits its rule for `args`.
    fn admits(sieve: &Sieve, scans: &Scans, args: &Value) -> bool {
        let mut admitted = Admitted::new();
        sieve.admit(args, &mut Memo::new(scans), &mut admitted);
        admitted.contains(&0)
    }

    /// Whenever the condition holds, its trigger admits the rule (on calls
    /// chosen to reach every kind of fact, absent, null, wrong types and
    /// arrays).
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
            let Some(sieve) = sieve(&cond, &scans) else { continue };
            for args in &calls {
                let holds = cond.holds(args, &mut Memo::new(&scans));
                assert!(
                    admits(&sieve, &scans, args) || !holds,
                    "{yaml} holds for {args} but its trigger says it cannot"
                );
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
            assert!(Trigger::of(&cond, &scans).is_none(), "{yaml}");
        }
        // `all` takes the part that has one.
        let (cond, scans) = compile("{all: [{arg: x, exists: false}, {arg: y, gt: 1}]}");
        assert!(Trigger::of(&cond, &scans).is_some());
    }

    #[test]
    fn a_trigger_is_false_for_what_no_part_can_match() {
        // A needle alone on its argument, then two in a compiled group.
        for yaml in [
            "{any: [{arg: text, contains: forbidden}, {arg: n, gt: 3}]}",
            "{any: [{arg: text, contains: forbidden}, {arg: text, contains: other}, {arg: n, gt: 3}]}",
        ] {
            let (cond, scans) = compile(yaml);
            let sieve = sieve(&cond, &scans).unwrap();
            let may = |args: Value| admits(&sieve, &scans, &args);
            assert!(!may(json!({"text": "hello"})), "{yaml}");
            assert!(!may(json!({"text": ["hello", "there"], "m": 1})), "{yaml}");
            assert!(may(json!({"text": "hello", "n": 1})), "n is present: {yaml}");
            assert!(may(json!({"text": "a forbidden word"})), "{yaml}");
            assert!(may(json!({"text": ["x", "forbidden"]})), "an item has it: {yaml}");
        }
    }
}
