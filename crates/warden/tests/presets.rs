//! Presets end to end: `warden init --preset`, and `policy.include` in front
//! of the real reference filesystem server (pinned by `interop/install.sh`).

mod support;

use serde_json::json;
use support::servers::RealServer;
use support::{Client, fixture_bin, run_warden as warden, scratch_dir};

#[test]
fn init_starts_from_presets_and_refuses_unknown_ones() {
    let fixture = fixture_bin();
    let out = scratch_dir("init-preset").join("warden.yaml");
    let out_text = out.to_str().unwrap();
    let server = format!("alpha={fixture}");
    let (ok, _, stderr) =
        warden(&["init", "--preset", "sql-approval", "--preset", "builtin:shell-approval", "-o", out_text, &server]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("builtin:sql-approval") && text.contains("builtin:shell-approval"), "{text}");
    let (ok, _, stderr) = warden(&["validate", "--config", out_text]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = warden(&["init", "--preset", "all-safe", &server]);
    assert!(!ok && stderr.contains("unknown preset") && stderr.contains("builtin:protect-secrets"), "{stderr}");
}

#[test]
fn protect_secrets_in_front_of_the_filesystem_server() {
    let dir = std::fs::canonicalize(scratch_dir("preset-fs")).unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("certs")).unwrap();
    std::fs::write(project.join(".env"), "API_KEY=SECRET-VALUE").unwrap();
    std::fs::write(project.join("certs/server.key"), "SECRET-VALUE").unwrap();
    std::fs::write(project.join("main.rs"), "fn main() {}").unwrap();
    let config = dir.join("warden.yaml");
    std::fs::write(&config, "policy: {include: [builtin:protect-secrets]}\n").unwrap();
    let project_text = project.display().to_string();
    let server = RealServer::Filesystem;
    if !server.installed() {
        return;
    }
    let args = server.wrap_args(Some(&config), &[&project_text]);
    let mut client = Client::start(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    client.initialize();
    client.wait_for_tool("read_text_file");
    let main =
        client.request("tools/call", json!({"name": "read_text_file", "arguments": {"path": project.join("main.rs")}}));
    assert!(main.raw.contains("fn main"), "{}", main.raw);
    for secret in [".env", "certs/server.key"] {
        let response = client
            .request("tools/call", json!({"name": "read_text_file", "arguments": {"path": project.join(secret)}}));
        assert!(
            response.raw.contains("protect-secrets") && !response.raw.contains("SECRET-VALUE"),
            "{secret}: {}",
            response.raw
        );
    }
}
