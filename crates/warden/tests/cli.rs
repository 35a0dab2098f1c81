//! End to end: `warden init` and `warden import` produce configs that
//! validate and serve.

mod support;

use serde_json::Value;
use support::{fixture_bin, run_warden as warden, scratch_dir};

#[test]
fn init_builds_a_safe_and_a_dev_profile_from_live_servers() {
    let fixture = fixture_bin();
    let out = scratch_dir("init").join("warden.yaml");
    let out_text = out.to_str().unwrap();
    let a = format!("alpha={fixture}");
    let b = format!("beta={fixture} --name beta --extra-tools 1");
    let (ok, _, stderr) = warden(&["init", "-o", out_text, &a, &b]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("defaultProfile: safe") && text.contains("dev:"), "{text}");
    assert!(text.contains("--extra-tools"), "commands are kept: {text}");

    let (ok, stdout, stderr) = warden(&["validate", "--config", out_text]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("servers:  2 (alpha, beta)"), "{stdout}");
    // `safe` keeps read-only tools (the fixture's echo says readOnlyHint) and hides the rest.
    let (ok, stdout, stderr) =
        warden(&["call", "--config", out_text, "tool", "alpha__echo", "--args", r#"{"text":"ok"}"#]);
    assert!(ok, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "ok");
    let (ok, _, stderr) = warden(&["call", "--config", out_text, "tool", "alpha__crash"]);
    assert!(!ok && stderr.contains("Unknown tool"), "{stderr}");
    let (ok, _, _) = warden(&[
        "call",
        "--config",
        out_text,
        "--profile",
        "dev",
        "tool",
        "beta__extra_0001",
        "--args",
        r#"{"text":"x"}"#,
    ]);
    assert!(ok);

    let (ok, _, stderr) = warden(&["init", "no-equals-sign"]);
    assert!(!ok && stderr.contains("NAME=COMMAND"), "{stderr}");
}

#[test]
fn import_converts_mcp2_and_mcptools_files_into_valid_configs() {
    let dir = scratch_dir("import");
    let fixture = fixture_bin();
    let mcp2 = dir.join("mcp2.yaml");
    std::fs::write(
        &mcp2,
        format!(
            "defaultProfile: safe\nservers:\n  fx:\n    displayName: Fixture\n    transport:\n      kind: stdio\n      command: \"{fixture}\"\nprofiles:\n  safe:\n    description: safe\n    servers:\n      fx:\n        tools:\n          allow: [echo]\nhub:\n  enabled: true\n  prefixServerIDs: true\nexposePerServer: false\n"
        ),
    )
    .unwrap();
    let converted = dir.join("warden.yaml");
    let (ok, _, stderr) = warden(&["import", "mcp2", mcp2.to_str().unwrap(), "-o", converted.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = warden(&[
        "call",
        "--config",
        converted.to_str().unwrap(),
        "tool",
        "fx__echo",
        "--args",
        r#"{"text":"imported"}"#,
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("imported"));

    let inventory = dir.join("files-tools.json");
    std::fs::write(&inventory, r#"{"tools":[{"name":"read_file","inputSchema":{"type":"object"}},{"name":"write_file","inputSchema":{"type":"object"}}]}"#).unwrap();
    let (ok, stdout, stderr) = warden(&["import", "mcptools", inventory.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("CHANGE-ME"), "the placeholder command is pointed out: {stderr}");
    assert!(stdout.contains("files:") && stdout.contains("read_file"), "{stdout}");

    let broken = dir.join("broken.yaml");
    std::fs::write(&broken, "servers: [not, a, map]\n").unwrap();
    let (ok, _, stderr) = warden(&["import", "mcp2", broken.to_str().unwrap()]);
    assert!(!ok && stderr.contains("broken.yaml"), "{stderr}");
}
