//! Role extraction, conditional roles, most-restrictive across roles, strict
//! mode (IronCurtain's filesystem server as the example).

mod common;

use common::{expect, js, temp_dir};
use std::path::Path;
use warden_policy::{Decision, PolicyEngine};

fn filesystem_policy(dir: &Path, extra: &str) -> String {
    let d = dir.display();
    format!(
        r#"
policy:
  default: deny
  sandbox: {d}/sandbox
  protectedPaths: ["{d}/protected"]
  annotations:
    fs:
      read_file: {{sideEffects: false, args: {{path: [read-path]}}}}
      read_multiple_files: {{sideEffects: false, args: {{paths: [read-path]}}}}
      edit_file:
        sideEffects: true
        args: {{path: [read-path, write-path], dryRun: []}}
        conditional:
          - when: {{arg: dryRun, equals: true}}
            args: {{path: [read-path]}}
      move_file: {{sideEffects: true, args: {{source: [read-path, delete-path], destination: [write-path]}}}}
      list_allowed_directories: {{sideEffects: false, args: {{}}}}
  rules:
    - name: read-documents
      if: {{roles: [read-path], paths: {{within: ["{d}/docs"]}}}}
      then: allow
    - name: writes-need-approval
      if: {{roles: [write-path, delete-path], server: [fs]}}
      then: escalate
      reason: writing outside the sandbox needs approval
{extra}"#
    )
}

fn setup(name: &str, extra: &str) -> (std::path::PathBuf, PolicyEngine) {
    let dir = temp_dir(name);
    for sub in ["sandbox", "protected", "docs", "elsewhere"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let engine = common::engine(&filesystem_policy(&dir, extra));
    (dir, engine)
}

#[test]
fn reads_are_decided_by_the_first_rule_of_their_role() {
    let (dir, engine) = setup("roles-reads", "");
    let d = dir.display();
    expect(&engine, "fs", "read_file", &format!(r#"{{"path": "{d}/docs/a.txt"}}"#), Decision::Allow, "read-documents");
    expect(&engine, "fs", "read_file", &format!(r#"{{"path": "{d}/sandbox/a.txt"}}"#), Decision::Allow, "sandbox");
    expect(&engine, "fs", "read_file", &format!(r#"{{"path": "{d}/elsewhere/a"}}"#), Decision::Deny, "default");
    // Each string of an array is a value; all must pass.
    let both = format!(r#"{{"paths": ["{d}/docs/a", "{d}/docs/b"]}}"#);
    expect(&engine, "fs", "read_multiple_files", &both, Decision::Allow, "read-documents");
    let mixed = format!(r#"{{"paths": ["{d}/docs/a", "{d}/elsewhere/b"]}}"#);
    expect(&engine, "fs", "read_multiple_files", &mixed, Decision::Deny, "default");
    let sandboxed = format!(r#"{{"paths": ["{d}/sandbox/a", "{d}/sandbox/b/c"]}}"#);
    expect(&engine, "fs", "read_multiple_files", &sandboxed, Decision::Allow, "sandbox");
    // No path at all: the call has no roles, so the default decides.
    expect(&engine, "fs", "read_multiple_files", r#"{"paths": []}"#, Decision::Deny, "default");
    expect(&engine, "fs", "list_allowed_directories", "{}", Decision::Deny, "default");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn conditional_roles_narrow_a_dry_run_edit_to_a_read() {
    let (dir, engine) = setup("roles-dryrun", "");
    let path = js(&format!("{}/docs/notes.md", dir.display()));
    let edit = |dry: &str| format!(r#"{{"path": {path}, "edits": [], "dryRun": {dry}}}"#);
    // A real edit: read allowed by read-documents, write escalated: the most restrictive wins.
    let real = expect(&engine, "fs", "edit_file", &edit("false"), Decision::Escalate, "writes-need-approval");
    assert_eq!(real.reason, "writing outside the sandbox needs approval");
    // A dry run only reads.
    let dry = expect(&engine, "fs", "edit_file", &edit("true"), Decision::Allow, "read-documents");
    assert!(dry.trace.iter().any(|s| s.contains("conditional roles [0] applied")), "{:?}", dry.trace);
    // `dryRun: "true"` is a string, not true: no narrowing.
    expect(&engine, "fs", "edit_file", &edit("\"true\""), Decision::Escalate, "writes-need-approval");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_move_out_of_the_sandbox_takes_the_most_restrictive_role() {
    let (dir, engine) = setup("roles-move", "");
    let d = dir.display();
    let moved = |from: &str, to: &str| format!(r#"{{"source": "{d}/{from}", "destination": "{d}/{to}"}}"#);
    // Source: read-path and delete-path within the sandbox (allowed); destination: write escalated.
    let evaluation =
        expect(&engine, "fs", "move_file", &moved("sandbox/a", "docs/a"), Decision::Escalate, "writes-need-approval");
    assert!(evaluation.trace.iter().any(|s| s.starts_with("sandbox: every path of role read-path")));
    assert!(evaluation.trace.iter().any(|s| s.starts_with("sandbox: every path of role delete-path")));
    // Within the sandbox entirely: every role allowed by the sandbox.
    expect(&engine, "fs", "move_file", &moved("sandbox/a", "sandbox/b"), Decision::Allow, "sandbox");
    // Into the sandbox from docs: the delete of the source escalates.
    expect(&engine, "fs", "move_file", &moved("docs/a", "sandbox/a"), Decision::Escalate, "writes-need-approval");
    // From elsewhere: reading it is not allowed by any rule, so the default deny wins.
    expect(&engine, "fs", "move_file", &moved("elsewhere/a", "sandbox/a"), Decision::Deny, "default");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn values_of_other_types_are_denied_naming_the_argument() {
    let (dir, engine) = setup("roles-types", "");
    for args in [
        r#"{"path": 5}"#,
        r#"{"path": true}"#,
        r#"{"path": {"p": "/etc"}}"#,
        r#"{"path": ["/tmp/a", 3]}"#,
        r#"{"path": [["/etc/passwd"]]}"#,
    ] {
        let evaluation = expect(&engine, "fs", "read_file", args, Decision::Deny, "argument-type");
        assert!(evaluation.reason.contains("\"path\""), "{}", evaluation.reason);
    }
    // null is absent.
    expect(&engine, "fs", "read_file", r#"{"path": null}"#, Decision::Deny, "default");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn strict_mode_denies_unannotated_tools() {
    let (dir, engine) = setup("roles-lax", "");
    expect(&engine, "fs", "write_file", r#"{"path": "/x"}"#, Decision::Deny, "default");
    expect(&engine, "other", "read_file", "{}", Decision::Deny, "default");
    let strict =
        common::engine(&filesystem_policy(&dir, "").replace("  default: deny\n", "  default: allow\n  strict: true\n"));
    expect(&strict, "fs", "write_file", r#"{"path": "/x"}"#, Decision::Deny, "unannotated-tool");
    expect(&strict, "other", "read_file", "{}", Decision::Deny, "unannotated-tool");
    expect(&strict, "fs", "list_allowed_directories", "{}", Decision::Allow, "default");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn side_effects_select_rules() {
    let engine = common::engine(
        r#"
policy:
  annotations:
    s:
      look: {sideEffects: false, args: {q: [query]}}
      change: {sideEffects: true, args: {q: [query]}}
      vague: {args: {q: [query]}}
  rules:
    - name: changes-escalate
      if: {sideEffects: true}
      then: escalate
    - name: queries-of-readers
      if: {roles: [query], sideEffects: false}
      then: allow
    - name: other-queries
      if: {roles: [query]}
      then: deny
"#,
    );
    expect(&engine, "s", "look", r#"{"q": "x"}"#, Decision::Allow, "queries-of-readers");
    expect(&engine, "s", "change", r#"{"q": "x"}"#, Decision::Deny, "other-queries");
    expect(&engine, "s", "change", "{}", Decision::Escalate, "changes-escalate");
    expect(&engine, "s", "vague", r#"{"q": "x"}"#, Decision::Deny, "other-queries");
    expect(&engine, "s", "unknown", "{}", Decision::Allow, "default");
}

#[test]
fn role_rules_log_and_go_on() {
    let engine = common::engine(
        r#"
policy:
  default: deny
  annotations:
    s: {run: {args: {cmd: [command], env: [command]}}}
  rules:
    - name: log-commands
      if: {roles: [command]}
      then: log
    - name: allow-ls
      if: {roles: [command], args: {arg: cmd, startsWith: "ls"}}
      then: allow
"#,
    );
    let evaluation = expect(&engine, "s", "run", r#"{"cmd": "ls -l"}"#, Decision::Allow, "allow-ls");
    assert_eq!(evaluation.logged, vec!["log-commands".to_string()]);
    let evaluation = expect(&engine, "s", "run", r#"{"cmd": "rm -rf /"}"#, Decision::Deny, "default");
    assert_eq!(evaluation.logged, vec!["log-commands".to_string()]);
}
