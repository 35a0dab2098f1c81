//! Conditions on argument values, compiled once and tested per call.
//!
//! A condition is a combination (`all`, `any`, `not`) or one test on one
//! argument (`arg`: a name, or a dotted path into objects). A value of the
//! wrong JSON type never matches a test (`notContains` holds for it) and
//! never crashes; `null` counts as absent. An argument tested by `sql` that
//! is present but not a string cannot be analysed and matches, like SQL that
//! does not parse: suspicious, never safe.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use crate::fold::{Place, has};
use crate::scan::{GroupKind, Member, Memo, Scans, ScansBuilder};
use serde_json::Value;
use warden_config::{Condition, Policy, SqlCondition};
use warden_sql::{Dialect, SqlFacts, StatementKind};

/// Compiled-program size limit of one regular expression.
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled condition.
#[derive(Debug, Clone)]
pub(crate) enum Cond {
    /// Every one holds.
    All(Vec<Cond>),
    /// At least one holds.
    Any(Vec<Cond>),
    /// It does not hold.
    Not(Box<Cond>),
    /// A test on one argument.
    Test {
        /// The argument.
        arg: ArgPath,
        /// The test.
        test: Test,
        /// How an array argument is tested.
        items: Items,
    },
}

/// How a test treats an array argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Items {
    /// As a value (a string test does not hold for an array).
    Whole,
    /// It must have items, and the test must hold for each (`each`).
    Each,
    /// The test must hold for at least one item (`some`).
    Some,
}

/// Where an argument is: its name, or a dotted path into objects.
#[derive(Debug, Clone)]
pub(crate) struct ArgPath {
    /// As written.
    full: String,
    /// Split at dots.
    parts: Vec<String>,
    /// The same number for the same path anywhere in the policy, so one
    /// evaluation looks each path up once (see [`Memo::argument`]).
    pub(crate) slot: u32,
}

impl ArgPath {
    /// The path `text` (a key with dots is tried whole first), in `slot`.
    pub(crate) fn new(text: &str, slot: u32) -> ArgPath {
        ArgPath { full: text.to_owned(), parts: text.split('.').map(str::to_owned).collect(), slot }
    }

    /// The value at this path in `args`; `None` when absent or `null`.
    pub(crate) fn lookup<'v>(&self, args: &'v Value) -> Option<&'v Value> {
        let found = match args.get(&self.full) {
            Some(value) => Some(value),
            None if self.parts.len() > 1 => {
                self.parts.iter().try_fold(args, |value, part| value.as_object().and_then(|o| o.get(part)))
            }
            None => None,
        };
        found.filter(|value| !value.is_null())
    }
}

/// One test on one value.
#[derive(Debug, Clone)]
pub(crate) enum Test {
    Exists(bool),
    Equals { value: Value, ignore_case: bool },
    Contains { needle: String, ignore_case: bool, member: Option<Member> },
    NotContains { needle: String, ignore_case: bool, member: Option<Member> },
    StartsWith { needle: String, ignore_case: bool },
    EndsWith { needle: String, ignore_case: bool },
    Regex { regex: Regex, member: Option<Member> },
    Gt(f64),
    Ge(f64),
    Lt(f64),
    Le(f64),
    In { values: Vec<Value>, ignore_case: bool },
    InList { set: Arc<HashSet<String>>, ignore_case: bool },
    Sql(SqlTest),
}

/// The facts an `sql` test asks about.
#[derive(Debug, Clone)]
pub(crate) struct SqlTest {
    dialect: Dialect,
    kinds: Vec<StatementKind>,
    select_without_limit: bool,
    update_without_where: bool,
    delete_without_where: bool,
    multiple_statements: bool,
}

impl SqlTest {
    fn holds(&self, facts: Option<&SqlFacts>) -> bool {
        let Some(facts) = facts else {
            return true; // does not parse: suspicious
        };
        (self.select_without_limit && facts.select_without_limit())
            || (self.update_without_where && facts.update_without_where())
            || (self.delete_without_where && facts.delete_without_where())
            || (self.multiple_statements && facts.multiple_statements())
            || self.kinds.iter().any(|&kind| facts.has_kind(kind))
    }
}

impl Cond {
    /// Whether the condition holds for `args` (the call's arguments object).
    pub(crate) fn holds<'v>(&self, args: &'v Value, memo: &mut Memo<'v, '_>) -> bool {
        match self {
            Cond::All(all) => all.iter().all(|c| c.holds(args, memo)),
            Cond::Any(any) => any.iter().any(|c| c.holds(args, memo)),
            Cond::Not(not) => !not.holds(args, memo),
            Cond::Test { arg, test, items: how } => match (memo.argument(arg, args), how) {
                (Some(Value::Array(items)), Items::Each) => {
                    !items.is_empty() && items.iter().all(|item| test.holds(Some(item), memo))
                }
                (Some(Value::Array(items)), Items::Some) => items.iter().any(|item| test.holds(Some(item), memo)),
                (value, _) => test.holds(value, memo),
            },
        }
    }
}

impl Test {
    fn holds<'v>(&self, value: Option<&'v Value>, memo: &mut Memo<'v, '_>) -> bool {
        match self {
            Test::Exists(expected) => value.is_some() == *expected,
            Test::NotContains { needle, ignore_case, member } => match value.and_then(Value::as_str) {
                Some(s) => !contains(s, needle, *ignore_case, *member, memo),
                None => true,
            },
            Test::Sql(test) => match value {
                None => false,
                Some(Value::String(s)) => test.holds(memo.sql_facts(s, test.dialect)),
                Some(_) => true, // not a string: cannot be analysed, so suspicious
            },
            _ => value.is_some_and(|value| self.holds_on(value, memo)),
        }
    }

    /// The tests that need a present value.
    fn holds_on<'v>(&self, value: &'v Value, memo: &mut Memo<'v, '_>) -> bool {
        match self {
            Test::Equals { value: expected, ignore_case } => json_eq(value, expected, *ignore_case),
            Test::Contains { needle, ignore_case, member } => {
                value.as_str().is_some_and(|s| contains(s, needle, *ignore_case, *member, memo))
            }
            Test::StartsWith { needle, ignore_case } => {
                value.as_str().is_some_and(|s| has(s, needle, *ignore_case, Place::Start))
            }
            Test::EndsWith { needle, ignore_case } => {
                value.as_str().is_some_and(|s| has(s, needle, *ignore_case, Place::End))
            }
            Test::Regex { regex, member } => value.as_str().is_some_and(|s| match member {
                Some(member) => memo.matches(*member, s, || regex.is_match(s)),
                None => regex.is_match(s),
            }),
            Test::Gt(limit) => value.as_f64().is_some_and(|n| n > *limit),
            Test::Ge(limit) => value.as_f64().is_some_and(|n| n >= *limit),
            Test::Lt(limit) => value.as_f64().is_some_and(|n| n < *limit),
            Test::Le(limit) => value.as_f64().is_some_and(|n| n <= *limit),
            Test::In { values, ignore_case } => values.iter().any(|v| json_eq(value, v, *ignore_case)),
            Test::InList { set, ignore_case } => {
                value.as_str().is_some_and(|s| set.contains(fold(s, *ignore_case).as_ref()))
            }
            Test::Exists(_) | Test::NotContains { .. } | Test::Sql(_) => false,
        }
    }
}

/// Whether `text` has `needle` anywhere (see [`has`]), by its group's scan
/// when it has one (see [`crate::scan`]).
fn contains<'v>(
    text: &'v str,
    needle: &str,
    ignore_case: bool,
    member: Option<Member>,
    memo: &mut Memo<'v, '_>,
) -> bool {
    match member {
        Some(member) => memo.matches(member, text, || has(text, needle, ignore_case, Place::Anywhere)),
        None => has(text, needle, ignore_case, Place::Anywhere),
    }
}

/// `text`, lower-cased when `ignore_case` (copied only when that changes it:
/// ASCII text without capitals is its own lower case).
fn fold(text: &str, ignore_case: bool) -> std::borrow::Cow<'_, str> {
    if ignore_case && (!text.is_ascii() || text.bytes().any(|b| b.is_ascii_uppercase())) {
        text.to_lowercase().into()
    } else {
        text.into()
    }
}

/// JSON equality: numbers by value (`1` equals `1.0`), strings optionally
/// without regard to case (also inside arrays and objects).
pub(crate) fn json_eq(a: &Value, b: &Value, ignore_case: bool) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => {
            if ignore_case {
                x.chars().flat_map(char::to_lowercase).eq(y.chars().flat_map(char::to_lowercase))
            } else {
                x == y
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
                p == q
            } else if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
                p == q
            } else {
                matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q, ignore_case))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w, ignore_case)))
        }
        _ => a == b,
    }
}

/// Compiles conditions, sharing regexes and lists between them.
pub(crate) struct CondCompiler<'c> {
    policy: &'c Policy,
    regexes: HashMap<(String, bool), Regex>,
    sets: HashMap<(String, bool), Arc<HashSet<String>>>,
    /// The tests that can run together, per argument (see [`crate::scan`]).
    scans: ScansBuilder,
    /// Argument path → its slot.
    slots: HashMap<String, u32>,
}

impl<'c> CondCompiler<'c> {
    /// A compiler resolving `inList` against `policy.lists`.
    pub(crate) fn new(policy: &'c Policy) -> CondCompiler<'c> {
        CondCompiler {
            policy,
            regexes: HashMap::new(),
            sets: HashMap::new(),
            scans: ScansBuilder::default(),
            slots: HashMap::new(),
        }
    }

    /// The groups of the tests compiled so far, compiled together.
    pub(crate) fn scans(self) -> Scans {
        self.scans.build()
    }

    /// `arg` as a path, in the slot of every other test on it.
    fn path(&mut self, arg: &str) -> ArgPath {
        let next = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
        let slot = *self.slots.entry(arg.to_owned()).or_insert(next);
        ArgPath::new(arg, slot)
    }

    /// Compiles `cond`; problems are reported with `at` (e.g. `rule 'x': if.args`)
    /// and `None` is returned if there was any.
    pub(crate) fn compile(&mut self, cond: &Condition, at: &str, problems: &mut Vec<String>) -> Option<Cond> {
        let before = problems.len();
        let compiled = self.compile_inner(cond, at, problems);
        if problems.len() == before { compiled } else { None }
    }

    fn compile_inner(&mut self, cond: &Condition, at: &str, problems: &mut Vec<String>) -> Option<Cond> {
        let tests = test_names(cond);
        let combinators: Vec<&str> =
            [("all", cond.all.is_some()), ("any", cond.any.is_some()), ("not", cond.not.is_some())]
                .into_iter()
                .filter_map(|(name, set)| set.then_some(name))
                .collect();
        let mut fail = |message: String| {
            problems.push(format!("{at}: {message}"));
            None
        };
        match (combinators.as_slice(), &cond.arg) {
            ([], None) => fail("a condition needs `arg` and one test, or one of all/any/not".into()),
            ([_, _, ..], _) => {
                fail(format!("a condition may have only one of all/any/not, not {}", combinators.join(" and ")))
            }
            ([one], Some(_)) => fail(format!("`{one}` cannot be combined with `arg`")),
            ([one], None) => {
                if !tests.is_empty() || cond.ignore_case || cond.each || cond.some {
                    let mut extra = tests.clone();
                    if cond.ignore_case {
                        extra.push("ignoreCase");
                    }
                    if cond.each {
                        extra.push("each");
                    }
                    if cond.some {
                        extra.push("some");
                    }
                    return fail(format!("`{one}` cannot be combined with {}", extra.join(", ")));
                }
                match (&cond.all, &cond.any, &cond.not) {
                    (Some(list), _, _) | (_, Some(list), _) => {
                        if list.is_empty() {
                            return fail(format!("`{one}` is empty"));
                        }
                        let items: Vec<Option<Cond>> = list
                            .iter()
                            .enumerate()
                            .map(|(i, c)| self.compile_inner(c, &format!("{at}.{one}[{i}]"), problems))
                            .collect();
                        let items: Option<Vec<Cond>> = items.into_iter().collect();
                        let items = items?;
                        Some(if *one == "all" { Cond::All(items) } else { Cond::Any(items) })
                    }
                    (_, _, Some(inner)) => {
                        self.compile_inner(inner, &format!("{at}.not"), problems).map(|c| Cond::Not(Box::new(c)))
                    }
                    _ => None,
                }
            }
            ([], Some(arg)) => {
                if arg.is_empty() || arg.split('.').any(str::is_empty) {
                    return fail(format!("`arg` {arg:?} is not an argument name or dotted path"));
                }
                match tests.as_slice() {
                    [] => fail(format!(
                        "the condition on {arg:?} has no test (exists, equals, contains, notContains, startsWith, endsWith, regex, gt, ge, lt, le, in, inList or sql)"
                    )),
                    [only] if (cond.each || cond.some) && *only == "exists" => {
                        fail("`each` and `some` do not apply to `exists`".into())
                    }
                    [_] if cond.each && cond.some => fail("`each` and `some` cannot be combined".into()),
                    [_] => self.test(cond, arg, at, problems).map(|test| Cond::Test {
                        arg: self.path(arg),
                        test,
                        items: if cond.each {
                            Items::Each
                        } else if cond.some {
                            Items::Some
                        } else {
                            Items::Whole
                        },
                    }),
                    _ => fail(format!(
                        "the condition on {arg:?} has {} tests ({}); use `all` to combine them",
                        tests.len(),
                        tests.join(", ")
                    )),
                }
            }
        }
    }

    /// The one test of `cond` (its count was checked).
    fn test(&mut self, cond: &Condition, arg: &str, at: &str, problems: &mut Vec<String>) -> Option<Test> {
        let ic = cond.ignore_case;
        let mut fail = |message: String| {
            problems.push(format!("{at}: {message}"));
            None
        };
        let lower = |s: &str| if ic { s.to_lowercase() } else { s.to_owned() };
        let no_case = |name: &str| format!("ignoreCase does not apply to `{name}`");
        if let Some(expected) = cond.exists {
            return if ic { fail(no_case("exists")) } else { Some(Test::Exists(expected)) };
        }
        if let Some(value) = &cond.equals {
            return Some(Test::Equals { value: value.clone(), ignore_case: ic });
        }
        // Case-insensitive needles are folded by Unicode rules, which the
        // automaton's ASCII folding is not: they are tested alone.
        let mut needle_member = |needle: &str| {
            (!ic && !needle.is_empty()).then(|| self.scans.member(arg, GroupKind::Needles, needle)).flatten()
        };
        if let Some(s) = &cond.contains {
            return Some(Test::Contains { needle: lower(s), ignore_case: ic, member: needle_member(s) });
        }
        if let Some(s) = &cond.not_contains {
            return Some(Test::NotContains { needle: lower(s), ignore_case: ic, member: needle_member(s) });
        }
        if let Some(s) = &cond.starts_with {
            return Some(Test::StartsWith { needle: lower(s), ignore_case: ic });
        }
        if let Some(s) = &cond.ends_with {
            return Some(Test::EndsWith { needle: lower(s), ignore_case: ic });
        }
        if let Some(pattern) = &cond.regex {
            let key = (pattern.clone(), ic);
            let member = self.scans.member(arg, GroupKind::Regexes { ignore_case: ic }, pattern);
            if let Some(regex) = self.regexes.get(&key) {
                return Some(Test::Regex { regex: regex.clone(), member });
            }
            return match RegexBuilder::new(pattern)
                .case_insensitive(ic)
                .size_limit(REGEX_SIZE_LIMIT)
                .dfa_size_limit(REGEX_SIZE_LIMIT)
                .build()
            {
                Ok(regex) => {
                    self.regexes.insert(key, regex.clone());
                    Some(Test::Regex { regex, member })
                }
                Err(err) => fail(format!("invalid regex {pattern:?}: {}", one_line(&err.to_string()))),
            };
        }
        for (name, limit, make) in [
            ("gt", cond.gt, Test::Gt as fn(f64) -> Test),
            ("ge", cond.ge, Test::Ge),
            ("lt", cond.lt, Test::Lt),
            ("le", cond.le, Test::Le),
        ] {
            if let Some(limit) = limit {
                if ic {
                    return fail(no_case(name));
                }
                if !limit.is_finite() {
                    return fail(format!("`{name}` must be a finite number"));
                }
                return Some(make(limit));
            }
        }
        if let Some(values) = &cond.one_of {
            if values.is_empty() {
                return fail("`in` is empty".into());
            }
            return Some(Test::In { values: values.clone(), ignore_case: ic });
        }
        if let Some(name) = &cond.in_list {
            let Some(list) = self.policy.lists.get(name) else {
                let known: Vec<&str> = self.policy.lists.keys().map(String::as_str).collect();
                return fail(format!(
                    "inList names {name:?}, which is not in policy.lists ({})",
                    if known.is_empty() { "none defined".into() } else { known.join(", ") }
                ));
            };
            let set = self
                .sets
                .entry((name.clone(), ic))
                .or_insert_with(|| Arc::new(list.iter().map(|s| lower(s)).collect()))
                .clone();
            return Some(Test::InList { set, ignore_case: ic });
        }
        if let Some(sql) = &cond.sql {
            if ic {
                return fail(no_case("sql"));
            }
            return match sql_test(sql) {
                Ok(test) => Some(Test::Sql(test)),
                Err(why) => fail(why),
            };
        }
        fail("no test".into())
    }
}

fn sql_test(sql: &SqlCondition) -> Result<SqlTest, String> {
    let dialect = match &sql.dialect {
        Some(name) => name.parse::<Dialect>().map_err(|err| format!("sql: {err}"))?,
        None => Dialect::default(),
    };
    let mut kinds = Vec::new();
    let mut unknown = Vec::new();
    for name in &sql.kinds {
        match name.to_ascii_uppercase().parse::<StatementKind>() {
            Ok(kind) => kinds.push(kind),
            Err(err) => unknown.push(err.to_string()),
        }
    }
    if !unknown.is_empty() {
        return Err(format!("sql: {}", unknown.join("; ")));
    }
    let test = SqlTest {
        dialect,
        kinds,
        select_without_limit: sql.select_without_limit,
        update_without_where: sql.update_without_where,
        delete_without_where: sql.delete_without_where,
        multiple_statements: sql.multiple_statements,
    };
    if test.kinds.is_empty()
        && !(test.select_without_limit
            || test.update_without_where
            || test.delete_without_where
            || test.multiple_statements)
    {
        return Err("sql names no fact (selectWithoutLimit, updateWithoutWhere, deleteWithoutWhere, multipleStatements) and no kinds".into());
    }
    Ok(test)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names of the tests set in `cond`.
fn test_names(cond: &Condition) -> Vec<&'static str> {
    [
        ("exists", cond.exists.is_some()),
        ("equals", cond.equals.is_some()),
        ("contains", cond.contains.is_some()),
        ("notContains", cond.not_contains.is_some()),
        ("startsWith", cond.starts_with.is_some()),
        ("endsWith", cond.ends_with.is_some()),
        ("regex", cond.regex.is_some()),
        ("gt", cond.gt.is_some()),
        ("ge", cond.ge.is_some()),
        ("lt", cond.lt.is_some()),
        ("le", cond.le.is_some()),
        ("in", cond.one_of.is_some()),
        ("inList", cond.in_list.is_some()),
        ("sql", cond.sql.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_equality_compares_numbers_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0), false));
        assert!(json_eq(&json!(-3), &json!(-3.0), false));
        assert!(!json_eq(&json!(u64::MAX), &json!(u64::MAX - 1), false));
        assert!(!json_eq(&json!(1), &json!("1"), false));
        assert!(json_eq(&json!({"a": ["X", 2]}), &json!({"a": ["x", 2.0]}), true));
        assert!(!json_eq(&json!({"a": ["X"]}), &json!({"a": ["x"]}), false));
        assert!(!json_eq(&json!({"a": 1}), &json!({"a": 1, "b": 2}), false));
        assert!(json_eq(&json!(null), &json!(null), false));
    }

    #[test]
    fn argument_paths() {
        let args = json!({"a": {"b": {"c": 1}}, "x.y": 2, "n": null, "arr": [{"b": 1}]});
        assert_eq!(ArgPath::new("a.b.c", 0).lookup(&args), Some(&json!(1)));
        assert_eq!(ArgPath::new("x.y", 0).lookup(&args), Some(&json!(2)));
        assert_eq!(ArgPath::new("a.b", 0).lookup(&args), Some(&json!({"c": 1})));
        assert_eq!(ArgPath::new("a.z.c", 0).lookup(&args), None);
        assert_eq!(ArgPath::new("a.b.c.d", 0).lookup(&args), None);
        assert_eq!(ArgPath::new("n", 0).lookup(&args), None);
        assert_eq!(ArgPath::new("arr.0.b", 0).lookup(&args), None);
        assert_eq!(ArgPath::new("a", 0).lookup(&json!("not an object")), None);
    }

    #[test]
    fn regexes_are_compiled_once() {
        let policy = Policy::default();
        let mut compiler = CondCompiler::new(&policy);
        let cond = Condition { arg: Some("a".into()), regex: Some("^x+$".into()), ..Condition::default() };
        let mut problems = Vec::new();
        let first = compiler.compile(&cond, "r", &mut problems);
        let second = compiler.compile(&cond, "r", &mut problems);
        assert!(problems.is_empty() && first.is_some() && second.is_some());
        assert_eq!(compiler.regexes.len(), 1);
    }

    #[test]
    fn analyses_are_shared_within_an_evaluation() {
        let args = json!({"q": "SELECT * FROM t"});
        let test = SqlTest {
            dialect: Dialect::Generic,
            kinds: vec![],
            select_without_limit: true,
            update_without_where: false,
            delete_without_where: false,
            multiple_statements: false,
        };
        let cond = Cond::Test { arg: ArgPath::new("q", 0), test: Test::Sql(test), items: Items::Whole };
        let scans = Scans::default();
        let mut memo = Memo::new(&scans);
        assert!(cond.holds(&args, &mut memo));
        assert!(cond.holds(&args, &mut memo));
        assert_eq!(memo.sql_analyses(), 1);
    }
}
