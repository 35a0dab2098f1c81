//! End to end: servers confined by the per-server sandbox. A probe server
//! tries what a compromised server would (read a secret, write anywhere,
//! reach the network or a host socket, read its environment and /proc,
//! create namespaces); through Warden, only what the policy allows works.
//! Run with bwrap (namespaces + Landlock + seccomp + the egress proxy) and
//! again with Landlock and seccomp only.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::{Client, scratch_dir, warden_bin};

const CANARY: &str = "SECRET-CANARY-7f3a9";

fn probe_bin() -> String {
    let path = warden_bin().with_file_name("warden-probe");
    assert!(path.exists(), "{} is missing: run `cargo build -p warden-fixture`", path.display());
    path.to_string_lossy().into_owned()
}

/// Whether this machine can run the sandbox at all; CI installs bubblewrap.
/// Whether the bwrap tests can run here. CI installs bubblewrap, and a
/// skip there would hide a broken sandbox: where bwrap cannot work, this
/// fails unless `WARDEN_SKIP_BWRAP_TESTS` is set.
fn bwrap_usable() -> bool {
    if bwrap_works() {
        return true;
    }
    assert!(
        std::env::var_os("WARDEN_SKIP_BWRAP_TESTS").is_some(),
        "bwrap cannot create user namespaces here: install bubblewrap, or set WARDEN_SKIP_BWRAP_TESTS=1"
    );
    false
}

fn bwrap_works() -> bool {
    let output = std::process::Command::new(warden_bin()).args(["sandbox", "check"]).output().expect("run warden");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    report.contains("user namespaces: yes")
}

/// A fake home with a secret, a project directory, a host Unix socket that
/// answers, and a local HTTP server.
struct World {
    dir: PathBuf,
    home: PathBuf,
    project: PathBuf,
    outside: PathBuf,
    socket_hits: Arc<AtomicUsize>,
    http_port: u16,
}

impl World {
    fn new() -> World {
        let dir = scratch_dir("sandbox");
        let home = dir.join("home");
        let project = home.join("project");
        let outside = dir.join("outside");
        for path in [home.join(".ssh"), project.clone(), outside.clone()] {
            std::fs::create_dir_all(path).unwrap();
        }
        std::fs::write(home.join(".ssh/id_rsa"), CANARY).unwrap();
        std::fs::write(home.join("notes.txt"), "readable notes").unwrap();
        let socket_hits = Arc::new(AtomicUsize::new(0));
        let listener = UnixListener::bind(project.join("host.sock")).unwrap();
        let hits = socket_hits.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                hits.fetch_add(1, Ordering::SeqCst);
                let _ = stream.write_all(b"HOST-REACHED");
            }
        });
        let http = TcpListener::bind("127.0.0.1:0").unwrap();
        let http_port = http.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut stream in http.incoming().flatten() {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer);
                let body = "ALLOWED-PAGE";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        World { dir, home, project, outside, socket_hits, http_port }
    }

    /// Fills the home with `count` empty files, beside its secret.
    fn crowd_home(&self, count: usize) {
        for index in 0..count {
            std::fs::write(self.home.join(format!("entry-{index:05}")), "").unwrap();
        }
    }

    fn audit(&self) -> PathBuf {
        self.dir.join("audit.jsonl")
    }

    /// Starts `warden serve` with one probe server under `sandbox`, and
    /// `top` as the top-level `sandbox:` section.
    fn serve(&self, top: &str, sandbox: &str) -> Client {
        let config = format!(
            "sandbox: {top}\naudit: {{path: {:?}}}\nservers:\n  probe:\n    transport: {{kind: stdio, command: {:?}, env: {{SERVER_SECRET: from-config}}}}\n    sandbox: {sandbox}\n",
            self.audit(),
            probe_bin()
        );
        let path = self.dir.join("warden.yaml");
        std::fs::write(&path, config).unwrap();
        let home = self.home.to_str().unwrap();
        let env = [("HOME", home), ("PASSED_VAR", "passed"), ("LEAKED_VAR", "leaked")];
        let mut client = Client::start(&["serve", "--config", path.to_str().unwrap()], &env);
        client.initialize();
        client
    }
}

// Tests leave nothing in /tmp: thousands of stale scratch directories once
// made a carved /tmp too big to launch.
impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Calls a probe tool: `Ok(text)` or `Err(text)` for an `isError` result.
fn probe(client: &mut Client, tool: &str, args: Value) -> Result<String, String> {
    let result = client.call_tool(&format!("probe__{tool}"), args);
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(!text.contains(CANARY), "{tool} showed the canary: {text}");
    if result["isError"] == true { Err(text) } else { Ok(text) }
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What holds in every mode: secrets, writes, host sockets, environment,
/// namespaces.
fn assert_confined(client: &mut Client, world: &World) {
    let secret = probe(client, "read_file", json!({"path": path(&world.home.join(".ssh/id_rsa"))})).unwrap_err();
    assert!(secret.starts_with("[SANDBOX BLOCKED]"), "{secret}");
    probe(client, "list_dir", json!({"path": path(&world.home.join(".ssh"))})).unwrap_err();
    assert_eq!(
        probe(client, "read_file", json!({"path": path(&world.home.join("notes.txt"))})).unwrap(),
        "readable notes"
    );

    let inside = world.project.join("out.txt");
    assert_eq!(probe(client, "write_file", json!({"path": path(&inside), "text": "ok"})).unwrap(), "written");
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "ok");
    let outside = world.outside.join("x.txt");
    probe(client, "write_file", json!({"path": path(&outside), "text": "no"})).unwrap_err();
    let read_only = world.home.join("notes.txt");
    let refused = probe(client, "write_file", json!({"path": path(&read_only), "text": "no"})).unwrap_err();
    assert!(refused.starts_with("[SANDBOX BLOCKED]"), "{refused}");
    assert!(!outside.exists());
    assert_eq!(std::fs::read_to_string(&read_only).unwrap(), "readable notes");
    probe(client, "write_file", json!({"path": "/etc/warden-probe", "text": "no"})).unwrap_err();

    let socket = probe(client, "unix_connect", json!({"path": path(&world.project.join("host.sock"))})).unwrap_err();
    assert!(!socket.contains("HOST-REACHED"), "{socket}");
    assert_eq!(world.socket_hits.load(Ordering::SeqCst), 0);

    let env = probe(client, "env", json!({})).unwrap();
    assert!(env.contains("PASSED_VAR=passed") && env.contains("SET_VAR=set-value"), "{env}");
    assert!(env.contains("SERVER_SECRET=from-config"), "{env}");
    assert!(!env.contains("LEAKED_VAR"), "{env}");
    let warden_environ = format!("/proc/{}/environ", client.pid());
    probe(client, "read_file", json!({"path": warden_environ})).unwrap_err();

    probe(client, "spawn", json!({"command": "unshare", "args": ["--user", "--map-root-user", "true"]})).unwrap_err();
    probe(client, "spawn", json!({"command": "mount", "args": ["-t", "tmpfs", "none", path(&world.project)]}))
        .unwrap_err();

    probe(client, "connect", json!({"host": "127.0.0.1", "port": world.http_port})).unwrap_err();
    probe(client, "udp", json!({"host": "1.1.1.1", "port": 53})).unwrap_err();
    probe(client, "resolve", json!({"name": "example.com"})).unwrap_err();
}

fn assert_no_canary_in_audit(world: &World) {
    let audit = std::fs::read_to_string(world.audit()).unwrap_or_default();
    assert!(!audit.contains(CANARY), "the canary reached the audit log");
}

fn policy(world: &World, network: &str) -> String {
    format!(
        "{{network: {network}, filesystem: {{read: [{:?}], write: [{:?}]}}, env: {{pass: [PASSED_VAR], set: {{SET_VAR: set-value}}}}}}",
        path(&world.home),
        path(&world.project)
    )
}

#[test]
fn bwrap_sandbox_allows_only_what_the_policy_lists() {
    if !bwrap_usable() {
        return;
    }
    let world = World::new();
    let port = world.http_port;
    let hosts = "{allowed.test: 127.0.0.1, refused.test: 127.0.0.1, rebind.test: 127.0.0.2}";
    let network = format!("{{allow: [\"allowed.test:{port}\", \"rebind.test\", \"127.0.0.1:{port}\"]}}");
    let mut client = world.serve(&format!("{{mechanism: bwrap, hosts: {hosts}}}"), &policy(&world, &network));
    client.wait_for_tool("probe__env");

    assert_confined(&mut client, &world);
    let pids = probe(&mut client, "read_proc", json!({})).unwrap();
    assert!(pids.split(' ').count() < 8, "/proc shows more than the sandbox: {pids}");

    let page = probe(&mut client, "http_get", json!({"url": format!("http://allowed.test:{port}/")})).unwrap();
    assert!(page.contains("ALLOWED-PAGE"), "{page}");
    let refused = probe(&mut client, "http_get", json!({"url": format!("http://refused.test:{port}/")})).unwrap_err();
    assert!(refused.contains("403") && refused.contains("[SANDBOX BLOCKED]"), "{refused}");
    assert!(
        refused.contains(&format!("refused.test:{port}")) && refused.contains("servers.probe.sandbox.network.allow"),
        "{refused}"
    );
    // Real clients find the proxy through the variables Warden sets.
    let url = format!("http://allowed.test:{port}/");
    if Path::new("/usr/bin/curl").exists() {
        let page = probe(&mut client, "spawn", json!({"command": "/usr/bin/curl", "args": ["-sS", &url]})).unwrap();
        assert!(page.contains("ALLOWED-PAGE"), "{page}");
    }
    if Path::new("/usr/bin/python3").exists() {
        let script = format!("import urllib.request; print(urllib.request.urlopen('{url}').read().decode())");
        let page = probe(&mut client, "spawn", json!({"command": "/usr/bin/python3", "args": ["-c", script]})).unwrap();
        assert!(page.contains("ALLOWED-PAGE"), "{page}");
    }
    let rebound = probe(&mut client, "http_get", json!({"url": format!("http://rebind.test:{port}/")})).unwrap_err();
    assert!(rebound.contains("403") && rebound.contains("127.0.0.2"), "{rebound}");

    client.close();
    let audit = std::fs::read_to_string(world.audit()).unwrap();
    let denials: Vec<Value> = audit
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["method"] == "sandbox/network")
        .collect();
    let hosts: Vec<&str> = denials.iter().filter_map(|record| record["name"].as_str()).collect();
    assert!(hosts.contains(&format!("refused.test:{port}").as_str()), "{audit}");
    assert!(hosts.contains(&format!("rebind.test:{port}").as_str()), "{audit}");
    assert!(denials.iter().all(|record| record["server"] == "probe" && record["decision"]["verdict"] == "deny"));
    assert_no_canary_in_audit(&world);
}

#[test]
fn landlock_only_sandbox_confines_without_namespaces() {
    let world = World::new();
    let mut client = world.serve("{mechanism: landlock}", &policy(&world, "{allow: []}"));
    client.wait_for_tool("probe__env");
    assert_confined(&mut client, &world);
    probe(&mut client, "connect", json!({"host": "1.1.1.1", "port": 443})).unwrap_err();
    client.close();
    assert_no_canary_in_audit(&world);
}

#[test]
fn landlock_only_refuses_a_domain_allowlist() {
    let world = World::new();
    let mut client = world.serve("{mechanism: landlock}", "{network: {allow: [example.com]}}");
    client.wait_stderr("needs user namespaces");
    let answer = client.request("tools/call", json!({"name": "probe__env", "arguments": {}}));
    assert!(answer.raw.contains("not started because its sandbox cannot be set up"), "{}", answer.raw);
}

#[test]
fn enforce_without_bwrap_refuses_to_start_and_warn_starts_unsandboxed() {
    let world = World::new();
    let missing = "{mechanism: bwrap, bwrap: /nonexistent/bwrap}";
    let mut client = world.serve(missing, "{mode: enforce}");
    client.wait_stderr("bwrap is unavailable");
    let answer = client.request("tools/call", json!({"name": "probe__env", "arguments": {}}));
    assert!(answer.raw.contains("not started because its sandbox cannot be set up"), "{}", answer.raw);
    drop(client);

    let mut client = world.serve(missing, "{mode: warn}");
    client.wait_for_tool("probe__env");
    assert!(client.stderr().contains("WITHOUT its sandbox"), "{}", client.stderr());
    // Unsandboxed, as warned: Warden's environment is inherited.
    assert!(probe(&mut client, "env", json!({})).unwrap().contains("LEAKED_VAR=leaked"));
    // And the audit log says so, with the reason.
    let audit = std::fs::read_to_string(world.audit()).unwrap_or_default();
    let unsandboxed: Vec<Value> = audit
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["method"] == "sandbox/unsandboxed")
        .collect();
    assert_eq!(unsandboxed.len(), 1, "one record for the one unsandboxed start: {audit}");
    assert_eq!(unsandboxed[0]["server"], "probe");
    assert!(unsandboxed[0].to_string().contains("bwrap is unavailable"), "{audit}");
}

#[test]
fn wrap_sandbox_runs_the_command_under_the_restrictive_default() {
    let world = World::new();
    let home = world.home.to_str().unwrap();
    // An empty config, except where bwrap cannot run: Landlock only there.
    let top = if bwrap_works() { "{}" } else { "sandbox: {mechanism: landlock}" };
    let config = world.dir.join("wrap.yaml");
    std::fs::write(&config, top).unwrap();
    let probe_path = probe_bin();
    let args = ["wrap", "--config", path(&config), "--sandbox", "--", probe_path.as_str()];
    let env = [("HOME", home), ("LEAKED_VAR", "leaked")];
    let mut client = Client::start(&args, &env);
    client.initialize();
    client.wait_for_tool("env");
    let call = |client: &mut Client, tool: &str, args: Value| {
        let result = client.call_tool(tool, args);
        (result["isError"] == true, result["content"][0]["text"].as_str().unwrap_or_default().to_owned())
    };
    let (failed, env_text) = call(&mut client, "env", json!({}));
    assert!(!failed && env_text.contains("WARDEN_SANDBOX=1") && !env_text.contains("LEAKED_VAR"), "{env_text}");
    let (failed, secret) = call(&mut client, "read_file", json!({"path": path(&world.home.join(".ssh/id_rsa"))}));
    assert!(failed && !secret.contains(CANARY), "{secret}");
    let (failed, _) = call(&mut client, "write_file", json!({"path": path(&world.project.join("x")), "text": "x"}));
    assert!(failed, "the restrictive default has no writable project");
}

#[test]
fn status_shows_how_each_server_was_started() {
    let world = World::new();
    let probe = probe_bin();
    let config = format!(
        "sandbox: {{mechanism: landlock}}\nservers:\n  boxed:\n    transport: {{kind: stdio, command: {probe:?}}}\n    sandbox: true\n  open:\n    transport: {{kind: stdio, command: {probe:?}}}\n    sandbox: {{mode: warn, network: {{allow: [example.com]}}}}\n"
    );
    let home = world.home.to_str().unwrap();
    let warden = support::http::HttpWarden::start_with(&config, &["--http", "127.0.0.1:0"], &[("HOME", home)]);
    let mut client = warden.client();
    client.initialize();
    let deadline = std::time::Instant::now() + support::PATIENCE;
    let status = loop {
        let status = support::http::send(&warden.addr, "GET", "/status", &[], b"").json();
        let upstreams = status["sessions"][0]["upstreams"].clone();
        if upstreams.as_array().is_some_and(|all| all.iter().all(|upstream| upstream["state"] == "ready")) {
            break upstreams;
        }
        assert!(std::time::Instant::now() < deadline, "servers never became ready: {status}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let sandbox = |name: &str| {
        let upstream = status.as_array().unwrap().iter().find(|upstream| upstream["name"] == name).unwrap();
        upstream["sandbox"].as_str().unwrap_or_default().to_owned()
    };
    assert!(sandbox("boxed").starts_with("sandboxed: landlock+seccomp"), "{status}");
    // A domain allowlist cannot be enforced by Landlock alone: warn runs it unsandboxed, and says so.
    assert!(sandbox("open").starts_with("UNSANDBOXED: ") && sandbox("open").contains("user namespaces"), "{status}");
}

/// An allowed directory with 20,000 entries and denied paths inside it (the
/// built-in `~/.ssh`, the policy's `~/private`): the server starts, reads
/// what is allowed, and not what is denied. The launcher's arguments once
/// grew with the directory until exec failed with E2BIG.
fn crowded_allowed_directory(mechanism: &str) {
    let world = World::new();
    world.crowd_home(20_000);
    let private = world.home.join("private");
    std::fs::create_dir_all(&private).unwrap();
    std::fs::write(private.join("secret.txt"), CANARY).unwrap();
    let sandbox = format!("{{filesystem: {{read: [{:?}], deny: [{:?}]}}}}", path(&world.home), path(&private));
    let mut client = world.serve(&format!("{{mechanism: {mechanism}}}"), &sandbox);
    client.wait_for_tool("probe__env");
    assert_eq!(
        probe(&mut client, "read_file", json!({"path": path(&world.home.join("notes.txt"))})).unwrap(),
        "readable notes"
    );
    assert_eq!(probe(&mut client, "read_file", json!({"path": path(&world.home.join("entry-19999"))})).unwrap(), "");
    for denied in [world.home.join(".ssh/id_rsa"), private.join("secret.txt")] {
        let refused = probe(&mut client, "read_file", json!({"path": path(&denied)})).unwrap_err();
        assert!(refused.starts_with("[SANDBOX BLOCKED]"), "{refused}");
    }
    probe(&mut client, "list_dir", json!({"path": path(&private)})).unwrap_err();
    client.close();
    assert_no_canary_in_audit(&world);
}

#[test]
fn bwrap_sandbox_starts_with_a_crowded_allowed_directory() {
    if !bwrap_usable() {
        return;
    }
    crowded_allowed_directory("bwrap");
}

#[test]
fn landlock_only_sandbox_starts_with_a_crowded_allowed_directory() {
    crowded_allowed_directory("landlock");
}
