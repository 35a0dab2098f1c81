//! mcptools listings (`mcpt tools|prompts|resources SERVER --format json`).

mod common;

use common::{file, named, text, warning};
use warden_config::{Filter, ServerFilters, Transport};
use warden_import::{PLACEHOLDER_COMMAND, Source, import};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

#[test]
fn listings_become_servers_and_starter_profiles() {
    let files = [
        file("mcptools/inventory/filesystem-tools.json"),
        file("mcptools/inventory/filesystem-prompts.json"),
        file("mcptools/inventory/filesystem-resources.json"),
        file("mcptools/inventory/everything/tools.json"),
        file("mcptools/inventory/everything/prompts.json"),
        file("mcptools/inventory/everything/resources.json"),
        named("sh", "mcptools/inventory/shell.json"),
    ];
    let imported = import(Source::Mcptools, &files).unwrap();
    let config = &imported.config;
    assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["filesystem", "everything", "sh"]);
    for server in config.servers.values() {
        assert!(
            matches!(&server.transport, Transport::Stdio { command, args, .. } if command == PLACEHOLDER_COMMAND && args.is_empty())
        );
    }
    assert_eq!(config.default_profile.as_deref(), Some("safe"));
    assert_eq!(config.profiles.keys().collect::<Vec<_>>(), ["safe", "dev"]);

    let safe = &config.profiles["safe"].servers;
    assert_eq!(
        safe["filesystem"].tools.allow,
        strings(&[
            "read_text_file",
            "read_multiple_files",
            "list_directory",
            "directory_tree",
            "search_files",
            "get_file_info",
            "list_allowed_directories"
        ]),
        "readOnlyHint or a read-style name"
    );
    assert_eq!(safe["everything"].tools.allow, strings(&["getResourceReference", "getTinyImage"]));
    assert_eq!(safe["sh"].tools, Filter { allow: vec![], deny: strings(&["*"]) }, "nothing read-only: deny all");
    for filters in safe.values() {
        assert_eq!((&filters.prompts, &filters.resources), (&Filter::default(), &Filter::default()));
    }
    for filters in config.profiles["dev"].servers.values() {
        assert_eq!(filters, &ServerFilters::default());
    }

    warning(&imported, &[PLACEHOLDER_COMMAND, "filesystem, everything, sh"]);
    let filesystem = warning(&imported, &["server filesystem: profile safe allows 7 of its 11 tools"]);
    assert!(!filesystem.contains("prompts"), "none listed: {filesystem}");
    warning(&imported, &["server everything: profile safe allows 2 of its 5 tools", "all 3 prompts and 3 resources"]);
    warning(&imported, &["server sh: none of its 2 tools looks read-only", "deny"]);
}

#[test]
fn accepted_shapes() {
    // A bare array named by its file, a JSON-RPC response, templates, a
    // combined listing, and a server with no tools listing.
    let imported = import(
        Source::Mcptools,
        &[
            text("inv/gh-tools.json", r#"[{"name": "merge_pr"}, {"name": "list_repos"}]"#),
            text("inv/db.json", r#"{"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "query", "annotations": {"readOnlyHint": true}}]}}"#),
            text("db=inv/db-templates.json", r#"{"resourceTemplates": [{"uriTemplate": "db://{table}", "name": "table"}]}"#),
            text("docs=combined.json", r#"{"tools": [{"name": "search_docs"}], "prompts": [{"name": "summarise"}], "resources": null}"#),
            text("inv/notes-prompts.json", r#"[{"name": "daily", "arguments": []}]"#),
            text("inv/web.tools.json", "[]"),
        ],
    )
    .unwrap();
    let safe = &imported.config.profiles["safe"].servers;
    assert_eq!(imported.config.servers.keys().collect::<Vec<_>>(), ["gh", "db", "docs", "notes", "web"]);
    assert_eq!(safe["gh"].tools.allow, ["list_repos"]);
    assert_eq!(safe["db"].tools.allow, ["query"]);
    assert_eq!(safe["docs"].tools.allow, ["search_docs"]);
    assert_eq!(safe["notes"].tools.deny, ["*"]);
    assert_eq!(safe["web"].tools.deny, ["*"]);
    warning(&imported, &["server notes: no tools listing was given"]);
    warning(&imported, &["server db: profile safe allows 1 of its 1 tools", "0 prompts and 1 resources"]);
}

#[test]
fn names_are_sanitised() {
    let imported = import(Source::Mcptools, &[text("my.server=x.json", r#"{"tools": []}"#)]).unwrap();
    assert_eq!(imported.config.servers.keys().collect::<Vec<_>>(), ["my_server"]);
    assert_eq!(imported.config.profiles["safe"].servers.keys().collect::<Vec<_>>(), ["my_server"]);
    warning(&imported, &["\"my.server\" is named \"my_server\""]);
}

fn error(files: &[(std::path::PathBuf, String)]) -> String {
    import(Source::Mcptools, files).unwrap_err().to_string()
}

#[test]
fn malformed_listings_are_errors_naming_the_file() {
    let err = error(&[file("bad/mcptools-table.txt")]);
    assert!(err.contains("mcptools-table.txt: not valid JSON") && err.contains("--format json"), "{err}");

    let err = error(&[file("bad/mcptools-nameless-tools.json")]);
    assert!(err.contains("mcptools-nameless-tools.json: line 1, column 2: tools[1]: has no name"), "{err}");

    let err = error(&[
        file("mcptools/inventory/filesystem-tools.json"),
        named("filesystem", "mcptools/inventory/shell.json"),
    ]);
    assert!(
        err.contains("shell.json: server \"filesystem\" already has a tools listing, from ")
            && err.contains("filesystem-tools.json"),
        "{err}"
    );

    for (path, json, expected) in [
        ("=x.json", "[]", "=x.json: the server name before '=' is empty"),
        ("tools.json", "[]", "tools.json: cannot tell which server this lists"),
        (
            "a.json",
            r#"{"items": []}"#,
            "a.json: expected a tools, prompts or resources list (mcpt tools SERVER --format json), found keys items",
        ),
        ("a.json", r#"[{"description": "?"}]"#, "a.json: cannot tell whether this lists tools, prompts or resources"),
        ("a.json", "42", "a.json: expected a list result or an array, found a number"),
        ("a.json", r#"{"tools": {"name": "x"}}"#, "a.json: line 1, column 2: tools: expected a list, found a mapping"),
        ("a-tools.json", r#"["read_file"]"#, "a-tools.json: [0]: expected an object, found text"),
        ("a.json", r#"{"resources": [{"name": "r"}]}"#, "resources[0]: has no uri"),
        (
            "a.json",
            r#"{"tools": [{"name": "x", "annotations": {"readOnlyHint": "yes"}}]}"#,
            "tools[0].annotations.readOnlyHint: expected true or false",
        ),
        ("a.json", r#"{"tools": [{"name": "x", "annotations": []}]}"#, "tools[0].annotations: expected a mapping"),
    ] {
        let err = error(&[text(path, json)]);
        assert!(err.contains(expected), "{path} {json}: {err}");
    }
}
