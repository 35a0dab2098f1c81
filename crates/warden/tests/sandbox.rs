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
        // The policy's own protection of `~/.ssh` is lifted: these tests
        // reach the sandbox, the layer under it.
        let config = format!(
            "sandbox: {top}\npolicy: {{unprotectDefaults: [\"~/.ssh\"]}}\naudit: {{path: {:?}}}\nmetrics: {{listen: 0, open: true}}\nservers:\n  probe:\n    transport: {{kind: stdio, command: {:?}, env: {{SERVER_SECRET: from-config}}}}\n    sandbox: {sandbox}\n",
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

/// The value of the metric sample `series` (name and labels, as rendered)
/// that `client`'s Warden serves now.
fn metric(client: &mut Client, series: &str) -> Option<f64> {
    let addr = support::metrics::listener(client);
    support::metrics::sample(&support::http::send(&addr, "GET", "/metrics", &[], b"").body(), series)
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
    // The file operations it refused (the secret read, the read-only write,
    // ...) are counted from the marked errors the probe reported.
    let refused = metric(&mut client, r#"warden_sandbox_refusals_total{server="probe",kind="filesystem"}"#);
    assert!(refused.is_some_and(|count| count >= 2.0), "{refused:?}");
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
    let is_unsandboxed = |record: &&Value| record["method"] == "sandbox/unsandboxed";
    let audit = support::wait_for_audit(&world.audit(), |records| records.iter().any(|r| is_unsandboxed(&r)));
    let unsandboxed: Vec<Value> = audit.iter().filter(is_unsandboxed).cloned().collect();
    assert_eq!(unsandboxed.len(), 1, "one record for the one unsandboxed start: {audit:#?}");
    assert_eq!(unsandboxed[0]["server"], "probe");
    assert!(unsandboxed[0].to_string().contains("bwrap is unavailable"), "{audit:#?}");
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

/// What a hostile server tries below the file and network level, from a
/// Python child of the probe (real system calls through ctypes): io_uring
/// (whose `IORING_OP_SOCKET` once created the Unix socket `socket(2)`
/// refused), socket families the sandbox has no use for (vsock, Bluetooth,
/// packet, Unix), tracing and reading its launcher `sandbox-init`.
const HOSTILE_SYSCALLS: &str = r#"
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def err(code): return errno.errorcode.get(code, str(code))
seen = []
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 8, params)
seen.append("io_uring_setup=" + (str(fd) if fd >= 0 else err(ctypes.get_errno())))
for call in (426, 427):
    result = libc.syscall(call, 0, 0, 0, 0, 0, 0)
    seen.append("io_uring_%d=%s" % (call, result if result >= 0 else err(ctypes.get_errno())))
for family in ("AF_VSOCK", "AF_UNIX", "AF_BLUETOOTH", "AF_PACKET", "AF_ALG", "AF_TIPC", "AF_KEY"):
    try:
        socket.socket(getattr(socket, family, 0), socket.SOCK_STREAM)
        seen.append(family + "=created")
    except OSError as e:
        seen.append(family + "=" + err(e.errno))
# Its own launcher: the ancestor that is `warden sandbox-init`.
pid = os.getppid()
while pid > 1:
    cmdline = open("/proc/%d/cmdline" % pid, "rb").read()
    if b"sandbox-init" in cmdline:
        break
    pid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
else:
    seen.append("launcher=not-found")
if pid > 1:
    for what in ("environ", "mem"):
        try:
            open("/proc/%s/%s" % (pid, what), "rb").read(16)
            seen.append("launcher_%s=read" % what)
        except OSError as e:
            seen.append("launcher_%s=%s" % (what, err(e.errno)))
    result = libc.ptrace(16, int(pid), 0, 0)
    seen.append("launcher_ptrace=" + (str(result) if result >= 0 else err(ctypes.get_errno())))
print(" ".join(seen))
"#;

fn hostile_syscalls_are_refused(mechanism: &str) {
    let world = World::new();
    let mut client = world.serve(&format!("{{mechanism: {mechanism}}}"), &policy(&world, "{allow: []}"));
    client.wait_for_tool("probe__env");
    let seen =
        probe(&mut client, "spawn", json!({"command": "/usr/bin/python3", "args": ["-c", HOSTILE_SYSCALLS]})).unwrap();
    let seen = seen.trim_start_matches(|c| c != ':').trim_start_matches(':').trim();
    for refused in [
        "io_uring_setup=EPERM",
        "io_uring_426=EPERM",
        "io_uring_427=EPERM",
        "AF_VSOCK=EPERM",
        "AF_UNIX=EPERM",
        "AF_BLUETOOTH=EPERM",
        "AF_PACKET=EPERM",
        "AF_ALG=EPERM",
        "AF_TIPC=EPERM",
        "AF_KEY=EPERM",
        "launcher_environ=EACCES",
        "launcher_mem=EACCES",
        "launcher_ptrace=EPERM",
    ] {
        assert!(seen.split(' ').any(|item| item == refused), "{mechanism}: expected {refused} in {seen}");
    }
    client.close();
}

#[test]
fn bwrap_sandbox_refuses_io_uring_other_socket_families_and_its_launcher() {
    if !bwrap_usable() {
        return;
    }
    hostile_syscalls_are_refused("bwrap");
}

#[test]
fn landlock_only_sandbox_refuses_io_uring_other_socket_families_and_its_launcher() {
    hostile_syscalls_are_refused("landlock");
}

/// Where an allowed name may not lead: to this machine's own interfaces
/// (a listener on all interfaces answers there) or to a special-purpose
/// address (here a documentation one), unless the address itself is
/// listed. Warden runs in a network namespace of the test's own, whose
/// interface holds both addresses, with a listener on all of them.
#[test]
fn an_allowed_name_cannot_lead_to_this_machines_own_addresses() {
    if !bwrap_usable() {
        return;
    }
    let netns_works = std::process::Command::new("unshare")
        .args(["-n", "ip", "addr", "add", "45.0.0.1/32", "dev", "lo"])
        .status()
        .is_ok_and(|status| status.success());
    assert!(netns_works, "this test needs `unshare -n` and `ip addr add` (root)");
    let world = World::new();
    let config = format!(
        "sandbox: {{mechanism: bwrap, hosts: {{pub.test: 45.0.0.1, doc.test: 198.51.100.7}}}}\naudit: {{path: {:?}}}\nservers:\n  probe:\n    transport: {{kind: stdio, command: {:?}}}\n    sandbox: {{network: {{allow: [\"pub.test:8080\", \"doc.test:8080\", \"45.0.0.2:8080\"]}}}}\n",
        world.audit(),
        probe_bin()
    );
    let config_path = world.dir.join("warden.yaml");
    std::fs::write(&config_path, config).unwrap();
    // The namespace: its interface with both addresses (on `lo`: no other
    // kind of interface may exist here), an HTTP listener on all of them
    // (waited for), then Warden.
    let listener = "import ctypes, http.server\nctypes.CDLL(None).prctl(1, 9)\nclass H(http.server.BaseHTTPRequestHandler):\n  def do_GET(self):\n    self.send_response(200); self.send_header('Content-Length','12'); self.end_headers(); self.wfile.write(b'HOST-REACHED')\n  def log_message(self,*a): pass\nhttp.server.HTTPServer(('0.0.0.0',8080),H).serve_forever()\n";
    // (The shell polls for the listener: a condition, not a timing.)
    let script = "set -e; ip link set lo up; ip addr add 45.0.0.1/32 dev lo; ip addr add 45.0.0.2/32 dev lo; ip addr add 198.51.100.7/32 dev lo; /usr/bin/python3 -c \"$LISTENER\" & until /usr/bin/python3 -c \"import socket; socket.create_connection(('45.0.0.1', 8080))\" 2>/dev/null; do sleep 0.05; done; exec \"$0\" \"$@\"";
    let home = world.home.to_str().unwrap();
    let wrapper = ["unshare", "-n", "--kill-child", "sh", "-c", script];
    let env = [("HOME", home), ("LISTENER", listener)];
    let mut client = Client::start_under(&wrapper, &["serve", "--config", path(&config_path)], &env);
    client.initialize();
    client.wait_for_tool("probe__env");

    // An address of this machine listed itself: the listener answers (the
    // setup works).
    let listed = probe(&mut client, "http_get", json!({"url": "http://45.0.0.2:8080/"})).unwrap();
    assert!(listed.contains("HOST-REACHED"), "{listed}");
    for name in ["pub.test", "doc.test"] {
        let refused = probe(&mut client, "http_get", json!({"url": format!("http://{name}:8080/")})).unwrap_err();
        assert!(!refused.contains("HOST-REACHED"), "{name} reached this machine: {refused}");
        assert!(refused.contains("403") && refused.contains("[SANDBOX BLOCKED]"), "{refused}");
    }
    client.close();
}

/// `warden wrap --sandbox -- PROGRAM ARGS` with `home` as HOME, in the
/// mechanism this machine has.
fn wrap_probe(world: &World, extra_args: &[&str]) -> Client {
    let top = if bwrap_works() { "{}" } else { "sandbox: {mechanism: landlock}" };
    let config = world.dir.join("wrap.yaml");
    std::fs::write(&config, top).unwrap();
    let probe_path = probe_bin();
    let mut args = vec!["wrap", "--config", path(&config), "--sandbox", "--", probe_path.as_str()];
    args.extend(extra_args);
    let mut client = Client::start(&args, &[("HOME", world.home.to_str().unwrap())]);
    client.initialize();
    client.wait_for_tool("env");
    client
}

fn home_of(client: &mut Client) -> String {
    let env = client.call_tool("env", json!({}))["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    env.lines().find_map(|line| line.strip_prefix("HOME=")).expect("HOME is set").to_owned()
}

/// Two wrapped servers whose programs have the same name (here the same
/// program, run for two different scripts): each has a state directory of
/// its own, so what one plants in its home (a `.gitconfig` with a
/// `core.fsmonitor` command) the other never runs.
#[test]
fn two_servers_with_the_same_program_never_share_a_state_directory() {
    let world = World::new();
    let mut first = wrap_probe(&world, &["first-script.py"]);
    let mut second = wrap_probe(&world, &["second-script.py"]);
    let (first_home, second_home) = (home_of(&mut first), home_of(&mut second));
    assert_ne!(first_home, second_home, "both servers run in {first_home}");
    let planted = format!("{first_home}/.gitconfig");
    let written = first.call_tool("write_file", json!({"path": planted, "text": "[core]\n\tfsmonitor = evil\n"}));
    assert_ne!(written["isError"], true, "{written}");
    let seen = second.call_tool("read_file", json!({"path": format!("{second_home}/.gitconfig")}));
    assert_eq!(seen["isError"], true, "the second server sees the first one's file: {seen}");
    // The same server started again finds its own state.
    drop(first);
    let mut again = wrap_probe(&world, &["first-script.py"]);
    assert_eq!(home_of(&mut again), first_home);
}

/// A server replaces what it may write with links to a secret directory:
/// a configured readable path inside its writable project (`docs ->
/// ~/.ssh`) and, with Landlock only, its `$TMPDIR` (in its state
/// directory). Its next start follows neither.
fn never_follows_planted_links(mechanism: &str) {
    let world = World::new();
    let docs = world.project.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let sandbox = format!("{{filesystem: {{read: [{:?}], write: [{:?}]}}}}", path(&docs), path(&world.project));
    let mut client = world.serve(&format!("{{mechanism: {mechanism}}}"), &sandbox);
    client.wait_for_tool("probe__env");
    let env = probe(&mut client, "env", json!({})).unwrap();
    let tmp = env.lines().find_map(|line| line.strip_prefix("TMPDIR=")).expect("TMPDIR").to_owned();
    let landlock = mechanism == "landlock";
    let ssh = path(&world.home.join(".ssh")).to_owned();
    let mut planted =
        format!("import os, shutil\nshutil.rmtree({:?})\nos.symlink({ssh:?}, {:?})\n", path(&docs), path(&docs));
    if landlock {
        planted.push_str(&format!("shutil.rmtree({tmp:?})\nos.symlink({ssh:?}, {tmp:?})\n"));
    }
    planted.push_str("print('planted')");
    let done = probe(&mut client, "spawn", json!({"command": "/usr/bin/python3", "args": ["-c", planted]}));
    assert!(done.as_deref().is_ok_and(|text| text.contains("planted")), "{done:?}");
    client.close();

    let mut client = world.serve(&format!("{{mechanism: {mechanism}}}"), &sandbox);
    client.wait_for_tool("probe__env");
    let mut secrets = vec![path(&docs.join("id_rsa")).to_owned()];
    if landlock {
        secrets.push(format!("{tmp}/id_rsa"));
    }
    for secret in secrets {
        // Refused or absent (bwrap binds neither the link nor its target);
        // `probe` fails the test if the canary shows.
        probe(&mut client, "read_file", json!({"path": secret})).unwrap_err();
    }
    let written = probe(&mut client, "write_file", json!({"path": format!("{tmp}/authorized_keys"), "text": "x"}));
    assert_eq!(written.as_deref(), Ok("written"), "TMPDIR is a real directory again");
    assert!(!world.home.join(".ssh/authorized_keys").exists(), "the server wrote into ~/.ssh");
    if landlock {
        // What namespaces would hide and this mode can: shared memory.
        let listed = probe(&mut client, "list_dir", json!({"path": "/dev/shm"}));
        assert!(listed.is_err(), "/dev/shm is visible: {listed:?}");
    }
    client.close();
}

#[test]
fn landlock_only_never_follows_links_a_server_planted_for_its_next_start() {
    never_follows_planted_links("landlock");
}

#[test]
fn bwrap_never_follows_links_a_server_planted_for_its_next_start() {
    if !bwrap_usable() {
        return;
    }
    never_follows_planted_links("bwrap");
}

/// `warden serve --config project/warden.yaml` with the server allowed to
/// write `project/`: it can neither rewrite the configuration (to turn its
/// own sandbox off at the next reload), nor replace it by renaming a file
/// over it, nor touch the audit log kept there.
fn warden_files_are_denied(mechanism: &str) {
    let world = World::new();
    let config_path = world.project.join("warden.yaml");
    let audit = world.project.join("audit.jsonl");
    // The approval exchange directory: a server that could write there
    // could answer its own escalation.
    let exchange = world.project.join("exchange");
    // The policy's protection of these files is lifted: the calls must reach
    // the sandbox, the layer under it.
    let unprotect = format!(
        "[{:?}, {:?}, {:?}, {:?}, {:?}]",
        path(&config_path),
        path(&audit),
        format!("{}.1", path(&audit)),
        format!("{}.2", path(&audit)),
        path(&exchange)
    );
    let config = format!(
        "sandbox: {{mechanism: {mechanism}}}\npolicy: {{unprotectDefaults: {unprotect}}}\naudit: {{path: {:?}, keep: 2}}\napproval: {{exchangeDir: {:?}, socket: {:?}}}\nservers:\n  probe:\n    transport: {{kind: stdio, command: {:?}}}\n    sandbox: {{filesystem: {{write: [{:?}]}}}}\n",
        audit,
        exchange,
        world.home.join("approvals.sock"),
        probe_bin(),
        path(&world.project)
    );
    std::fs::write(&config_path, &config).unwrap();
    let other = world.project.join("notes").join("x.txt");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    let home = world.home.to_str().unwrap();
    let mut client =
        Client::start(&["serve", "--config", path(&config_path)], &[("HOME", home), ("LEAKED_VAR", "leaked")]);
    client.initialize();
    client.wait_for_tool("probe__env");
    let loosened = config.replace("filesystem:", "mode: off, filesystem:");
    probe(&mut client, "write_file", json!({"path": path(&config_path), "text": loosened})).unwrap_err();
    let replace = format!(
        "import os\nopen({:?}, 'w').write({loosened:?})\nos.rename({:?}, {:?})\nprint('replaced')",
        path(&world.project.join("new.yaml")),
        path(&world.project.join("new.yaml")),
        path(&config_path)
    );
    let replaced = probe(&mut client, "spawn", json!({"command": "/usr/bin/python3", "args": ["-c", replace]}));
    assert!(replaced.is_err(), "{replaced:?}");
    probe(&mut client, "write_file", json!({"path": path(&audit), "text": "forged"})).unwrap_err();
    let rotated = world.project.join("audit.jsonl.1");
    probe(&mut client, "write_file", json!({"path": path(&rotated), "text": "forged"})).unwrap_err();
    let answer = exchange.join("response-forged.json");
    probe(&mut client, "write_file", json!({"path": path(&answer), "text": r#"{"decision":"approved"}"#})).unwrap_err();
    assert!(!answer.exists() && !rotated.exists(), "a server wrote into Warden's own files");
    probe(&mut client, "read_file", json!({"path": path(&config_path)})).unwrap_err();
    assert_eq!(std::fs::read_to_string(&config_path).unwrap(), config, "the configuration was changed");
    // Writing elsewhere in the project still works (in what existed at the
    // start: a directory holding a denied path is allowed entry by entry).
    assert_eq!(probe(&mut client, "write_file", json!({"path": path(&other), "text": "ok"})).unwrap(), "written");
    assert!(!probe(&mut client, "env", json!({})).unwrap().contains("LEAKED_VAR"));
    client.close();
}

#[test]
fn bwrap_sandbox_denies_wardens_own_files_whatever_write_says() {
    if !bwrap_usable() {
        return;
    }
    warden_files_are_denied("bwrap");
}

#[test]
fn landlock_only_sandbox_denies_wardens_own_files_whatever_write_says() {
    warden_files_are_denied("landlock");
}

/// A server that tries to take the machine down: a fork bomb, a full
/// `/tmp`, a memory hog (in a child, which the limit may kill).
const HOG: &str = r#"
import errno, os, time
pids = []
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.kill(pid, 9)
for pid in pids:
    os.waitpid(pid, 0)
seen = ["forked=%d" % len(pids)]
try:
    with open(os.environ.get("TMPDIR", "/tmp") + "/fill", "wb") as out:
        for _ in range(64):
            out.write(b"x" * 1024 * 1024)
            out.flush()
    seen.append("tmp=filled")
except OSError as e:
    seen.append("tmp=" + errno.errorcode.get(e.errno, str(e.errno)))
pid = os.fork()
if pid == 0:
    try:
        block = bytearray(512 * 1024 * 1024)
        for at in range(0, len(block), 4096):
            block[at] = 1
        os._exit(0)
    except MemoryError:
        os._exit(3)
_, status = os.waitpid(pid, 0)
seen.append("memory=" + ("allocated" if status == 0 else "refused"))
print(" ".join(seen))
"#;

fn resources_are_limited(mechanism: &str) {
    let world = World::new();
    let limits = "limits: {processes: 40, memoryMb: 128, tmpMb: 16}";
    let mut client = world.serve(&format!("{{mechanism: {mechanism}}}"), &format!("{{{limits}}}"));
    client.wait_for_tool("probe__env");
    let seen = probe(&mut client, "spawn", json!({"command": "/usr/bin/python3", "args": ["-c", HOG]})).unwrap();
    let value = |key: &str| {
        seen.split_whitespace().find_map(|item| item.strip_prefix(&format!("{key}="))).unwrap_or_default().to_owned()
    };
    let forked: usize = value("forked").parse().unwrap_or(usize::MAX);
    assert!(forked < 40, "{mechanism}: {forked} processes started: {seen}");
    assert_eq!(value("memory"), "refused", "{mechanism}: {seen}");
    if mechanism == "bwrap" {
        assert!(["ENOSPC", "EFBIG"].contains(&value("tmp").as_str()), "{mechanism}: {seen}");
    }
    client.close();
}

#[test]
fn bwrap_sandbox_limits_processes_memory_and_tmp() {
    if !bwrap_usable() {
        return;
    }
    resources_are_limited("bwrap");
}

#[test]
fn landlock_only_sandbox_limits_processes_and_memory() {
    resources_are_limited("landlock");
}

/// Ten connections to the egress proxy, each sending half a request head
/// and nothing more: beyond the cap they are answered 503 at once, the
/// others 408 once the head timeout passes; none is held forever.
const HALF_SENT: &str = r#"
import select, socket, sys, time
port = int(sys.argv[1])
socks = []
for _ in range(10):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(("CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test\r\n" % port).encode())
    socks.append(s)
answers = {}
deadline = time.time() + 30
while len(answers) < len(socks) and time.time() < deadline:
    ready, _, _ = select.select([s for s in socks if s not in answers], [], [], 1)
    for s in ready:
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        answers[s] = data.split(b"\r\n")[0].decode(errors="replace")
codes = [answer.split(" ")[1] if " " in answer else "closed" for answer in answers.values()]
print("closed=%d 503=%d 408=%d" % (len(answers), codes.count("503"), codes.count("408")))
"#;

#[test]
fn the_egress_proxy_caps_connections_and_times_out_half_sent_heads() {
    if !bwrap_usable() {
        return;
    }
    let world = World::new();
    let port = world.http_port;
    let network = format!("{{allow: [\"allowed.test:{port}\", \"127.0.0.1:{port}\"]}}");
    let sandbox = format!("{{network: {network}, limits: {{proxyConnections: 4, proxyHeaderTimeoutSecs: 1}}}}");
    let mut client = world.serve("{mechanism: bwrap, hosts: {allowed.test: 127.0.0.1}}", &sandbox);
    client.wait_for_tool("probe__env");
    let seen = probe(
        &mut client,
        "spawn",
        json!({"command": "/usr/bin/python3", "args": ["-c", HALF_SENT, port.to_string()]}),
    )
    .unwrap();
    let count = |key: &str| -> usize {
        seen.split_whitespace().find_map(|item| item.strip_prefix(&format!("{key}="))?.parse().ok()).unwrap_or(0)
    };
    // Every one answered and closed; at least one over the cap (how many
    // depends on how fast the ten were opened against the one-second timeout).
    assert!(count("closed") == 10 && count("503") + count("408") == 10 && count("503") >= 1, "{seen}");
    // The proxy still serves once they are gone.
    let page = probe(&mut client, "http_get", json!({"url": format!("http://allowed.test:{port}/")})).unwrap();
    assert!(page.contains("ALLOWED-PAGE"), "{page}");
    client.close();
}

/// A stdio MCP server in Python, standard library only, with a tool that
/// reads a file beside it (what `import` of a neighbour needs) and one that
/// writes beside it.
const PY_SERVER: &str = r#"
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "py", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in ("neighbour", "scribble")]}
    elif method == "tools/call" and message["params"]["name"] == "neighbour":
        result = {"content": [{"type": "text", "text": open(os.path.join(here, "neighbour.txt")).read()}]}
    elif method == "tools/call":
        try:
            open(os.path.join(here, "scribble.txt"), "w").write("x")
            text, failed = "written", False
        except OSError as e:
            text, failed = str(e), True
        result = {"content": [{"type": "text", "text": text}], "isError": failed}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;

/// `warden wrap --sandbox -- python3 DIR/server.py`: the script and its
/// directory are visible read-only (it once started with no tools: it
/// could not even be opened).
#[test]
fn wrap_sandbox_shows_the_commands_own_files_read_only() {
    let world = World::new();
    let scripts = world.dir.join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(scripts.join("server.py"), PY_SERVER).unwrap();
    std::fs::write(scripts.join("neighbour.txt"), "NEIGHBOUR").unwrap();
    let top = if bwrap_works() { "{}" } else { "sandbox: {mechanism: landlock}" };
    let config = world.dir.join("wrap.yaml");
    std::fs::write(&config, top).unwrap();
    let home = world.home.to_str().unwrap();
    let script = path(&scripts.join("server.py")).to_owned();
    let args = ["wrap", "--config", path(&config), "--sandbox", "--", "/usr/bin/python3", script.as_str()];
    let mut client = Client::start(&args, &[("HOME", home)]);
    client.initialize();
    client.wait_for_tool("neighbour");
    assert_eq!(client.call_tool("neighbour", json!({}))["content"][0]["text"], "NEIGHBOUR");
    let scribbled = client.call_tool("scribble", json!({}));
    assert_eq!(scribbled["isError"], true, "{scribbled}");
    assert!(!scripts.join("scribble.txt").exists());
}

/// `mechanism: auto` without a usable bwrap falls back to Landlock and
/// seccomp alone, loudly: a WARN in the log, and `warden sandbox check`,
/// `warden effective` and `/status` name what is and is not contained.
#[test]
fn a_fallback_to_landlock_only_is_loud() {
    let world = World::new();
    let mut client = world.serve("{bwrap: /nonexistent/bwrap}", "true");
    client.wait_for_tool("probe__env");
    client.wait_stderr("FELL BACK to Landlock and seccomp only");
    assert!(client.stderr().contains("WARN"), "{}", client.stderr());
    client.close();

    let config = world.dir.join("warden.yaml");
    let home = world.home.to_str().unwrap();
    for args in
        [vec!["sandbox", "check", "--config", path(&config)], vec!["effective", "--offline", "--config", path(&config)]]
    {
        let output = std::process::Command::new(warden_bin()).args(&args).env("HOME", home).output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(text.contains("FELL BACK") && text.contains("NOT contained"), "{args:?}: {text}");
    }

    let probe = probe_bin();
    let config = format!(
        "sandbox: {{bwrap: /nonexistent/bwrap}}\nservers:\n  boxed:\n    transport: {{kind: stdio, command: {probe:?}}}\n    sandbox: true\n"
    );
    let warden = support::http::HttpWarden::start_with(&config, &["--http", "127.0.0.1:0"], &[("HOME", home)]);
    let mut client = warden.client();
    client.initialize();
    let status = support::retry("the server is ready", || {
        let status = support::http::send(&warden.addr, "GET", "/status", &[], b"").json();
        let upstream = status["sessions"][0]["upstreams"][0].clone();
        (upstream["state"] == "ready").then_some(upstream)
    });
    let sandbox = status["sandbox"].as_str().unwrap_or_default();
    assert!(sandbox.contains("FELL BACK") && sandbox.contains("NOT contained"), "{status}");
}

/// `warden sandbox check` reports the seccomp filter, the Landlock ABI in
/// force and how limits are enforced, and per server its limits.
#[test]
fn sandbox_check_reports_the_filter_landlock_abi_and_limits() {
    let world = World::new();
    let config = world.dir.join("check.yaml");
    let probe = probe_bin();
    std::fs::write(
        &config,
        format!("servers:\n  boxed:\n    transport: {{kind: stdio, command: {probe:?}}}\n    sandbox: {{limits: {{processes: 33}}}}\n"),
    )
    .unwrap();
    let output = std::process::Command::new(warden_bin())
        .args(["sandbox", "check", "--config", path(&config)])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    for expected in [
        "seccomp filter: ",
        "io_uring_setup",
        "AF_INET6",
        "in force ABI",
        "limits: ",
        "33 processes",
        "state directory ",
    ] {
        assert!(report.contains(expected), "{expected} missing: {report}");
    }
}

/// A misspelled key, a wrong mode and an unquoted `off`: the first two are
/// refused naming the key or value and what is allowed, the third reads as
/// `off` (YAML 1.1 readers see a boolean there).
#[test]
fn sandbox_config_mistakes_are_named() {
    let world = World::new();
    let check = |sandbox: &str| {
        let config = world.dir.join("mistake.yaml");
        std::fs::write(
            &config,
            format!("servers:\n  s:\n    transport: {{kind: stdio, command: cat}}\n    sandbox: {sandbox}\n"),
        )
        .unwrap();
        let output = std::process::Command::new(warden_bin())
            .args(["sandbox", "check", "--config", path(&config)])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
    };
    let misspelled = check("{filesytem: {read: [/srv]}}");
    assert!(misspelled.contains("unknown field `filesytem`") && misspelled.contains("filesystem, env"), "{misspelled}");
    let enforced = check("{mode: enforced}");
    assert!(enforced.contains("enforced") && enforced.contains("`enforce`, `warn`, `off`"), "{enforced}");
    let off = check("{mode: off}");
    assert!(off.contains("server s: not sandboxed"), "{off}");
}
