//! Presets end to end: `warden init --preset`, and `policy.include` in front
//! of the real reference filesystem server (pinned by `interop/install.sh`).

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::servers::RealServer;
use support::{Client, fixture_bin, run_warden as warden, scratch_dir, wait_for_audit};

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
    // A secret among several paths refuses the whole read.
    let several = json!({"paths": [project.join("main.rs"), project.join(".env")]});
    let response = client.request("tools/call", json!({"name": "read_multiple_files", "arguments": several}));
    assert!(response.raw.contains("protect-secrets") && !response.raw.contains("SECRET-VALUE"), "{}", response.raw);
}

/// `warden wrap --config <dir>/warden.yaml -- <server> <extra>` with the
/// policy `config` and an audit log at `<dir>/audit.jsonl`, initialized.
fn wrap_real(
    server: RealServer,
    dir: &Path,
    policy: &str,
    extra: &[&str],
    env: &[(&str, &str)],
    first: &str,
) -> Client {
    let config = dir.join("warden.yaml");
    let audit = dir.join("audit.jsonl");
    std::fs::write(&config, format!("audit: {{path: {:?}}}\npolicy:\n{policy}", audit.display().to_string())).unwrap();
    let args = server.wrap_args(Some(&config), extra);
    let mut client = Client::start(&args.iter().map(String::as_str).collect::<Vec<_>>(), env);
    client.initialize();
    client.wait_for_tool(first);
    client
}

/// The text of a tools/call result (or the error's message).
fn call(client: &mut Client, tool: &str, arguments: Value) -> (bool, String) {
    let response = client.request("tools/call", json!({"name": tool, "arguments": arguments}));
    let result = &response["result"];
    let error = result["isError"].as_bool().unwrap_or(false) || response.value.get("error").is_some();
    let text = result["content"]
        .as_array()
        .map(|content| content.iter().filter_map(|item| item["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_else(|| response.raw.clone());
    (error, text)
}

/// Asserts a call was refused by Warden as escalated by `rule`, with no
/// approval channel to ask.
fn assert_escalated(client: &mut Client, tool: &str, arguments: Value, rule: &str) {
    let (error, text) = call(client, tool, arguments.clone());
    assert!(
        error
            && text.contains(&format!("Approval required by policy '{rule}"))
            && text.contains("No approval channel is configured"),
        "{tool} {arguments}: {text}"
    );
}

/// The audit records of `tool` calls, as (verdict, rule, outcome).
fn audited(dir: &Path, tool: &str, count: usize) -> Vec<(String, String, String)> {
    let records = wait_for_audit(&dir.join("audit.jsonl"), |records| {
        records.iter().filter(|record| record["name"] == tool).count() >= count
    });
    records
        .iter()
        .filter(|record| record["name"] == tool)
        .map(|record| {
            let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
            (text(&record["decision"]["verdict"]), text(&record["decision"]["rule"]), text(&record["outcome"]))
        })
        .collect()
}

#[test]
fn sql_approval_in_front_of_sqlite() {
    let server = RealServer::Sqlite;
    if !server.installed() {
        return;
    }
    let dir = scratch_dir("preset-sqlite");
    let db = dir.join("app.db");
    // The server's own Python makes the database.
    let python = support::servers::interop_dir().join(".venv-servers1/bin/python");
    let made = std::process::Command::new(python)
        .args(["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(\"CREATE TABLE users(id INTEGER, name TEXT); INSERT INTO users VALUES (1, 'ann'), (2, 'bob');\"); c.commit()"])
        .arg(&db)
        .status()
        .unwrap();
    assert!(made.success());
    let policy = "  include: [builtin:sql-approval]\n";
    let mut client = wrap_real(server, &dir, policy, &["--db-path", db.to_str().unwrap()], &[], "read_query");
    let rule = "sql-approval: destructive SQL";
    let (error, rows) = call(&mut client, "read_query", json!({"query": "SELECT name FROM users ORDER BY id"}));
    assert!(!error && rows.contains("ann") && rows.contains("bob"), "{rows}");
    assert_escalated(&mut client, "write_query", json!({"query": "DELETE FROM users"}), rule);
    assert_escalated(&mut client, "write_query", json!({"query": "DROP TABLE users"}), rule);
    assert_escalated(&mut client, "create_table", json!({"query": "CREATE TABLE t(x)"}), rule);
    assert_escalated(&mut client, "read_query", json!({"query": "SELECT 1; DROP TABLE users"}), rule);
    // Nothing of that reached the database.
    let (error, count) = call(&mut client, "read_query", json!({"query": "SELECT count(*) AS n FROM users"}));
    assert!(!error && count.contains("'n': 2"), "{count}");
    let (_, tables) = call(&mut client, "list_tables", json!({}));
    assert!(tables.contains("users") && !tables.contains("'t'"), "{tables}");
    let by_tool = "sql-approval: destructive SQL in a query tool";
    let refused = (String::from("escalate"), by_tool.to_owned(), String::from("refused"));
    assert_eq!(audited(&dir, "create_table", 1)[0].1, rule);
    assert_eq!(audited(&dir, "write_query", 2), [refused.clone(), refused.clone()]);
    let allowed = (String::from("allow"), String::new(), String::from("result"));
    assert_eq!(audited(&dir, "read_query", 3), [allowed.clone(), refused, allowed]);
}

#[test]
fn sql_approval_in_front_of_postgres_without_a_database() {
    let server = RealServer::Postgres;
    if !server.installed() {
        return;
    }
    let dir = scratch_dir("preset-pg");
    // Nothing listens on port 1: a call that reaches the server fails to
    // connect, and says so.
    let policy = "  include: [builtin:sql-approval]\n";
    let mut client = wrap_real(server, &dir, policy, &["postgresql://127.0.0.1:1/app"], &[], "query");
    let rule = "sql-approval: destructive SQL";
    for sql in ["DROP TABLE users", "DELETE FROM users", "SELECT 1; DROP TABLE users", "not sql at all"] {
        assert_escalated(&mut client, "query", json!({"sql": sql}), rule);
    }
    let (error, text) = call(&mut client, "query", json!({"sql": "SELECT * FROM users LIMIT 1"}));
    assert!(error && text.contains("ECONNREFUSED") && !text.contains(rule), "the SELECT reaches the server: {text}");
}

/// A web server on 127.0.0.1 for the fetch tests: `/page` is a page, any
/// other path 404; it keeps every path asked for.
struct Site {
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Site {
    fn start() -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                let _ = reader.read_line(&mut request);
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                }
                let path = request.split_whitespace().nth(1).unwrap_or_default().to_owned();
                seen.lock().unwrap().push(path.clone());
                let (status, body) = match path.as_str() {
                    "/page" => (
                        "200 OK",
                        "<html><head><title>Test page</title></head><body><p>Hello from the test page</p></body></html>",
                    ),
                    _ => ("404 Not Found", "not found"),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Site { port, asked }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

/// No proxy between the fetching servers and the test's web server.
const NO_PROXY: &[(&str, &str)] = &[("NO_PROXY", "*"), ("no_proxy", "*")];

#[test]
fn fetch_approval_in_front_of_mcp_server_fetch() {
    let server = RealServer::Fetch;
    if !server.installed() {
        return;
    }
    let site = Site::start();
    let dir = scratch_dir("preset-fetch");
    // The preset's "known" hosts are those a rule of yours allows.
    let policy = "  include: [builtin:fetch-approval]\n  rules:\n    - {name: local docs, if: {roles: [fetch-url], domains: {allowed: [127.0.0.1]}}, then: allow}\n";
    // The server refuses loopback addresses unless told otherwise.
    let mut client = wrap_real(server, &dir, policy, &["--allow-private-ips"], NO_PROXY, "fetch");
    let port = site.port;
    let (error, page) = call(&mut client, "fetch", json!({"url": format!("http://127.0.0.1:{port}/page")}));
    assert!(!error && page.contains("Hello from the test page"), "{page}");
    let rule = "fetch-approval: unknown hosts";
    // The same server by another name is another host, not allowed.
    assert_escalated(&mut client, "fetch", json!({"url": format!("http://localhost:{port}/other")}), rule);
    assert_escalated(&mut client, "fetch", json!({"url": "https://unknown.example/"}), rule);
    assert!(!site.asked().contains(&"/other".to_owned()), "{:?}", site.asked());
    // The audit log names no rule for an allowed call.
    let allowed = (String::from("allow"), String::new(), String::from("result"));
    let refused = (String::from("escalate"), rule.to_owned(), String::from("refused"));
    assert_eq!(audited(&dir, "fetch", 3), [allowed, refused.clone(), refused]);
}

#[test]
fn shell_approval_in_front_of_mcp_shell_server() {
    let server = RealServer::Shell;
    if !server.installed() {
        return;
    }
    let env = [("ALLOW_COMMANDS", "echo")];
    // Without the preset the command runs.
    let mut plain =
        wrap_real(server, &scratch_dir("preset-shell-plain"), "  default: allow\n", &[], &env, "shell_execute");
    let (error, text) = call(&mut plain, "shell_execute", json!({"command": ["echo", "ran-it"]}));
    assert!(!error && text.contains("ran-it"), "{text}");
    let dir = scratch_dir("preset-shell");
    let mut client = wrap_real(server, &dir, "  include: [builtin:shell-approval]\n", &[], &env, "shell_execute");
    assert_escalated(&mut client, "shell_execute", json!({"command": ["echo", "ran-it"]}), "shell-approval: ");
    assert_eq!(audited(&dir, "shell_execute", 1)[0].2, "refused");
}

#[test]
fn presets_in_front_of_desktop_commander() {
    let server = RealServer::DesktopCommander;
    if !server.installed() {
        return;
    }
    let site = Site::start();
    let dir = std::fs::canonicalize(scratch_dir("preset-dc")).unwrap();
    let project = dir.join("project");
    std::fs::create_dir_all(project.join("certs")).unwrap();
    std::fs::write(project.join(".env"), "API_KEY=SECRET-VALUE").unwrap();
    std::fs::write(project.join("certs/server.key"), "SECRET-VALUE").unwrap();
    std::fs::write(project.join("main.rs"), "fn main() {}").unwrap();
    let home = support::servers::desktop_commander_home(&dir);
    let home_text = home.display().to_string();
    let env = [NO_PROXY, &[("HOME", home_text.as_str())]].concat();
    let policy = "  include: [builtin:protect-secrets, builtin:shell-approval, builtin:fetch-approval]\n";
    let mut client = wrap_real(server, &dir, policy, &[], &env, "start_process");
    // Tools that run nothing and read no secret pass.
    let (error, listing) = call(&mut client, "list_directory", json!({"path": project}));
    assert!(!error && listing.contains("main.rs"), "{listing}");
    let (error, main) = call(&mut client, "read_file", json!({"path": project.join("main.rs")}));
    assert!(!error && main.contains("fn main"), "{main}");
    // shell-approval: commands and processes.
    let shell = "shell-approval: ";
    assert_escalated(&mut client, "start_process", json!({"command": "echo hi", "timeout_ms": 2000}), shell);
    assert_escalated(&mut client, "interact_with_process", json!({"pid": 1, "input": "echo hi"}), shell);
    // Widening its own limits would undo the rest.
    let widen = json!({"key": "allowedDirectories", "value": ["/"]});
    assert_escalated(&mut client, "set_config_value", widen, "shell-approval: the server's own limits");
    // protect-secrets: key and env files, however the tool names the path.
    for (tool, arguments) in [
        ("read_file", json!({"path": project.join(".env")})),
        ("read_file", json!({"path": project.join("certs/server.key")})),
        ("get_file_info", json!({"path": project.join(".env")})),
        (
            "edit_block",
            json!({"file_path": project.join("certs/server.key"), "old_string": "SECRET", "new_string": "x"}),
        ),
        ("move_file", json!({"source": project.join(".env"), "destination": project.join("env.txt")})),
        ("read_multiple_files", json!({"paths": [project.join("main.rs"), project.join(".env")]})),
    ] {
        let (error, text) = call(&mut client, tool, arguments.clone());
        assert!(
            error && text.contains("protect-secrets") && !text.contains("SECRET-VALUE"),
            "{tool} {arguments}: {text}"
        );
    }
    assert_eq!(std::fs::read_to_string(project.join("certs/server.key")).unwrap(), "SECRET-VALUE");
    assert!(project.join(".env").exists());
    // fetch-approval: read_file fetches a URL with isUrl.
    let url = format!("http://127.0.0.1:{}/page", site.port);
    assert_escalated(&mut client, "read_file", json!({"path": url, "isUrl": true}), "fetch-approval: unknown hosts");
    assert!(site.asked().is_empty(), "{:?}", site.asked());
}

#[test]
fn sql_approval_leaves_other_query_arguments_alone() {
    let server = RealServer::Memory;
    if !server.installed() {
        return;
    }
    let dir = scratch_dir("preset-memory");
    let file = dir.join("memory.jsonl");
    let env = [("MEMORY_FILE_PATH", file.to_str().unwrap())];
    let mut client = wrap_real(server, &dir, "  include: [builtin:sql-approval]\n", &[], &env, "search_nodes");
    let (error, text) = call(&mut client, "search_nodes", json!({"query": "delete the old entries"}));
    assert!(!error, "a knowledge-graph search is not SQL: {text}");
}

/// A throwaway PostgreSQL cluster from Debian's `postgresql` (installed by
/// `.ci/system-packages.sh`), listening on 127.0.0.1 with `trust`
/// authentication for the user `warden`; stopped when dropped. As root it
/// runs as the `postgres` user, which the package creates.
struct Postgres {
    bin: std::path::PathBuf,
    data: std::path::PathBuf,
    as_root: bool,
    port: u16,
}

impl Postgres {
    /// The newest installed server's binaries, if any.
    fn bin() -> Option<std::path::PathBuf> {
        let mut versions: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
            .filter(|(_, bin): &(u32, std::path::PathBuf)| bin.join("initdb").exists())
            .collect();
        versions.sort();
        versions.pop().map(|(_, bin)| bin)
    }

    fn command(&self, program: &str) -> std::process::Command {
        let program = self.bin.join(program);
        if self.as_root {
            let mut command = std::process::Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            std::process::Command::new(program)
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let output = self.command(program).args(args).output().unwrap();
        assert!(
            output.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Starts a cluster in `dir` and runs `setup` (SQL) in it; `None` when
    /// PostgreSQL is not installed (after saying why, or failing when
    /// `WARDEN_REQUIRE_INTEROP` is set).
    fn start(dir: &Path, setup: &str) -> Option<Postgres> {
        use std::os::unix::fs::MetadataExt;
        let Some(bin) = Postgres::bin() else {
            let why = "PostgreSQL is not installed (run .ci/system-packages.sh)";
            assert!(std::env::var_os("WARDEN_REQUIRE_INTEROP").is_none(), "WARDEN_REQUIRE_INTEROP is set but {why}");
            println!("skipped: {why}");
            return None;
        };
        let as_root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
        let home = dir.join("pg");
        std::fs::create_dir_all(&home).unwrap();
        if as_root {
            // PostgreSQL refuses to run as root: its directory is the
            // postgres user's.
            let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
            let uid = passwd
                .lines()
                .find_map(|line| line.strip_prefix("postgres:")?.split(':').nth(1)?.parse::<u32>().ok())
                .expect("the postgres user");
            std::os::unix::fs::chown(&home, Some(uid), None).unwrap();
        }
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let postgres = Postgres { bin, data: home.join("data"), as_root, port };
        let data = postgres.data.to_str().unwrap();
        postgres.run("initdb", &["-D", data, "-A", "trust", "-U", "warden", "--no-sync", "-E", "UTF8"]);
        let options = format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", home.to_str().unwrap());
        let log = home.join("log");
        postgres.run("pg_ctl", &["-D", data, "-o", &options, "-w", "-l", log.to_str().unwrap(), "start"]);
        let port = port.to_string();
        postgres.run(
            "psql",
            &["-h", "127.0.0.1", "-p", &port, "-U", "warden", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", setup],
        );
        Some(postgres)
    }

    fn url(&self) -> String {
        format!("postgresql://warden@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").args(["-D", self.data.to_str().unwrap(), "-m", "immediate", "stop"]).output();
    }
}

#[test]
fn sql_approval_in_front_of_postgres() {
    let server = RealServer::Postgres;
    if !server.installed() {
        return;
    }
    let dir = scratch_dir("preset-pg-real");
    let setup = "CREATE TABLE users(id int, name text); INSERT INTO users VALUES (1, 'ann'), (2, 'bob'); \
                 CREATE TABLE spare(x int);";
    let Some(db) = Postgres::start(&dir, setup) else { return };
    // Why: the server runs each query in a read-only transaction, but
    // several statements end it. Without the preset this drops a table.
    let plain_dir = scratch_dir("preset-pg-plain");
    let mut plain = wrap_real(server, &plain_dir, "  default: allow\n", &[&db.url()], &[], "query");
    call(&mut plain, "query", json!({"sql": "COMMIT; DROP TABLE spare"}));
    let (error, tables) =
        call(&mut plain, "query", json!({"sql": "SELECT count(*) AS n FROM pg_tables WHERE tablename = 'spare'"}));
    assert!(!error && tables.contains("\"n\": \"0\""), "the read-only transaction held after all: {tables}");
    drop(plain);
    let policy = "  include: [builtin:sql-approval]\n";
    let mut client = wrap_real(server, &dir, policy, &[&db.url()], &[], "query");
    let (error, rows) = call(&mut client, "query", json!({"sql": "SELECT name FROM users ORDER BY id"}));
    assert!(!error && rows.contains("ann") && rows.contains("bob"), "{rows}");
    let rule = "sql-approval: destructive SQL in sql or statement";
    for sql in ["DROP TABLE users", "DELETE FROM users", "SELECT 1; DROP TABLE users", "COMMIT; DROP TABLE users"] {
        assert_escalated(&mut client, "query", json!({"sql": sql}), rule);
    }
    // Still there, both rows.
    let (error, count) = call(&mut client, "query", json!({"sql": "SELECT count(*) AS n FROM users"}));
    assert!(!error && count.contains("\"n\": \"2\""), "{count}");
    let refused = (String::from("escalate"), rule.to_owned(), String::from("refused"));
    let allowed = (String::from("allow"), String::new(), String::from("result"));
    let records = audited(&dir, "query", 6);
    assert_eq!(records[0], allowed);
    assert_eq!(records[1..5], [refused.clone(), refused.clone(), refused.clone(), refused]);
    assert_eq!(records[5], allowed);
}
