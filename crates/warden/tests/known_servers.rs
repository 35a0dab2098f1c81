//! The shipped annotations (`crates/policy/src/known/servers.yaml`) against
//! the real servers they describe, installed pinned by `interop/install.sh`
//! (see `interop/README.md` for the versions): each server is started
//! behind `warden wrap`, and its `tools/list` must have every annotated tool,
//! every annotated argument (and every argument a conditional entry tests)
//! in the tool's `inputSchema`, with a type a role can read (a string, or
//! an array of strings). The other way round, every tool the server lists
//! must have an entry (so `sideEffects` is known for it), and every string
//! argument whose name says it is a path, URL, SQL or a command must have
//! roles, or be in `NOT_A_ROLE` with the reason why not.
//!
//! Entries for servers that are not installed here are in `NOT_CHECKED`,
//! with the reason; a new entry must be checked or listed there.
//!
//! When the servers are not installed the tests print why and pass, unless
//! `WARDEN_REQUIRE_INTEROP` is set (CI sets it): then they fail.

mod support;

use serde_json::{Value, json};
use support::servers::RealServer;
use support::{Client, scratch_dir};

/// The shipped table, as Warden compiles it in.
const TABLE: &str = include_str!("../../policy/src/known/servers.yaml");

/// Entries no real server checks here, and why.
const NOT_CHECKED: &[(&str, &str)] = &[];

/// Annotated tools (`tool`) and arguments (`tool.arg`) the real server here
/// does not have because the entry also covers another server (entry,
/// tools and arguments, which server). Not checked here.
const OTHER_SERVERS_TOOLS: &[(&str, &[&str], &str)] = &[(
    "github",
    &[
        "create_repository.organization",
        "delete_file",
        "get_commit",
        "get_me",
        "issue_read",
        "issue_write",
        "list_branches",
        "list_releases",
        "list_tags",
        "pull_request_read",
        "update_pull_request",
    ],
    "GitHub's own github-mcp-server, which the entry also covers: a Go binary released on GitHub and ghcr.io, \
     not on npm or PyPI, so not installed here (the npm server-github is)",
)];

/// Arguments whose names look like a path, URL, SQL or command but are not
/// one (server entry, tool, argument, why).
const NOT_A_ROLE: &[(&str, &str, &str, &str)] = &[
    (
        "git",
        "git_add",
        "files",
        "paths relative to repo_path, which Warden would resolve against its own directory; repo_path has the \
         path roles",
    ),
    ("memory", "search_nodes", "query", "a text search over the knowledge graph, not SQL"),
    ("github", "search_repositories", "query", "a GitHub search, not SQL"),
    ("github", "get_file_contents", "path", "a path in the GitHub repository, not on this machine"),
    ("github", "create_or_update_file", "path", "a path in the GitHub repository, not on this machine"),
    ("desktop-commander", "start_search", "filePattern", "a glob that filters file names, not a path"),
    ("desktop-commander", "write_pdf", "content", "the document's text"),
    ("desktop-commander", "get_recent_tool_calls", "toolName", "a tool name"),
    (
        "everything",
        "trigger-url-elicitation",
        "url",
        "a URL the server asks the client to show to the user; the server fetches nothing",
    ),
];

/// Words in an argument's name that say it is a path, URL, SQL or command.
const ROLE_WORDS: &[&str] = &[
    "path",
    "file",
    "directory",
    "url",
    "uri",
    "sql",
    "query",
    "statement",
    "command",
    "cmd",
    "script",
    "code",
    "shell",
];

/// Names with a role word inside that are none of them.
const NOT_ROLE_WORDS: &[&str] = &["description"];

fn table() -> Value {
    serde_saphyr::from_str(TABLE).expect("the shipped table parses")
}

/// The types a schema admits (`type`, a list of types, `anyOf`/`oneOf`).
fn types(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    match &schema["type"] {
        Value::String(kind) => found.push(kind.clone()),
        Value::Array(kinds) => found.extend(kinds.iter().filter_map(Value::as_str).map(str::to_owned)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        for option in schema[key].as_array().into_iter().flatten() {
            found.extend(types(option));
        }
    }
    found
}

/// Whether a role can read values of `schema`: a string, or an array of
/// strings (a role's values are its argument's strings).
fn holds_strings(schema: &Value) -> bool {
    let direct = types(schema);
    if direct.iter().any(|kind| kind == "string") {
        return true;
    }
    let options =
        std::iter::once(schema).chain(["anyOf", "oneOf"].iter().flat_map(|key| {
            schema[*key].as_array().map(|options| options.iter().collect::<Vec<_>>()).unwrap_or_default()
        }));
    options.into_iter().any(|option| {
        types(option).iter().any(|kind| kind == "array") && types(&option["items"]).iter().any(|kind| kind == "string")
    })
}

/// Every problem of `table`'s entry `entry` against the real `tools`.
fn problems(table: &Value, entry: &str, tools: &[Value]) -> Vec<String> {
    let known = &table[entry]["tools"];
    let annotated = known.as_object().unwrap_or_else(|| panic!("servers.yaml has no entry {entry}"));
    let mut problems = Vec::new();
    for (tool, annotation) in annotated {
        let Some(real) = tools.iter().find(|real| real["name"] == tool.as_str()) else {
            let elsewhere =
                OTHER_SERVERS_TOOLS.iter().any(|(e, tools, _)| *e == entry && tools.contains(&tool.as_str()));
            if elsewhere {
                continue;
            }
            problems.push(format!("{entry}: annotated tool {tool} is not listed by the server"));
            continue;
        };
        let properties = &real["inputSchema"]["properties"];
        let mut args: Vec<(&String, &Value)> = annotation["args"].as_object().into_iter().flatten().collect();
        for conditional in annotation["conditional"].as_array().into_iter().flatten() {
            args.extend(conditional["args"].as_object().into_iter().flatten());
            if let Some(tested) = conditional["when"]["arg"].as_str()
                && properties.get(tested).is_none()
            {
                problems.push(format!("{entry}: {tool}'s conditional entry tests {tested}, which it does not take"));
            }
        }
        for (arg, roles) in args {
            let Some(schema) = properties.get(arg) else {
                let qualified = format!("{tool}.{arg}");
                let elsewhere =
                    OTHER_SERVERS_TOOLS.iter().any(|(e, tools, _)| *e == entry && tools.contains(&qualified.as_str()));
                if elsewhere {
                    continue;
                }
                problems.push(format!(
                    "{entry}: {tool} has no argument {arg} (it takes {:?})",
                    properties.as_object().map(|p| p.keys().collect::<Vec<_>>()).unwrap_or_default()
                ));
                continue;
            };
            let has_roles = roles.as_array().is_some_and(|roles| !roles.is_empty());
            if has_roles && !holds_strings(schema) {
                problems.push(format!("{entry}: {tool}.{arg} has roles {roles} but its schema is {schema}"));
            }
        }
    }
    for real in tools {
        let tool = real["name"].as_str().unwrap_or_default();
        let Some(annotation) = annotated.get(tool) else {
            problems.push(format!(
                "{entry}: the server lists {tool}, which has no entry (it takes {:?})",
                real["inputSchema"]["properties"].as_object().map(|p| p.keys().collect::<Vec<_>>()).unwrap_or_default()
            ));
            continue;
        };
        let mentioned = |arg: &str| {
            annotation["args"].get(arg).is_some()
                || annotation["conditional"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|conditional| conditional["args"].get(arg).is_some())
        };
        for (arg, schema) in real["inputSchema"]["properties"].as_object().into_iter().flatten() {
            let lower = arg.to_lowercase();
            let looks_like_one = ROLE_WORDS.iter().any(|word| lower.contains(word))
                && !NOT_ROLE_WORDS.contains(&lower.as_str())
                && holds_strings(schema);
            let excused = NOT_A_ROLE.iter().any(|(e, t, a, _)| *e == entry && *t == tool && a == arg);
            if looks_like_one && !mentioned(arg) && !excused {
                problems.push(format!(
                    "{entry}: {tool}.{arg} looks like a path, URL, SQL or command but has no roles: {schema}"
                ));
            }
        }
    }
    problems
}

/// Starts `server` behind `warden wrap` with `extra` arguments and
/// environment, and returns every tool it lists once `first` is there.
fn list_tools(server: RealServer, extra: &[&str], env: &[(&str, &str)], first: &str) -> Vec<Value> {
    let args = server.wrap_args(None, extra);
    let mut client = Client::start(&args.iter().map(String::as_str).collect::<Vec<_>>(), env);
    client.initialize();
    client.wait_for_tool(first);
    let mut tools = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let params = if cursor.is_null() { json!({}) } else { json!({"cursor": cursor}) };
        let page = client.request("tools/list", params);
        tools.extend(page["result"]["tools"].as_array().cloned().unwrap_or_default());
        cursor = page["result"]["nextCursor"].clone();
        if cursor.is_null() {
            return tools;
        }
    }
}

/// Checks `server`'s entry against its real tool list.
fn check(server: RealServer, extra: &[&str], env: &[(&str, &str)], first: &str) {
    if !server.installed() {
        return;
    }
    let tools = list_tools(server, extra, env, first);
    let problems = problems(&table(), server.entry(), &tools);
    assert!(problems.is_empty(), "servers.yaml disagrees with the real server:\n{}", problems.join("\n"));
}

#[test]
fn every_entry_is_checked_or_says_why_not() {
    let table = table();
    let entries: Vec<&String> = table.as_object().expect("a map of entries").keys().collect();
    for entry in &entries {
        let checked = RealServer::ALL.iter().any(|server| server.entry() == entry.as_str());
        let excused = NOT_CHECKED.iter().any(|(name, _)| name == entry);
        assert!(checked ^ excused, "{entry}: checked against a real server {checked}, listed in NOT_CHECKED {excused}");
    }
    for (entry, items, _) in OTHER_SERVERS_TOOLS {
        for item in *items {
            let (tool, arg) = item.split_once('.').map_or((*item, None), |(tool, arg)| (tool, Some(arg)));
            let annotation = &table[entry]["tools"][tool];
            let known = arg.map_or(annotation.is_object(), |arg| annotation["args"].get(arg).is_some());
            assert!(known, "OTHER_SERVERS_TOOLS names {entry}/{item}, which the entry does not annotate");
        }
    }
    for (entry, tool, arg, _) in NOT_A_ROLE {
        assert!(table[entry]["tools"].get(tool).is_some(), "NOT_A_ROLE names {entry}/{tool}.{arg}, which has no entry");
    }
}

#[test]
fn the_checks_catch_a_wrong_entry() {
    let tools = [json!({"name": "read", "inputSchema": {"type": "object", "properties": {
        "path": {"type": "integer"}, "source_url": {"type": "string"}, "flag": {"type": "boolean"}
    }}})];
    let mut table = table();
    table["filesystem"]["tools"] = json!({
        "read": {"sideEffects": false, "args": {"path": ["read-path"], "gone": ["read-path"]},
                 "conditional": [{"when": {"arg": "dryRun", "equals": true}, "args": {}}]},
        "renamed": {"sideEffects": false, "args": {}}
    });
    let found = problems(&table, "filesystem", &tools);
    for expected in [
        "read.path has roles",
        "no argument gone",
        "tests dryRun",
        "renamed is not listed",
        "read.source_url looks like",
    ] {
        assert!(found.iter().any(|problem| problem.contains(expected)), "{expected} not in {found:#?}");
    }
}

#[test]
fn filesystem() {
    let dir = scratch_dir("known-fs");
    check(RealServer::Filesystem, &[dir.to_str().unwrap()], &[], "read_text_file");
}

#[test]
fn github() {
    // It lists its tools without a token.
    check(RealServer::Github, &[], &[], "get_file_contents");
}

#[test]
fn playwright() {
    // Every tool: those of its optional capabilities too. It starts no
    // browser to list them.
    check(RealServer::Playwright, &["--headless", "--caps=vision,pdf,devtools"], &[], "browser_navigate");
}

#[test]
fn puppeteer() {
    check(RealServer::Puppeteer, &[], &[], "puppeteer_navigate");
}

#[test]
fn postgres() {
    // It lists its tool without connecting; nothing listens on port 1.
    check(RealServer::Postgres, &["postgresql://127.0.0.1:1/none"], &[], "query");
}

#[test]
fn everything() {
    check(RealServer::Everything, &[], &[], "echo");
}

#[test]
fn memory() {
    let file = scratch_dir("known-memory").join("memory.jsonl");
    check(RealServer::Memory, &[], &[("MEMORY_FILE_PATH", file.to_str().unwrap())], "read_graph");
}

#[test]
fn desktop_commander() {
    let home = support::servers::desktop_commander_home(&scratch_dir("known-dc"));
    check(RealServer::DesktopCommander, &[], &[("HOME", home.to_str().unwrap())], "start_process");
}

#[test]
fn sqlite() {
    let db = scratch_dir("known-sqlite").join("app.db");
    check(RealServer::Sqlite, &["--db-path", db.to_str().unwrap()], &[], "read_query");
}

#[test]
fn shell() {
    check(RealServer::Shell, &[], &[("ALLOW_COMMANDS", "echo")], "shell_execute");
}

#[test]
fn fetch() {
    check(RealServer::Fetch, &[], &[], "fetch");
}

#[test]
fn git() {
    check(RealServer::Git, &[], &[], "git_status");
}

#[test]
fn time() {
    check(RealServer::Time, &[], &[], "get_current_time");
}
