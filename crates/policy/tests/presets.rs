//! The presets (`policy.include: [builtin:...]`), each against the servers it
//! names, known by their real command lines (so the shipped annotations apply).

mod common;

use common::{engine as compile, expect, js, problems};
use warden_policy::Decision;

const SERVERS: &str = r#"
servers:
  fs: {transport: {kind: stdio, command: npx, args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]}}
  sqlite: {transport: {kind: stdio, command: uvx, args: ["mcp-server-sqlite", "--db-path", "/srv/app.db"]}}
  pg: {transport: {kind: stdio, command: npx, args: ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/app"]}}
  desktop: {transport: {kind: stdio, command: npx, args: ["-y", "@wonderwhy-er/desktop-commander"]}}
  shell: {transport: {kind: stdio, command: uvx, args: ["mcp-shell-server"]}}
  fetch: {transport: {kind: stdio, command: uvx, args: ["mcp-server-fetch"]}}
  git: {transport: {kind: stdio, command: uvx, args: ["mcp-server-git"]}}
  browser: {transport: {kind: stdio, command: npx, args: ["@playwright/mcp@latest"]}}
  memory: {transport: {kind: stdio, command: npx, args: ["-y", "@modelcontextprotocol/server-memory"]}}
  other: {transport: {kind: stdio, command: my-server}}
"#;

fn with(include: &str, rest: &str) -> warden_policy::PolicyEngine {
    compile(&format!("{SERVERS}policy:\n  include: [{include}]\n{rest}"))
}

#[test]
fn protect_secrets() {
    let engine = with("builtin:protect-secrets", "");
    for path in
        ["/srv/app/.env", "/srv/app/.env.production", "/srv/certs/server.key", "/srv/x/id_ed25519", "/srv/tls.pem"]
    {
        let args = format!(r#"{{"path": {}}}"#, js(path));
        expect(&engine, "fs", "read_text_file", &args, Decision::Deny, "protect-secrets: key and env files");
        expect(&engine, "desktop", "read_file", &args, Decision::Deny, "protect-secrets: key and env files");
    }
    expect(&engine, "fs", "read_text_file", r#"{"path": "/etc/shadow"}"#, Decision::Deny, "protected-path");
    // One secret among several paths is enough to refuse the whole read.
    let several = r#"{"paths": ["/srv/app/main.rs", "/srv/app/.env"]}"#;
    expect(&engine, "fs", "read_multiple_files", several, Decision::Deny, "protect-secrets: key and env files");
    expect(&engine, "desktop", "read_multiple_files", several, Decision::Deny, "protect-secrets: key and env files");
    let plain = r#"{"paths": ["/srv/app/main.rs", "/srv/app/lib.rs"]}"#;
    expect(&engine, "fs", "read_multiple_files", plain, Decision::Allow, "default");
    for path in ["/srv/app/main.rs", "/srv/.envrc.md/x", "/srv/keys.txt"] {
        expect(&engine, "fs", "read_text_file", &format!(r#"{{"path": {}}}"#, js(path)), Decision::Allow, "default");
    }
}

#[test]
fn sql_approval() {
    let engine = with("builtin:sql-approval", "");
    // Annotated SQL (create_table's query); `sql` and `statement` anywhere;
    // `query` of a tool named like a query. A call two of them match names
    // the one without roles (role rules are decided after those).
    let rule = "sql-approval: destructive SQL";
    let by_name = "sql-approval: destructive SQL in sql or statement";
    let by_tool = "sql-approval: destructive SQL in a query tool";
    for sql in [
        "DELETE FROM users",
        "drop table users",
        "UPDATE users SET admin = 1",
        "INSERT INTO t VALUES (1)",
        "ALTER TABLE t ADD c int",
        "SELECT 1; DROP TABLE users",
        "this is not sql",
    ] {
        expect(&engine, "sqlite", "write_query", &format!(r#"{{"query": {}}}"#, js(sql)), Decision::Escalate, by_tool);
        expect(&engine, "pg", "query", &format!(r#"{{"sql": {}}}"#, js(sql)), Decision::Escalate, by_name);
    }
    expect(&engine, "sqlite", "create_table", r#"{"query": "CREATE TABLE t(x)"}"#, Decision::Escalate, rule);
    // Servers nobody annotated.
    expect(&engine, "other", "run", r#"{"sql": "DROP TABLE t"}"#, Decision::Escalate, by_name);
    expect(&engine, "other", "execute", r#"{"statement": "DELETE FROM t"}"#, Decision::Escalate, by_name);
    expect(&engine, "other", "run_query", r#"{"query": "DROP TABLE t"}"#, Decision::Escalate, by_tool);
    expect(&engine, "other", "executeSQL", r#"{"query": "DROP TABLE t"}"#, Decision::Escalate, by_tool);
    expect(&engine, "other", "run_query", r#"{"query": "SELECT 1"}"#, Decision::Allow, "default");
    // A search's `query` is not SQL (server-memory, GitHub's search tools).
    for (server, tool) in [("memory", "search_nodes"), ("other", "search_code")] {
        expect(&engine, server, tool, r#"{"query": "delete the old entries"}"#, Decision::Allow, "default");
    }
    for sql in ["SELECT * FROM users LIMIT 10", "select count(*) from t"] {
        expect(&engine, "sqlite", "read_query", &format!(r#"{{"query": {}}}"#, js(sql)), Decision::Allow, "default");
        expect(&engine, "pg", "query", &format!(r#"{{"sql": {}}}"#, js(sql)), Decision::Allow, "default");
    }
}

#[test]
fn shell_approval() {
    let engine = with("builtin:shell-approval", "");
    let by_role = "shell-approval: commands";
    let by_name = "shell-approval: command tools";
    expect(&engine, "desktop", "start_process", r#"{"command": "ls"}"#, Decision::Escalate, by_name);
    expect(
        &engine,
        "desktop",
        "interact_with_process",
        r#"{"pid": 1, "input": "rm -rf /"}"#,
        Decision::Escalate,
        by_name,
    );
    expect(
        &engine,
        "shell",
        "shell_execute",
        r#"{"command": ["ls"], "directory": "/srv"}"#,
        Decision::Escalate,
        by_name,
    );
    // A tool whose name says nothing, annotated as running code.
    expect(&engine, "browser", "browser_evaluate", r#"{"function": "() => 1"}"#, Decision::Escalate, by_role);
    expect(&engine, "browser", "browser_run_code_unsafe", r#"{"code": "page => 1"}"#, Decision::Escalate, by_role);
    expect(&engine, "other", "run_command", r#"{"cmd": "ls"}"#, Decision::Escalate, "shell-approval: command tools");
    expect(&engine, "other", "bash", r#"{"script": "ls"}"#, Decision::Escalate, "shell-approval: command tools");
    // Widening the server's own limits is as good as running a command.
    let limits = "shell-approval: the server's own limits";
    let widen = r#"{"key": "allowedDirectories", "value": ["/"]}"#;
    expect(&engine, "desktop", "set_config_value", widen, Decision::Escalate, limits);
    expect(&engine, "desktop", "read_file", r#"{"path": "/srv/a"}"#, Decision::Allow, "default");
    expect(&engine, "other", "search", r#"{"q": "x"}"#, Decision::Allow, "default");
}

#[test]
fn fetch_approval_with_your_known_hosts_first() {
    let mine = "  rules:\n    - {name: docs, if: {roles: [fetch-url, git-remote-url], domains: {allowed: [docs.rs, github.com]}}, then: allow}\n";
    let engine = with("builtin:fetch-approval", mine);
    let unknown = "fetch-approval: unknown hosts";
    expect(&engine, "fetch", "fetch", r#"{"url": "https://docs.rs/tokio"}"#, Decision::Allow, "docs");
    expect(&engine, "fetch", "fetch", r#"{"url": "https://evil.example/x"}"#, Decision::Escalate, unknown);
    expect(&engine, "fetch", "fetch", r#"{"url": "http://169.254.169.254/"}"#, Decision::Escalate, unknown);
    expect(&engine, "fetch", "fetch", r#"{"url": "https://docs.rs./x"}"#, Decision::Escalate, unknown);
    // With no rule of yours, every host is unknown.
    let bare = with("builtin:fetch-approval", "");
    expect(&bare, "fetch", "fetch", r#"{"url": "https://docs.rs/tokio"}"#, Decision::Escalate, unknown);
}

#[test]
fn presets_combine_and_unknown_ones_are_errors() {
    let engine =
        with("builtin:protect-secrets, builtin:sql-approval, builtin:shell-approval, builtin:fetch-approval", "");
    expect(
        &engine,
        "fs",
        "read_text_file",
        r#"{"path": "/srv/.env"}"#,
        Decision::Deny,
        "protect-secrets: key and env files",
    );
    expect(
        &engine,
        "sqlite",
        "write_query",
        r#"{"query": "DELETE FROM t"}"#,
        Decision::Escalate,
        "sql-approval: destructive SQL in a query tool",
    );
    let wrong = problems(&format!("{SERVERS}policy: {{include: [builtin:everything-safe]}}\n"));
    assert!(wrong.iter().any(|p| p.contains("unknown preset") && p.contains("builtin:protect-secrets")), "{wrong:?}");
}
