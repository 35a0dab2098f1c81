//! Role rules decided path by path, role categories, rules sharing a name,
//! roles whose arguments are absent, a sandbox inside a protected directory.

mod common;

use common::{expect, problems};
use warden_pipeline::Verdict;
use warden_policy::Decision;

const MULTI: &str = r#"
policy:
  default: deny
  annotations:
    fs:
      read_many: {args: {paths: [read-path]}}
      move: {args: {source: [read-path, delete-path], destination: [write-path]}}
  rules:
    - name: reads-in-downloads
      if: {roles: [read-path], paths: {within: [/nonexistent-w/Downloads]}}
      then: allow
    - name: reads-in-documents
      if: {roles: [read-path], paths: {within: [/nonexistent-w/Documents]}}
      then: allow
    - name: secrets-need-a-human
      if: {roles: [read-path], paths: {within: [/nonexistent-w/Documents/secret]}}
      then: escalate
    - name: other-reads
      if: {roles: [read-path]}
      then: escalate
"#;

fn paths(list: &[&str]) -> String {
    serde_json::json!({ "paths": list }).to_string()
}

#[test]
fn each_path_of_a_role_is_discharged_by_the_first_rule_that_matches_it() {
    let engine = common::engine(MULTI);
    // Two directories, two rules: allowed (one rule for all would not match).
    let evaluation = expect(
        &engine,
        "fs",
        "read_many",
        &paths(&["/nonexistent-w/Downloads/a", "/nonexistent-w/Documents/b"]),
        Decision::Allow,
        "reads-in-downloads",
    );
    assert!(evaluation.trace.iter().any(|s| s.contains("reads-in-documents") && s.contains("Documents/b")));
    // A path no allow rule takes falls to a later rule: the most restrictive wins.
    expect(
        &engine,
        "fs",
        "read_many",
        &paths(&["/nonexistent-w/Downloads/a", "/etc/passwd"]),
        Decision::Escalate,
        "other-reads",
    );
    // A path is taken by the first rule that matches it: Documents/secret by
    // reads-in-documents, before the escalating rule.
    expect(
        &engine,
        "fs",
        "read_many",
        &paths(&["/nonexistent-w/Documents/secret/k"]),
        Decision::Allow,
        "reads-in-documents",
    );
}

#[test]
fn paths_no_rule_takes_get_the_default() {
    let engine = common::engine(
        r#"
policy:
  default: deny
  annotations:
    fs: {read_many: {args: {paths: [read-path]}}}
  rules:
    - name: reads-in-downloads
      if: {roles: [read-path], paths: {within: [/nonexistent-w/Downloads]}}
      then: allow
"#,
    );
    let evaluation = expect(
        &engine,
        "fs",
        "read_many",
        &paths(&["/nonexistent-w/Downloads/a", "/nonexistent-w/elsewhere"]),
        Decision::Deny,
        "default",
    );
    assert!(
        evaluation.trace.iter().any(|s| s.contains("no rule decides") && s.contains("elsewhere")),
        "{evaluation:#?}"
    );
}

#[test]
fn categories_come_from_the_table_and_policy_roles_not_from_names() {
    // write-history is a path role (IronCurtain's table): its paths are
    // checked, and it may appear in paths.roles.
    let engine = common::engine(
        r#"
policy:
  default: deny
  protectedPaths: [/nonexistent-w/protected]
  roles: {repo: path, channel: identifier}
  annotations:
    git: {reset: {args: {path: [write-history]}}, clone: {args: {into: [repo], channel: [channel]}}}
  rules:
    - name: history-in-downloads
      if: {roles: [write-history], paths: {roles: [write-history], within: [/nonexistent-w/Downloads]}}
      then: allow
    - name: repos-in-downloads
      if: {roles: [repo, channel], paths: {roles: [repo], within: [/nonexistent-w/Downloads]}}
      then: allow
"#,
    );
    let at = |p: &str| serde_json::json!({ "path": p }).to_string();
    expect(&engine, "git", "reset", &at("/nonexistent-w/Downloads/r"), Decision::Allow, "history-in-downloads");
    expect(&engine, "git", "reset", &at("/nonexistent-w/protected/r"), Decision::Deny, "protected-path");
    let into = |p: &str| serde_json::json!({ "into": p, "channel": "c" }).to_string();
    expect(&engine, "git", "clone", &into("/nonexistent-w/protected/x"), Decision::Deny, "protected-path");
    expect(&engine, "git", "clone", &into("/nonexistent-w/Downloads/x"), Decision::Allow, "repos-in-downloads");

    let problems = problems(
        r#"
policy:
  roles: {branch: opaque}
  rules:
    - name: r
      if: {roles: [branch], paths: {roles: [branch, github-owner], within: [/tmp]}}
      then: allow
"#,
    );
    let joined = problems.join("\n");
    assert!(joined.contains("\"branch\" is not a path role (it is opaque"), "{joined}");
    assert!(joined.contains("\"github-owner\" is not a path role (it is identifier"), "{joined}");
}

#[test]
fn rules_may_share_a_name_and_are_then_named_by_position() {
    let engine = common::engine(
        r#"
policy:
  rules:
    - name: writes
      if: {tool: [write], args: {arg: path, startsWith: /tmp/}}
      then: allow
    - name: writes
      if: {tool: [write]}
      then: deny
      reason: only /tmp
    - name: unique
      if: {tool: [drop]}
      then: deny
"#,
    );
    assert_eq!(engine.warnings().len(), 1);
    assert!(engine.warnings()[0].contains("rules #1, #2 share the name 'writes'"), "{:?}", engine.warnings());
    let allowed = expect(&engine, "s", "write", r#"{"path": "/tmp/x"}"#, Decision::Allow, "writes");
    assert_eq!(allowed.position, Some(1));
    let denied = expect(&engine, "s", "write", r#"{"path": "/etc/x"}"#, Decision::Deny, "writes");
    assert_eq!((denied.position, denied.label.as_str()), (Some(2), "writes (rule #2)"));
    assert_eq!(denied.verdict(), Verdict::Deny { rule: "writes (rule #2)".into(), reason: "only /tmp".into() });
    assert!(denied.trace.last().unwrap().contains("by 'writes' (rule #2)"), "{:?}", denied.trace);
    let unique = expect(&engine, "s", "drop", "{}", Decision::Deny, "unique");
    assert_eq!((unique.position, unique.label.as_str()), (Some(3), "unique"));
}

#[test]
fn absent_arguments_leave_their_roles_out_unless_decide_absent_roles() {
    let policy = |decide: bool| {
        format!(
            r#"
policy:
  default: deny
  decideAbsentRoles: {decide}
  annotations:
    git: {{push: {{args: {{path: [read-path], remote: [git-remote-url]}}}}}}
  rules:
    - name: reads-in-downloads
      if: {{roles: [read-path], paths: {{within: [/nonexistent-w/Downloads]}}}}
      then: allow
    - name: pushes-need-a-human
      if: {{roles: [git-remote-url], tool: [push]}}
      then: escalate
"#
        )
    };
    let args = r#"{"path": "/nonexistent-w/Downloads/repo"}"#;
    expect(&common::engine(&policy(false)), "git", "push", args, Decision::Allow, "reads-in-downloads");
    // IronCurtain's semantics: the push goes to the default remote, and the
    // remote role is decided without a value.
    expect(&common::engine(&policy(true)), "git", "push", args, Decision::Escalate, "pushes-need-a-human");
}

#[test]
fn a_sandbox_inside_a_protected_directory_is_carved_out_of_it() {
    let engine = common::engine(
        r#"
policy:
  default: deny
  sandbox: /nonexistent-w/app/sandbox
  protectedPaths: [/nonexistent-w/app, /nonexistent-w/app/sandbox/.env]
  annotations:
    fs: {read_file: {args: {path: [read-path]}}}
"#,
    );
    let at = |p: &str| serde_json::json!({ "path": p }).to_string();
    expect(&engine, "fs", "read_file", &at("/nonexistent-w/app/sandbox/notes"), Decision::Allow, "sandbox");
    expect(&engine, "fs", "read_file", &at("/nonexistent-w/app/config"), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &at("/nonexistent-w/app/sandbox/.env"), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &at("/nonexistent-w/app/sandbox/../config"), Decision::Deny, "protected-path");
}
