//! Presets end to end: `warden init --preset`, and `policy.include` in front
//! of the real reference filesystem server (pinned by `interop/install.sh`).

mod support;

use std::path::Path;

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
            && text.contains(&format!("Approval required by policy '{rule}'"))
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
    let refused = (String::from("escalate"), rule.to_owned(), String::from("refused"));
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
