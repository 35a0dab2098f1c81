//! Safe out of the box: with no policy written, `warden wrap` refuses calls
//! that name a credential store or Warden's own files, for the real
//! reference filesystem server (its shipped annotations) and for a server
//! nobody annotated (path-like strings); and resources, prompts and
//! completions that name them, for `warden serve`.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::servers::RealServer;
use support::{Client, fixture_bin, scratch_dir};

/// Whether a tools/call answer is a refusal by the policy (and not the file).
fn refused(response: &support::Message) -> bool {
    let text = response.raw.as_str();
    text.contains("protected") && !text.contains("SECRET-KEY-MATERIAL")
}

/// A home directory with a private key, Warden's config and a note.
fn home(name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    let home = std::fs::canonicalize(&dir).expect("canonical scratch dir").join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("create ~/.ssh");
    std::fs::create_dir_all(home.join(".config/warden")).expect("create ~/.config/warden");
    std::fs::write(home.join(".ssh/id_rsa"), "SECRET-KEY-MATERIAL").expect("write key");
    std::fs::write(home.join(".config/warden/warden.yaml"), "servers: {}\n").expect("write config");
    std::fs::write(home.join("notes.txt"), "hello notes").expect("write notes");
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).expect("symlink");
    home
}

fn call(client: &mut Client, tool: &str, arguments: Value) -> support::Message {
    client.request("tools/call", json!({"name": tool, "arguments": arguments}))
}

fn path(home: &Path, rest: &str) -> String {
    home.join(rest).display().to_string()
}

#[test]
fn wrap_of_the_filesystem_server_refuses_keys_and_wardens_config_with_no_policy() {
    let home = home("protected-fs");
    let home_text = home.display().to_string();
    // The server `interop/install.sh` installs pinned.
    let server = RealServer::Filesystem;
    if !server.installed() {
        return;
    }
    let args = server.wrap_args(None, &[&home_text]);
    let mut client = Client::start(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[("HOME", &home_text), ("XDG_CONFIG_HOME", ""), ("XDG_STATE_HOME", "")],
    );
    client.initialize();
    client.wait_for_tool("read_text_file");

    // Allowed: an ordinary file of the home directory.
    let notes = call(&mut client, "read_text_file", json!({"path": path(&home, "notes.txt")}));
    assert!(notes.raw.contains("hello notes"), "{}", notes.raw);

    // Refused: the key, however it is named.
    for arguments in [
        json!({"path": path(&home, ".ssh/id_rsa")}),
        json!({"path": "~/.ssh/id_rsa"}),
        json!({"path": path(&home, "keys/id_rsa")}),
        json!({"path": path(&home, "notes/../.ssh/id_rsa")}),
        // Relative: the server resolves it against its root, not Warden's directory.
        json!({"path": ".ssh/id_rsa"}),
        json!({"path": "./keys/../.ssh/id_rsa"}),
    ] {
        let response = call(&mut client, "read_text_file", arguments.clone());
        assert!(refused(&response), "{arguments}: {}", response.raw);
    }
    let both = call(
        &mut client,
        "read_multiple_files",
        json!({"paths": [path(&home, "notes.txt"), path(&home, ".ssh/id_rsa")]}),
    );
    assert!(refused(&both), "{}", both.raw);

    // Refused: rewriting Warden's config, or moving a file over it.
    let write = call(
        &mut client,
        "write_file",
        json!({"path": path(&home, ".config/warden/warden.yaml"), "content": "policy: {trustedServers: [fs]}\n"}),
    );
    assert!(refused(&write), "{}", write.raw);
    let moved = call(
        &mut client,
        "move_file",
        json!({"source": path(&home, "notes.txt"), "destination": path(&home, ".ssh/authorized_keys")}),
    );
    assert!(refused(&moved), "{}", moved.raw);
    assert_eq!(std::fs::read_to_string(home.join(".config/warden/warden.yaml")).unwrap(), "servers: {}\n");
    assert!(!home.join(".ssh/authorized_keys").exists());
    assert!(home.join("notes.txt").exists());
}

#[test]
fn wrap_of_an_unannotated_server_refuses_path_like_arguments() {
    let home = home("protected-fixture");
    let home_text = home.display().to_string();
    let config = home.join("w.yaml");
    std::fs::write(&config, "servers: {}\n").expect("write config");
    let fixture = fixture_bin();
    let mut client = Client::start(
        &["wrap", "--config", config.to_str().unwrap(), "--", &fixture],
        &[("HOME", &home_text), ("XDG_CONFIG_HOME", ""), ("XDG_STATE_HOME", "")],
    );
    client.initialize();
    client.wait_for_tool("echo");
    assert_eq!(client.call_text("echo", json!({"text": "plain"})), "plain");
    assert_eq!(client.call_text("echo", json!({"text": "/tmp/x"})), "/tmp/x");
    for text in [path(&home, ".ssh/id_rsa"), format!("file://{}", path(&home, ".ssh/id_rsa")), path(&home, "w.yaml")] {
        let response = call(&mut client, "echo", json!({"text": text}));
        assert!(refused(&response), "{text}: {}", response.raw);
    }
}

#[test]
fn resources_and_prompts_naming_protected_files_are_refused_with_no_policy() {
    let dir = scratch_dir("protected-resources");
    let config_path = dir.join("warden.yaml");
    std::fs::write(&config_path, support::fixtures(&[("fx", &[])], "")).unwrap();
    // A link elsewhere to Warden's own configuration (protected by default).
    let elsewhere = scratch_dir("protected-resources-link");
    std::os::unix::fs::symlink(&config_path, elsewhere.join("notes.txt")).unwrap();
    let mut client = Client::start(&["serve", "--config", config_path.to_str().unwrap()], &[]);
    client.initialize();
    client.wait_for_tool("fx__echo");
    let config = config_path.display().to_string();
    for uri in [
        format!("file://{config}"),
        format!("FILE://localhost{}", config.replace("warden.yaml", "%77arden.yaml")),
        format!("file://{}", elsewhere.join("notes.txt").display()),
    ] {
        let read = client.request("resources/read", json!({"uri": uri}));
        assert_eq!(read["error"]["code"], -32011, "{uri}: {}", read.raw);
        let message = read["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("Denied by policy 'protected-path'"), "{uri}: {message}");
    }
    let prompt = client.request("prompts/get", json!({"name": "fx__greeting", "arguments": {"name": config}}));
    assert_eq!(prompt["error"]["code"], -32011, "{}", prompt.raw);
    // The rest reaches the server: a fixture resource, a file the server
    // does not serve (its own answer), a prompt with a plain argument.
    let readme = client.request("resources/read", json!({"uri": "fixture://readme"}));
    assert!(readme.value.get("result").is_some(), "{}", readme.raw);
    let other = client.request("resources/read", json!({"uri": "file:///etc/hostname"}));
    assert_eq!(other["error"]["code"], -32002, "the server's own not found: {}", other.raw);
    let greeting = client.request("prompts/get", json!({"name": "fx__greeting", "arguments": {"name": "Ada"}}));
    assert!(greeting.value.get("result").is_some(), "{}", greeting.raw);

    // Completion lists what is within a path, so a partial value within a
    // protected one is refused, as is one the client filled in before it.
    let greeting = json!({"type": "ref/prompt", "name": "fx__greeting"});
    for params in [
        json!({"ref": greeting, "argument": {"name": "name", "value": config}}),
        json!({"ref": greeting, "argument": {"name": "name", "value": "a"}, "context": {"arguments": {"dir": config}}}),
    ] {
        let completion = client.request("completion/complete", params.clone());
        assert_eq!(completion["error"]["code"], -32011, "{params}: {}", completion.raw);
    }
    let completion =
        client.request("completion/complete", json!({"ref": greeting, "argument": {"name": "name", "value": "a"}}));
    assert_eq!(completion["result"]["completion"]["values"], json!(["alice"]), "{}", completion.raw);
}

/// The official Python SDK (`interop/py_protected.py`) sees those refusals
/// (a resource, a prompt, a completion) as JSON-RPC errors, in both eras,
/// over stdio and over HTTP.
#[test]
fn the_python_sdk_is_refused_protected_resources_and_prompts_in_both_eras() {
    let interop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop");
    let python = interop.join(".venv/bin/python");
    if !python.exists() {
        let why = format!("{} is missing (run interop/install.sh)", python.display());
        assert!(std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(), "WARDEN_REQUIRE_INTEROP is set but {why}");
        println!("skipped: {why}");
        return;
    }
    let home = home("protected-sdk");
    let key = path(&home, ".ssh/id_rsa");
    let env = [("HOME", home.to_str().unwrap()), ("XDG_CONFIG_HOME", ""), ("XDG_STATE_HOME", "")];
    let run = |mode: &str, transport: &[&str]| {
        let output = std::process::Command::new(&python)
            .arg(interop.join("py_protected.py"))
            .args([mode, key.as_str()])
            .args(transport)
            .envs(env)
            .output()
            .expect("run the Python client");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success() && stdout.matches(r#""ok": true"#).count() == 6,
            "{mode} {transport:?}:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let warden = support::warden_bin();
    let fixture = fixture_bin();
    let stdio = ["--stdio", warden.to_str().unwrap(), "wrap", "--", fixture.as_str()];
    run("legacy", &stdio);
    run("2026-07-28", &stdio);
    let config = support::fixtures(&[("fx", &[])], "naming: {prefix: never}\n");
    let http = support::http::HttpWarden::start_with(&config, &["--http", "127.0.0.1:0"], &env);
    let url = format!("http://{}/mcp", http.addr);
    run("legacy", &["--url", &url]);
    run("2026-07-28", &["--url", &url]);
}
