//! Every condition kind, on values of every JSON type.

mod common;

use common::{engine, problems};
use warden_policy::{Decision, PolicyEngine};

/// An engine denying calls to s/t where `cond` holds.
fn deny_when(cond: &str) -> PolicyEngine {
    engine(&format!(
        "policy:\n  lists: {{hosts: [Alpha.example, beta.example], empty: []}}\n  rules:\n    - name: r\n      if: {{args: {cond}}}\n      then: deny\n"
    ))
}

/// Whether `cond` holds for each of `args` (JSON objects).
fn holds(cond: &str, args: &str) -> bool {
    let engine = deny_when(cond);
    let evaluation = engine.evaluate("s", "t", Some(args));
    assert!(evaluation.rule == "r" || evaluation.rule == "default", "{evaluation:?}");
    evaluation.action == Decision::Deny
}

#[track_caller]
fn check(cond: &str, cases: &[(&str, bool)]) {
    let engine = deny_when(cond);
    for (args, expected) in cases {
        let evaluation = engine.evaluate("s", "t", Some(args));
        assert_eq!(evaluation.action == Decision::Deny, *expected, "{cond} on {args}: {:?}", evaluation.trace);
    }
}

/// Values of every JSON type for the argument `a`.
const EVERY_TYPE: [&str; 7] = [
    r#"{"a": 1}"#,
    r#"{"a": 1.5}"#,
    r#"{"a": true}"#,
    r#"{"a": [1, "x"]}"#,
    r#"{"a": {"b": 1}}"#,
    r#"{"a": null}"#,
    r#"{}"#,
];

#[test]
fn exists_and_null_counts_as_absent() {
    check(
        r#"{arg: a, exists: true}"#,
        &[(r#"{"a": ""}"#, true), (r#"{"a": 0}"#, true), (r#"{"a": null}"#, false), ("{}", false)],
    );
    check(r#"{arg: a, exists: false}"#, &[(r#"{"a": "x"}"#, false), (r#"{"a": null}"#, true), ("{}", true)]);
}

#[test]
fn equals_is_json_equality() {
    check(
        r#"{arg: a, equals: "rm"}"#,
        &[(r#"{"a": "rm"}"#, true), (r#"{"a": "RM"}"#, false), (r#"{"a": ["rm"]}"#, false), (r#"{"a": 1}"#, false)],
    );
    check(
        r#"{arg: a, equals: 1}"#,
        &[(r#"{"a": 1}"#, true), (r#"{"a": 1.0}"#, true), (r#"{"a": "1"}"#, false), (r#"{"a": true}"#, false)],
    );
    check(
        r#"{arg: a, equals: true}"#,
        &[(r#"{"a": true}"#, true), (r#"{"a": "true"}"#, false), (r#"{"a": 1}"#, false)],
    );
    check(
        r#"{arg: a, equals: {k: [1, null]}}"#,
        &[
            (r#"{"a": {"k": [1, null]}}"#, true),
            (r#"{"a": {"k": [1]}}"#, false),
            (r#"{"a": {"k": [1, null], "x": 0}}"#, false),
        ],
    );
    check(
        r#"{arg: a, equals: "Drop", ignoreCase: true}"#,
        &[(r#"{"a": "dRoP"}"#, true), (r#"{"a": "drops"}"#, false), (r#"{"a": 5}"#, false)],
    );
    check(
        r#"{arg: a, equals: 9007199254740993}"#,
        &[(r#"{"a": 9007199254740993}"#, true), (r#"{"a": 9007199254740992}"#, false)],
    );
}

#[test]
fn string_tests_never_match_other_types() {
    for cond in [
        r#"{arg: a, contains: "1"}"#,
        r#"{arg: a, startsWith: "1"}"#,
        r#"{arg: a, endsWith: "1"}"#,
        r#"{arg: a, regex: "."}"#,
        r#"{arg: a, inList: hosts}"#,
    ] {
        let engine = deny_when(cond);
        for args in EVERY_TYPE {
            assert_eq!(engine.evaluate("s", "t", Some(args)).action, Decision::Allow, "{cond} on {args}");
        }
    }
    // notContains holds for what is not a string.
    let engine = deny_when(r#"{arg: a, notContains: "x"}"#);
    for args in EVERY_TYPE {
        assert_eq!(engine.evaluate("s", "t", Some(args)).action, Decision::Deny, "notContains on {args}");
    }
}

#[test]
fn contains_starts_ends_with() {
    check(
        r#"{arg: a, contains: "DROP"}"#,
        &[(r#"{"a": "x DROP y"}"#, true), (r#"{"a": "x drop y"}"#, false), (r#"{"a": ""}"#, false)],
    );
    check(
        r#"{arg: a, contains: "DROP", ignoreCase: true}"#,
        &[(r#"{"a": "x drop y"}"#, true), (r#"{"a": "dro p"}"#, false)],
    );
    check(
        r#"{arg: a, notContains: "LIMIT", ignoreCase: true}"#,
        &[(r#"{"a": "select 1 limit 5"}"#, false), (r#"{"a": "select 1"}"#, true)],
    );
    check(r#"{arg: a, startsWith: "/etc"}"#, &[(r#"{"a": "/etc/passwd"}"#, true), (r#"{"a": "/home/etc"}"#, false)]);
    check(r#"{arg: a, startsWith: "HTTP:", ignoreCase: true}"#, &[(r#"{"a": "http://x"}"#, true)]);
    check(r#"{arg: a, endsWith: ".pem"}"#, &[(r#"{"a": "k.pem"}"#, true), (r#"{"a": "k.PEM"}"#, false)]);
    check(r#"{arg: a, endsWith: ".pem", ignoreCase: true}"#, &[(r#"{"a": "k.PEM"}"#, true)]);
    // Unicode case folding.
    check(r#"{arg: a, contains: "ÉTÉ", ignoreCase: true}"#, &[(r#"{"a": "un été"}"#, true)]);
}

#[test]
fn regexes_match_and_ignore_case() {
    check(
        r#"{arg: a, regex: "^rm\\s+-rf"}"#,
        &[(r#"{"a": "rm -rf /"}"#, true), (r#"{"a": "RM -rf /"}"#, false), (r#"{"a": "echo rm -rf"}"#, false)],
    );
    check(r#"{arg: a, regex: "^rm\\s+-rf", ignoreCase: true}"#, &[(r#"{"a": "RM -RF /"}"#, true)]);
}

#[test]
fn numbers_only_compare_as_numbers() {
    let numeric = |cond: &str, yes: &[&str], no: &[&str]| {
        for v in yes {
            assert!(holds(cond, &format!(r#"{{"a": {v}}}"#)), "{cond} on {v}");
        }
        for v in no {
            assert!(!holds(cond, &format!(r#"{{"a": {v}}}"#)), "{cond} on {v}");
        }
    };
    numeric("{arg: a, gt: 100}", &["101", "100.5", "1e9"], &["100", "99", r#""1000""#, "true", "[1000]", "null"]);
    numeric("{arg: a, ge: 100}", &["100", "100.0"], &["99.99", r#""100""#]);
    numeric("{arg: a, lt: 0}", &["-1", "-0.5"], &["0", r#""-5""#, "false"]);
    numeric("{arg: a, le: 0}", &["0", "-3"], &["0.1", r#"{"x": -1}"#]);
    numeric("{arg: a, gt: -1.5}", &["-1", "18446744073709551615"], &["-2"]);
}

#[test]
fn in_and_in_list() {
    check(
        r#"{arg: a, in: [fast, "2", 3, true]}"#,
        &[
            (r#"{"a": "fast"}"#, true),
            (r#"{"a": 3}"#, true),
            (r#"{"a": 3.0}"#, true),
            (r#"{"a": "3"}"#, false),
            (r#"{"a": 2}"#, false),
            (r#"{"a": true}"#, true),
            (r#"{"a": "FAST"}"#, false),
        ],
    );
    check(r#"{arg: a, in: [fast], ignoreCase: true}"#, &[(r#"{"a": "FAST"}"#, true)]);
    check(
        r#"{arg: a, inList: hosts}"#,
        &[
            (r#"{"a": "beta.example"}"#, true),
            (r#"{"a": "alpha.example"}"#, false),
            (r#"{"a": "Alpha.example"}"#, true),
        ],
    );
    check(
        r#"{arg: a, inList: hosts, ignoreCase: true}"#,
        &[(r#"{"a": "ALPHA.EXAMPLE"}"#, true), (r#"{"a": "gamma"}"#, false)],
    );
    check(r#"{arg: a, inList: empty}"#, &[(r#"{"a": ""}"#, false)]);
}

#[test]
fn each_tests_every_item_of_an_array() {
    check(
        "{arg: h, inList: hosts, each: true}",
        &[
            (r#"{"h": ["Alpha.example", "beta.example"]}"#, true),
            (r#"{"h": ["Alpha.example", "gamma.example"]}"#, false),
            (r#"{"h": []}"#, false),
            (r#"{"h": "beta.example"}"#, true),
            (r#"{"h": ["beta.example", 1]}"#, false),
            (r#"{}"#, false),
        ],
    );
    // Without `each`, an array is one value, which inList never matches.
    check("{arg: h, inList: hosts}", &[(r#"{"h": ["beta.example"]}"#, false)]);
    check("{arg: h, regex: \"^b\", each: true}", &[(r#"{"h": ["b1", "b2"]}"#, true), (r#"{"h": ["b1", "a"]}"#, false)]);
    let problems = problems(
        "policy:\n  rules:\n    - {name: r, if: {args: {arg: h, exists: true, each: true}}, then: deny}\n    - {name: s, if: {args: {each: true, all: [{arg: h, exists: true}]}}, then: deny}\n",
    );
    let joined = problems.join("\n");
    assert!(joined.contains("`each` and `some` do not apply to `exists`"), "{joined}");
    assert!(joined.contains("`all` cannot be combined with each"), "{joined}");
}

#[test]
fn some_tests_whether_any_item_of_an_array_holds() {
    check(
        "{arg: paths, regex: '(^|/)\\.env$', some: true}",
        &[
            (r#"{"paths": ["/srv/a.txt", "/srv/.env"]}"#, true),
            (r#"{"paths": ["/srv/a.txt", "/srv/b.txt"]}"#, false),
            (r#"{"paths": []}"#, false),
            (r#"{"paths": "/srv/.env"}"#, true),
            (r#"{"paths": [1, "/srv/.env"]}"#, true),
            (r#"{}"#, false),
        ],
    );
    let problems = problems(
        "policy:\n  rules:\n    - {name: r, if: {args: {arg: h, regex: x, each: true, some: true}}, then: deny}\n    - {name: s, if: {args: {arg: h, exists: true, some: true}}, then: deny}\n",
    );
    let joined = problems.join("\n");
    assert!(joined.contains("`each` and `some` cannot be combined"), "{joined}");
    assert!(joined.contains("`each` and `some` do not apply to `exists`"), "{joined}");
}

#[test]
fn dotted_paths_reach_into_objects() {
    check(
        r#"{arg: opts.db.name, equals: prod}"#,
        &[
            (r#"{"opts": {"db": {"name": "prod"}}}"#, true),
            (r#"{"opts": {"db": {"name": "dev"}}}"#, false),
            (r#"{"opts": {"db": "prod"}}"#, false),
            (r#"{"opts": [{"db": {"name": "prod"}}]}"#, false),
            (r#"{"opts": 5}"#, false),
            (r#"{"opts.db.name": "prod"}"#, true),
        ],
    );
}

#[test]
fn combinations() {
    let all = r#"{all: [{arg: a, gt: 1}, {arg: b, equals: x}]}"#;
    check(all, &[(r#"{"a": 2, "b": "x"}"#, true), (r#"{"a": 2, "b": "y"}"#, false), (r#"{"b": "x"}"#, false)]);
    let any = r#"{any: [{arg: a, gt: 1}, {arg: b, equals: x}]}"#;
    check(any, &[(r#"{"a": 0, "b": "x"}"#, true), (r#"{"a": 2}"#, true), (r#"{"a": 0}"#, false)]);
    let not = r#"{not: {arg: a, in: [safe]}}"#;
    check(not, &[(r#"{"a": "safe"}"#, false), (r#"{"a": "other"}"#, true), ("{}", true)]);
    let nested =
        r#"{all: [{not: {any: [{arg: a, exists: false}, {arg: a, equals: ""}]}}, {arg: a, regex: "^[a-z]+$"}]}"#;
    check(nested, &[(r#"{"a": "abc"}"#, true), (r#"{"a": ""}"#, false), (r#"{"a": "ABC"}"#, false), ("{}", false)]);
}

#[test]
fn malformed_conditions_are_errors_naming_the_rule() {
    let bad = |cond: &str, needle: &str| {
        let problems = problems(&format!(
            "policy:\n  rules:\n    - name: bad-rule\n      if: {{args: {cond}}}\n      then: deny\n"
        ));
        assert!(problems.iter().any(|p| p.contains("rule 'bad-rule'") && p.contains(needle)), "{cond}: {problems:?}");
    };
    bad("{arg: a}", "no test");
    bad("{arg: a, contains: x, equals: y}", "2 tests");
    bad("{arg: a, gt: 1, lt: 5}", "use `all`");
    bad("{all: [{arg: a, exists: true}], any: [{arg: a, exists: true}]}", "only one of all/any/not");
    bad("{all: [{arg: a, exists: true}], arg: a}", "cannot be combined with `arg`");
    bad("{not: {arg: a, exists: true}, contains: x}", "cannot be combined with contains");
    bad("{}", "needs `arg`");
    bad("{all: []}", "`all` is empty");
    bad("{arg: a, in: []}", "`in` is empty");
    bad("{arg: a, gt: 1, ignoreCase: true}", "ignoreCase does not apply to `gt`");
    bad("{arg: a, exists: true, ignoreCase: true}", "ignoreCase does not apply");
    bad("{arg: a, regex: \"(unclosed\"}", "invalid regex");
    bad("{arg: a, regex: \"\\\\w{1000}{1000}\"}", "invalid regex");
    bad("{arg: a, inList: nope}", "inList names \"nope\"");
    bad("{arg: \"a..b\", exists: true}", "not an argument name");
    bad("{any: [{arg: a, exists: true}, {arg: b}]}", "if.args.any[1]");
    bad("{arg: a, sql: {}}", "names no fact");
    bad("{arg: a, sql: {dialect: klingon, selectWithoutLimit: true}}", "dialect");
    bad("{arg: a, sql: {kinds: [SELECT, FROB]}}", "FROB");
}

#[test]
fn every_problem_is_reported_at_once() {
    let problems = problems(
        r#"
policy:
  default: log
  rules:
    - name: one
      if: {args: {arg: a, regex: "("}}
      then: deny
    - name: two
      if: {tool: ["[unclosed"]}
      then: deny
    - name: one
      then: allow
    - name: default
      then: allow
    - name: ""
      then: allow
"#,
    );
    // A second rule named `one` is no problem: the order decides.
    assert_eq!(problems.len(), 5, "{problems:#?}");
    let joined = problems.join("\n");
    for needle in
        ["policy.default", "rule 'one': if.args: invalid regex", "rule 'two': if.tool glob", "reserved", "rule #5"]
    {
        assert!(joined.contains(needle), "{needle} missing from {joined}");
    }
}

#[test]
fn hostile_arguments_never_crash() {
    let engine = deny_when(
        r#"{any: [{arg: a.b, contains: x}, {arg: a, gt: 1}, {arg: a, regex: "x"}, {arg: a, sql: {kinds: [DROP]}}]}"#,
    );
    let deep = format!("{{\"a\": {}1{}}}", "[".repeat(200), "]".repeat(200));
    for args in [
        "not json",
        "[1,2]",
        "\"text\"",
        "12",
        "{\"a\": ",
        "",
        "null",
        &deep,
        r#"{"a": {"b": {"c": [null, {}, []]}}}"#,
        r#"{"a": "\u0000\ud83d\ude00"}"#,
    ] {
        let evaluation = engine.evaluate("s", "t", Some(args));
        assert!(matches!(evaluation.rule.as_str(), "invalid-arguments" | "default" | "r"), "{args}: {evaluation:?}");
    }
    assert_eq!(engine.evaluate("s", "t", Some("[1]")).rule, "invalid-arguments");
    assert_eq!(engine.evaluate("s", "t", Some("{bad")).action, Decision::Deny);
    assert_eq!(engine.evaluate("s", "t", None).rule, "default");
    assert_eq!(engine.evaluate("s", "t", Some("null")).rule, "default");
}
