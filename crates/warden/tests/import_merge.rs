//! End to end: `warden import ... --merge` adds an import to an existing
//! config (servers after the user's, rules after the user's), refuses a
//! clash unless `--replace`, keeps a backup, and the result validates and
//! serves.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::{fixture_bin, run_warden as warden, scratch_dir};

/// The user's config: one fixture server (with an unexpanded variable), a
/// profile and a rule, with a comment.
fn users_config(dir: &Path) -> PathBuf {
    let fixture = fixture_bin();
    let path = dir.join("warden.yaml");
    std::fs::write(
        &path,
        format!(
            "# my gateway\nservers:\n  fx:\n    transport: {{kind: stdio, command: {fixture:?}, env: {{GREETING: '${{WARDEN_TEST_UNSET_GREETING:-hi}}'}}}}\ndefaultProfile: safe\nprofiles:\n  safe:\n    servers:\n      fx: {{tools: {{allow: [echo]}}}}\npolicy:\n  rules:\n    - {{name: mine, if: {{tool: [crash]}}, then: deny}}\n"
        ),
    )
    .unwrap();
    path
}

/// An mcp2 config with one fixture server named `name` and a `safe` profile.
fn mcp2_file(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("mcp2-{name}.yaml"));
    std::fs::write(
        &path,
        format!(
            "defaultProfile: safe\nservers:\n  {name}:\n    displayName: Imported\n    transport: {{kind: stdio, command: {:?}, args: [--name, imported-fx]}}\nprofiles:\n  safe:\n    servers:\n      {name}: {{tools: {{allow: [echo, pid]}}}}\nhub: {{prefixServerIDs: true}}\n",
            fixture_bin()
        ),
    )
    .unwrap();
    path
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn merge_adds_servers_profiles_and_rules_after_the_users_and_the_result_serves() {
    let dir = scratch_dir("merge");
    let config = users_config(&dir);
    let before = text(&config);
    let (ok, _, stderr) = warden(&[
        "import",
        "mcp2",
        mcp2_file(&dir, "other").to_str().unwrap(),
        "--merge",
        "-o",
        config.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("added server(s) \"other\"") && stderr.contains("comments and layout are not kept"),
        "{stderr}"
    );
    assert_eq!(text(&dir.join("warden.yaml.bak")), before, "the old file is kept beside it");
    let merged = text(&config);
    assert!(merged.contains("${WARDEN_TEST_UNSET_GREETING:-hi}"), "variables stay unexpanded: {merged}");
    let (fx, other) = (merged.find("  fx:").unwrap(), merged.find("  other:").unwrap());
    assert!(fx < other, "the user's server stays first (it wins unprefixed names): {merged}");

    let sentinel = dir.join("security_policy.yaml");
    std::fs::write(
        &sentinel,
        "rules:\n  - id: no-drop\n    name: No drop\n    target_tool: '*'\n    target_argument: query\n    conditions: [{operator: contains, value: DROP}]\n    action: block\n",
    )
    .unwrap();
    let (ok, _, stderr) =
        warden(&["import", "sentinel", sentinel.to_str().unwrap(), "--merge", "-o", config.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let merged = text(&config);
    let (mine, theirs) = (merged.find("name: mine").unwrap(), merged.find("name: No drop").unwrap());
    assert!(mine < theirs, "imported rules come after the user's: {merged}");

    let (ok, stdout, stderr) = warden(&["validate", "--config", config.to_str().unwrap()]);
    assert!(ok && stdout.contains("servers:  2 (fx, other)"), "{stdout}{stderr}");
    let (ok, stdout, stderr) = warden(&["profiles", "--config", config.to_str().unwrap()]);
    assert!(ok && stdout.contains("[servers: fx, other \"Imported\"]"), "{stdout}{stderr}");
    for tool in ["fx__echo", "other__echo"] {
        let (ok, stdout, stderr) =
            warden(&["call", "--config", config.to_str().unwrap(), "tool", tool, "--args", r#"{"text":"merged"}"#]);
        assert!(ok && stdout.contains("merged"), "{tool}: {stdout}{stderr}");
    }
}

#[test]
fn merge_refuses_a_server_defined_differently_unless_replace() {
    let dir = scratch_dir("merge-clash");
    let config = users_config(&dir);
    let before = text(&config);
    let import = mcp2_file(&dir, "fx");
    let (ok, _, stderr) =
        warden(&["import", "mcp2", import.to_str().unwrap(), "--merge", "-o", config.to_str().unwrap()]);
    assert!(!ok, "a clash fails");
    assert!(stderr.contains("server \"fx\" is already defined differently"), "{stderr}");
    assert!(stderr.contains("profile \"safe\", server \"fx\""), "every clash is named: {stderr}");
    assert_eq!(text(&config), before, "nothing was written");
    assert!(!dir.join("warden.yaml.bak").exists());

    let (ok, _, stderr) =
        warden(&["import", "mcp2", import.to_str().unwrap(), "--merge", "--replace", "-o", config.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("replaced server \"fx\""), "{stderr}");
    assert!(text(&config).contains("imported-fx"), "{}", text(&config));
    let (ok, _, stderr) = warden(&["validate", "--config", config.to_str().unwrap()]);
    assert!(ok, "{stderr}");
}

#[test]
fn merge_without_an_output_uses_the_config_the_other_commands_read() {
    let dir = scratch_dir("merge-default");
    let config = users_config(&dir);
    let import = mcp2_file(&dir, "other");
    let output = Command::new(support::warden_bin())
        .args(["import", "mcp2", import.to_str().unwrap(), "--merge"])
        .env("WARDEN_CONFIG", &config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.stdout.is_empty(), "nothing on stdout");
    assert!(text(&config).contains("other:"), "{}", text(&config));

    let missing = dir.join("missing.yaml");
    let (ok, _, stderr) =
        warden(&["import", "mcp2", import.to_str().unwrap(), "--merge", "-o", missing.to_str().unwrap()]);
    assert!(!ok && stderr.contains("leave out --merge"), "{stderr}");
    assert!(!missing.exists());
}
