//! The trace `warden policy explain` shows.

mod common;

use common::{engine, temp_dir};
use warden_policy::Decision;

#[test]
fn the_trace_names_every_check_and_rule() {
    let dir = temp_dir("explain");
    std::fs::create_dir_all(dir.join("sandbox")).unwrap();
    let d = dir.display();
    let engine = engine(&format!(
        r#"
policy:
  default: deny
  sandbox: {d}/sandbox
  protectedPaths: ["{d}/keys"]
  allowedDomains: {{web: [example.com]}}
  annotations:
    fs: {{move_file: {{args: {{source: [read-path, delete-path], destination: [write-path]}}}}}}
    web: {{fetch: {{args: {{url: [fetch-url]}}}}}}
  rules:
    - name: unrelated
      if: {{tool: [other]}}
      then: deny
    - name: writes-to-docs
      if: {{roles: [write-path], paths: {{within: ["{d}/docs"]}}}}
      then: allow
    - name: writes-escalate
      if: {{roles: [write-path]}}
      then: escalate
    - name: fetches
      if: {{roles: [fetch-url]}}
      then: allow
    - name: log-fetches
      if: {{server: [web]}}
      then: log
"#
    ));
    let args = format!(r#"{{"source": "{d}/sandbox/a", "destination": "{d}/elsewhere/a"}}"#);
    let evaluation = engine.evaluate("fs", "move_file", Some(&args));
    println!("{}", evaluation.trace.join("\n"));
    assert_eq!(evaluation.action, Decision::Escalate);
    let expected_prefixes = [
        "trusted-server: server 'fs' is not trusted",
        "roles: source → [read-path, delete-path]; destination → [write-path]",
        "path: ",
        "sandbox: every path of role read-path",
        "sandbox: every path of role delete-path",
        "rule 'writes-to-docs' (role write-path): ",
        "rule 'writes-escalate' (role write-path): matches → escalate",
        "2 call rule(s) skipped: server or tool does not match",
        "no call rule decides",
        "combine: the most restrictive of escalate (writes-escalate), allow (sandbox), allow (sandbox)",
        "decision: escalate by 'writes-escalate'",
    ];
    for prefix in expected_prefixes {
        assert!(evaluation.trace.iter().any(|step| step.starts_with(prefix)), "no step starts with {prefix:?}");
    }
    let fetch = engine.evaluate("web", "fetch", Some(r#"{"url": "https://evil.example/x"}"#));
    println!("{}", fetch.trace.join("\n"));
    assert_eq!((fetch.action, fetch.rule.as_str()), (Decision::Escalate, "domain-allowlist"));
    // The domain gate decides before any rule, `log` rules included.
    assert!(fetch.logged.is_empty(), "{:?}", fetch.logged);
    assert!(fetch.trace.iter().any(|s| s.starts_with("domain-allowlist: argument 'url'")));
    std::fs::remove_dir_all(dir).unwrap();
}
