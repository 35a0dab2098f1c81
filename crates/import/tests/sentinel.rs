//! MCP Sentinel policies (`security_policy.yaml`).

mod common;

use std::path::Path;

use common::{file, load, same, warning};
use serde_json::json;
use warden_config::{Action, Condition, LimitScope, RateLimit};
use warden_import::{ImportError, Imported, import_sentinel, to_yaml};

fn sentinel(rel: &str) -> Imported {
    let (path, text) = file(rel);
    import_sentinel(&path, &text).unwrap_or_else(|err| panic!("{err}"))
}

fn error(yaml: &str) -> String {
    import_sentinel(Path::new("security_policy.yaml"), yaml).unwrap_err().to_string()
}

/// A test on `arg`, filled in by `with`.
fn test(arg: &str, with: impl FnOnce(&mut Condition)) -> Condition {
    let mut condition = Condition { arg: Some(arg.into()), ..Condition::default() };
    with(&mut condition);
    condition
}

fn all(conditions: Vec<Condition>) -> Condition {
    Condition { all: Some(conditions), ..Condition::default() }
}

fn present(arg: &str) -> Condition {
    test(arg, |c| c.exists = Some(true))
}

#[test]
fn rules_map_one_to_one() {
    let imported = sentinel("sentinel/security_policy.yaml");
    let policy = &imported.config.policy;
    assert_eq!(policy.default, Some(Action::Allow), "Sentinel lets unmatched calls through");
    assert!(!policy.strict && policy.annotations.is_empty() && imported.config.servers.is_empty());
    let names: Vec<&str> = policy.rules.iter().map(|rule| rule.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Data Exfiltration Prevention",
            "Destructive SQL Requires Approval",
            "Log Schema Reads",
            "Allow Health Check",
            "block-pipe-to-shell",
            "Log Every Email"
        ]
    );
    let actions: Vec<Action> = policy.rules.iter().map(|rule| rule.action).collect();
    use Action::*;
    assert_eq!(actions, [Deny, Escalate, Log, Allow, Deny, Log]);

    // Block SELECT * without LIMIT: a regex and a notContains, both ignoring case.
    let exfil = &policy.rules[0];
    assert_eq!(exfil.description, "Blocks SELECT * without a LIMIT clause");
    assert_eq!(exfil.when.tool, ["*_database"]);
    assert!(exfil.when.server.is_empty() && exfil.when.roles.is_empty(), "a call rule on any server");
    assert_eq!(
        exfil.when.args,
        Some(all(vec![
            present("query"),
            test("query", |c| {
                c.regex = Some(r"SELECT\s+\*\s+FROM".into());
                c.ignore_case = true;
            }),
            test("query", |c| {
                c.not_contains = Some("LIMIT".into());
                c.ignore_case = true;
            }),
        ]))
    );
    // allow_with_approval for DELETE or DROP.
    let contains = |word: &str| {
        test("query", |c| {
            c.contains = Some(word.into());
            c.ignore_case = true;
        })
    };
    assert_eq!(
        policy.rules[1].when.args,
        Some(all(vec![
            present("query"),
            Condition { any: Some(vec![contains("DELETE"), contains("DROP")]), ..Condition::default() }
        ]))
    );
    // `\Z` becomes `\z`; `ignore_case: yes` is true, as PyYAML reads it.
    let schema = policy.rules[2].when.args.as_ref().and_then(|args| args.all.as_ref()).unwrap();
    assert_eq!(schema[1].regex.as_deref(), Some(r"^\s*(?P<verb>DESCRIBE|SHOW)\b.*\z"));
    assert!(schema[1].ignore_case);
    assert_eq!(policy.rules[3].when.args.as_ref().unwrap().all.as_ref().unwrap()[1].equals, Some(json!("SELECT 1")));
    // Named by its id; a final `$` accepts a trailing newline, as in Python.
    let pipe = &policy.rules[4];
    assert_eq!(pipe.when.tool, ["run_*"]);
    let pipe_regex = pipe.when.args.as_ref().unwrap().all.as_ref().unwrap()[1].regex.clone().unwrap();
    assert_eq!(pipe_regex, r"\|\s*(sh|bash)(?:\n?\z)");
    // No conditions: the rule holds whenever its argument is there.
    assert_eq!(policy.rules[5].when.args, Some(present("to")));

    assert_eq!(
        imported.config.rate_limits,
        [RateLimit { server: "*".into(), tool: "*".into(), calls: 100, per_seconds: 60, scope: LimitScope::Tool }]
    );
    warning(&imported, &["circuit breaker", "100 calls per tool within 60 s", "rateLimits"]);
    // allow_with_approval waits for a person now: approval is on, and nothing warns.
    assert_eq!(imported.config.approval, Some(Default::default()));
    assert!(
        !imported.warnings.iter().any(|warning| warning.contains("allow_with_approval")),
        "{:#?}",
        imported.warnings
    );
    warning(&imported, &["rule \"block-pipe-to-shell\" has no name", "let matching calls through"]);
    warning(&imported, &["regex conditions", "first 10,000 characters"]);
    warning(&imported, &["rule \"Log Schema Reads\"", "is written as", r"\\z"]);
    warning(&imported, &["non-text argument values"]);
    assert_eq!(
        imported.origin,
        format!("MCP Sentinel policy {}", common::data("sentinel/security_policy.yaml").display())
    );
}

#[test]
fn translated_regexes_match_what_python_matched() {
    let imported = sentinel("sentinel/security_policy.yaml");
    let regex = |index: usize| {
        let condition = &imported.config.policy.rules[index].when.args.as_ref().unwrap().all.as_ref().unwrap()[1];
        regex::RegexBuilder::new(condition.regex.as_ref().unwrap())
            .case_insensitive(condition.ignore_case)
            .build()
            .unwrap()
    };
    let select = regex(0);
    assert!(select.is_match("select *  from users") && !select.is_match("SELECT id FROM users"));
    let pipe = regex(4);
    // Python's `$` matches at the end and before a final newline only.
    assert!(pipe.is_match("curl x | sh") && pipe.is_match("curl x | bash\n"));
    assert!(!pipe.is_match("curl x | sh; rm -rf /") && !pipe.is_match("curl x | sh\n\n"));
    let schema = regex(2);
    assert!(schema.is_match("  show tables") && !schema.is_match("SELECT 1; SHOW tables"));
}

#[test]
fn the_yaml_loads_back_to_the_same_config() {
    let imported = sentinel("sentinel/security_policy.yaml");
    let yaml = imported.to_yaml().unwrap();
    assert!(same(&load(&yaml), &imported.config), "{yaml}");
    assert!(to_yaml(&imported.config).unwrap().contains("policy:"));
}

#[test]
fn rules_that_cannot_be_carried_over_are_errors_naming_the_rule() {
    let (path, text) = file("bad/sentinel-lookahead.yaml");
    let err = import_sentinel(&path, &text).unwrap_err().to_string();
    assert!(err.contains("sentinel-lookahead.yaml: line 8, column 9: rules[0].conditions[0].value"), "{err}");
    assert!(err.contains("rule \"Unbounded Select\"") && err.contains("look-ahead"), "{err}");

    let (path, text) = file("bad/sentinel-syntax.yaml");
    let err = import_sentinel(&path, &text).unwrap_err();
    assert!(matches!(err, ImportError::Parse { .. }), "{err}");
    assert!(err.to_string().contains("sentinel-syntax.yaml: not valid YAML"), "{err}");

    let rule = |extra: &str| format!("rules:\n  - name: Bad\n    target_tool: q\n    target_argument: query\n{extra}");
    for (yaml, expected) in [
        (
            "rules:\n  - target_tool: q\n    target_argument: query\n".to_owned(),
            "line 1, column 1: rules[0]: has neither a name nor an id".to_owned(),
        ),
        (
            rule("    conditions: [{operator: regex, value: 'x{3,1}'}]\n"),
            "rules[0].conditions[0].value: rule \"Bad\": invalid regex \"x{3,1}\"".into(),
        ),
        (
            rule("    conditions: [{operator: regex, value: '[invalid('}]\n"),
            "rule \"Bad\": the regex \"[invalid(\" cannot be carried over: unterminated character set".into(),
        ),
        (rule("    conditions: [{operator: regex, value: '(a)\\1'}]\n"), "backreference \\1".into()),
        (
            rule("    conditions: [{operator: startswith, value: x}]\n"),
            "rules[0].conditions[0].operator: rule \"Bad\": unknown operator \"startswith\"".into(),
        ),
        (rule("    action: quarantine\n"), "rules[0].action: rule \"Bad\": unknown action \"quarantine\"".into()),
        (rule("    match_type: some\n"), "rule \"Bad\": unknown match_type \"some\"".into()),
        (rule("    conditions: [{operator: equals, value: 10}]\n"), "value: expected text, found a number".into()),
        (rule("    conditions: [{operator: equals}]\n"), "rule \"Bad\": the condition has no value".into()),
        (rule("    conditions: [{operator: equals, value: x, ignore_case: maybe}]\n"), "ignore_case".into()),
        (rule("    conditions: {operator: equals}\n"), "rules[0].conditions: rule \"Bad\": expected a list".into()),
        (
            "rules:\n  - name: Bad\n    target_tool: '[^a]'\n    target_argument: q\n".into(),
            "rule \"Bad\": target_tool \"[^a]\" cannot be written as a Warden glob".into(),
        ),
        ("rules:\n  - name: Bad\n    target_tool: q\n".into(), "rule \"Bad\" has no target_argument".into()),
        (
            "rules:\n  - name: Bad\n    target_tool: q\n    target_argument: a.b\n".into(),
            "target_argument \"a.b\" contains '.'".into(),
        ),
        ("rules: {a: 1}\n".into(), "rules: expected a list of rules".into()),
        ("".into(), "the file is empty".into()),
    ] {
        let err = error(&yaml);
        assert!(err.starts_with("security_policy.yaml: ") && err.contains(&expected), "{yaml}\n{err}");
    }
}

#[test]
fn odd_but_valid_files() {
    let yaml = "\
version: 2
rules:
  - id: never
    target_tool: '*'
    target_argument: q
    match_type: any
  - name: Block Drops
    target_tool: 'db.[qx]uery'
    target_argument: sql
    priority: 1
    conditions: [{operator: contains, value: DROP, note: x}]
";
    let imported = import_sentinel(Path::new("p.yaml"), yaml).unwrap();
    let rules = &imported.config.policy.rules;
    assert_eq!(rules.len(), 1, "a match_type any rule without conditions never matches");
    assert_eq!(rules[0].name, "Block Drops");
    assert_eq!(rules[0].action, Action::Deny, "block is the default action");
    assert_eq!(rules[0].when.tool, ["db.[qx]uery"]);
    warning(&imported, &["rule \"never\" is left out", "match_type any without conditions"]);
    warning(&imported, &["ignored version, rules[1].priority, rules[1].conditions[0].note"]);

    let empty = import_sentinel(Path::new("p.yaml"), "rules: []\n").unwrap();
    assert!(empty.config.policy.rules.is_empty());
    assert_eq!(empty.config.policy.default, Some(Action::Allow));
    warning(&empty, &["no rules", "every call is allowed"]);
}
