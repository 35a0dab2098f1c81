//! Protected paths, traversal, symbolic links, path rules.

mod common;

use common::{expect, js, temp_dir};
use std::path::Path;
use warden_policy::{Decision, PolicyEngine};

fn engine_for(dir: &Path, extra_rules: &str) -> PolicyEngine {
    let d = dir.display();
    common::engine(&format!(
        r#"
policy:
  default: allow
  sandbox: {d}/sandbox
  protectedPaths: ["{d}/protected", "~/.ssh", "/home/u/.ssh"]
  annotations:
    fs:
      read_file: {{args: {{path: [read-path]}}}}
      write_file: {{args: {{path: [write-path]}}}}
  rules:
{extra_rules}
    - name: placeholder
      if: {{tool: [never-called]}}
      then: deny
"#
    ))
}

fn setup(name: &str) -> std::path::PathBuf {
    let dir = temp_dir(name);
    std::fs::create_dir_all(dir.join("sandbox")).unwrap();
    std::fs::create_dir_all(dir.join("protected/keys")).unwrap();
    std::fs::write(dir.join("protected/keys/id"), "secret").unwrap();
    dir
}

fn read(path: &str) -> String {
    format!(r#"{{"path": {}}}"#, js(path))
}

#[test]
fn protected_paths_and_traversal() {
    let dir = setup("paths-protected");
    let engine = engine_for(&dir, "");
    let d = dir.display().to_string();
    expect(&engine, "fs", "read_file", &read(&format!("{d}/protected")), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &read(&format!("{d}/protected/keys/id")), Decision::Deny, "protected-path");
    expect(
        &engine,
        "fs",
        "read_file",
        &read(&format!("{d}/sandbox/../protected/keys/id")),
        Decision::Deny,
        "protected-path",
    );
    expect(
        &engine,
        "fs",
        "read_file",
        &read(&format!("{d}/sandbox/./../../{}/protected/x", dir.file_name().unwrap().to_string_lossy())),
        Decision::Deny,
        "protected-path",
    );
    expect(&engine, "fs", "read_file", &read("/safe/../home/u/.ssh/id_rsa"), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &read("/home/u/./.ssh//id_rsa"), Decision::Deny, "protected-path");
    // A sibling with the same prefix is not protected.
    expect(&engine, "fs", "read_file", &read(&format!("{d}/protected-not/x")), Decision::Allow, "default");
    expect(&engine, "fs", "read_file", &read(&format!("{d}/sandbox/x")), Decision::Allow, "sandbox");
    if std::env::var_os("HOME").is_some_and(|h| !h.is_empty()) {
        expect(&engine, "fs", "read_file", &read("~/.ssh/id_rsa"), Decision::Deny, "protected-path");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(unix)]
#[test]
fn symlinks_into_protected_directories() {
    let dir = setup("paths-links");
    let engine = engine_for(&dir, "");
    let d = dir.display().to_string();
    std::os::unix::fs::symlink(dir.join("protected"), dir.join("sandbox/innocent")).unwrap();
    std::os::unix::fs::symlink(dir.join("protected/keys/new"), dir.join("sandbox/dangling")).unwrap();
    std::os::unix::fs::symlink("../protected/keys/id", dir.join("sandbox/relative")).unwrap();
    // An existing file through a symlinked directory.
    expect(
        &engine,
        "fs",
        "read_file",
        &read(&format!("{d}/sandbox/innocent/keys/id")),
        Decision::Deny,
        "protected-path",
    );
    // A file not yet there, under a symlinked directory.
    expect(
        &engine,
        "fs",
        "write_file",
        &read(&format!("{d}/sandbox/innocent/new/deeper/file")),
        Decision::Deny,
        "protected-path",
    );
    // A dangling link whose target would be created in the protected directory.
    expect(&engine, "fs", "write_file", &read(&format!("{d}/sandbox/dangling")), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &read(&format!("{d}/sandbox/relative")), Decision::Deny, "protected-path");
    // `link/..` is the protected directory's parent for the kernel: not the sandbox.
    let evaluation = engine.evaluate("fs", "write_file", Some(&read(&format!("{d}/sandbox/innocent/../x"))));
    assert_eq!(evaluation.action, Decision::Allow, "{evaluation:?}");
    assert_eq!(evaluation.rule, "default", "the sandbox must not vouch for {evaluation:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn uncheckable_paths_are_denied() {
    let dir = setup("paths-invalid");
    let engine = engine_for(&dir, "");
    for path in ["", "a\u{0}b", "~nobody/x"] {
        expect(&engine, "fs", "read_file", &read(path), Decision::Deny, "invalid-path");
    }
    let long = format!("/{}", "a/".repeat(3000));
    expect(&engine, "fs", "read_file", &read(&long), Decision::Deny, "invalid-path");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn relative_paths_resolve_against_the_current_directory() {
    let dir = setup("paths-relative");
    let cwd = std::env::current_dir().unwrap();
    let engine = common::engine(&format!(
        "policy:\n  protectedPaths: [\"{}\"]\n  annotations: {{fs: {{read_file: {{args: {{path: [read-path]}}}}}}}}\n",
        cwd.join("secret-dir").display()
    ));
    expect(&engine, "fs", "read_file", &read("secret-dir/x"), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &read("./other/../secret-dir"), Decision::Deny, "protected-path");
    expect(&engine, "fs", "read_file", &read("other"), Decision::Allow, "default");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn path_rules_check_every_value_of_their_roles() {
    let dir = setup("paths-rules");
    let d = dir.display().to_string();
    let rules = format!(
        r#"    - name: no-writes-to-etc
      if: {{paths: {{roles: [write-path], within: ["{d}/etc"]}}}}
      then: deny
    - name: reads-in-data
      if: {{roles: [read-path], paths: {{within: ["{d}/data", "{d}/more"]}}}}
      then: escalate"#
    );
    let engine = engine_for(&dir, &rules);
    expect(&engine, "fs", "write_file", &read(&format!("{d}/etc/passwd")), Decision::Deny, "no-writes-to-etc");
    expect(&engine, "fs", "write_file", &read(&format!("{d}/var/x")), Decision::Allow, "default");
    // A call rule with explicit roles does not match a call without them.
    expect(&engine, "fs", "read_file", &read(&format!("{d}/etc/passwd")), Decision::Allow, "default");
    expect(&engine, "fs", "read_file", &read(&format!("{d}/data/x")), Decision::Escalate, "reads-in-data");
    expect(&engine, "fs", "read_file", &read(&format!("{d}/more/x")), Decision::Escalate, "reads-in-data");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn path_checks_must_name_path_roles() {
    let problems = common::problems(
        r#"
policy:
  rules:
    - name: mixed-up
      if: {paths: {roles: [fetch-url], within: [/tmp]}, domains: {roles: [read-path], allowed: ["*"]}}
      then: deny
    - name: empty
      if: {paths: {within: []}, domains: {allowed: []}}
      then: deny
"#,
    );
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems.iter().all(|p| p.starts_with("rule 'mixed-up'") || p.starts_with("rule 'empty'")));
}
