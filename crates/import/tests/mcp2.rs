//! mcp2 configs.

mod common;

use common::{file, text, warning};
use warden_config::{Filter, PrefixMode, Transport};
use warden_import::{ImportError, Source, import};

#[test]
fn everything_carries_over() {
    let imported = import(Source::Mcp2, &[file("mcp2/config.yaml")]).unwrap();
    let config = &imported.config;
    assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["filesystem", "github", "context7_docs"]);
    let filesystem = &config.servers["filesystem"];
    assert_eq!(filesystem.display_name.as_deref(), Some("Local Files"));
    let Transport::Stdio { command, args, env, cwd } = &filesystem.transport else { panic!("stdio") };
    assert_eq!(command, "npx");
    assert_eq!(args, &["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/projects"]);
    assert_eq!(env["NODE_ENV"], "production");
    assert!(cwd.is_none());
    let Transport::Http { url, headers } = &config.servers["github"].transport else { panic!("http") };
    assert_eq!(url, "https://mcp-github.internal/mcp");
    assert_eq!(headers["Authorization"], "Bearer ${GITHUB_TOKEN}");
    assert!(config.servers["context7_docs"].display_name.is_none());

    assert_eq!(config.default_profile.as_deref(), Some("safe"));
    assert_eq!(config.profiles.keys().collect::<Vec<_>>(), ["safe", "dev"]);
    let safe = &config.profiles["safe"];
    assert_eq!(safe.description, "LLM-facing surface; minimal write and delete");
    assert_eq!(safe.servers.keys().collect::<Vec<_>>(), ["filesystem", "github", "context7_docs"], "renames followed");
    let fs = &safe.servers["filesystem"];
    assert_eq!(
        fs.tools,
        Filter {
            allow: vec!["list_directory".into(), "read_file".into()],
            deny: vec!["write_file".into(), "delete_file".into()]
        }
    );
    assert_eq!(fs.resources, Filter { allow: vec!["file://docs/**".into()], deny: vec!["file://secret/**".into()] });
    assert_eq!(fs.prompts, Filter { allow: vec![], deny: vec!["dangerous_migrations".into()] });
    assert_eq!(config.profiles["dev"].servers["context7_docs"].tools.allow, ["*"]);

    assert!(config.hub.enabled);
    assert_eq!(config.hub.prefix_server_ids, None, "mapped to naming.prefix");
    assert_eq!(config.naming.prefix, PrefixMode::Always);
    assert!(config.expose_per_server);

    warning(&imported, &["\"context7.docs\"", "\"context7_docs\""]);
    warning(&imported, &["naming.prefix: always", "server__tool"]);
    warning(&imported, &["$VAR is written as ${VAR} in servers.filesystem.transport.args"]);
    warning(&imported, &["GITHUB_TOKEN, HOME", "refuses to start"]);
}

#[test]
fn json_configs_and_unprefixed_names() {
    let imported = import(Source::Mcp2, &[file("mcp2/config.json")]).unwrap();
    let config = &imported.config;
    assert_eq!(config.default_profile.as_deref(), Some("dev"));
    assert_eq!(config.servers["jsonserver"].display_name.as_deref(), Some("JSON Server"));
    assert!(
        matches!(&config.servers["jsonserver"].transport, Transport::Http { url, .. } if url == "http://localhost:8000/mcp")
    );
    assert_eq!(config.naming.prefix, PrefixMode::Never);
    assert!(!config.expose_per_server);
    assert_eq!(imported.warnings, ["hub.prefixServerIDs: false is written as naming.prefix: never"]);
}

#[test]
fn go_defaults_and_ignored_keys() {
    let yaml = "\
servers:
  fs:
    displayName: ''
    transport: {kind: stdio, command: fs-mcp, url: http://ignored, env: {PORT: 8080}}
    retries: 3
hub: {enabled: true}
naming: {separator: '-'}
";
    let imported = import(Source::Mcp2, &[text("mcp2.yml", yaml)]).unwrap();
    let config = &imported.config;
    assert!(config.servers["fs"].display_name.is_none());
    assert!(matches!(&config.servers["fs"].transport, Transport::Stdio { env, .. } if env["PORT"] == "8080"));
    assert_eq!(config.naming.prefix, PrefixMode::Never, "a missing prefixServerIDs is false in mcp2");
    assert_eq!(config.naming.separator, "__", "naming is not an mcp2 key");
    assert!(config.profiles.is_empty() && config.default_profile.is_none());
    warning(&imported, &["prefixServerIDs is not set", "naming.prefix: never"]);
    let ignored = warning(&imported, &["ignored naming"]);
    assert!(
        ignored.contains("servers.fs.retries") && ignored.contains("servers.fs.transport.url (not used by kind stdio)")
    );
}

fn error(name: &str, text: &str) -> String {
    import(Source::Mcp2, &[common::text(name, text)]).unwrap_err().to_string()
}

#[test]
fn malformed_files_are_errors_naming_the_file() {
    let err = import(Source::Mcp2, &[file("bad/mcp2-kind.yaml")]).unwrap_err().to_string();
    assert!(
        err.contains("mcp2-kind.yaml: line 5, column 7: servers.filesystem.transport.kind: unknown kind \"sse\""),
        "{err}"
    );

    let err = import(Source::Mcp2, &[file("bad/mcp2-trailing-comma.json")]).unwrap_err().to_string();
    assert!(err.contains("mcp2-trailing-comma.json: not valid JSON") && err.contains("line 5"), "{err}");

    let err = import(Source::Mcp2, &[file("bad/mcp2-unknown-server.yaml")]).unwrap_err();
    assert!(matches!(&err, ImportError::Rejected { problems, .. } if problems.len() == 1), "{err}");
    let err = err.to_string();
    assert!(err.contains("mcp2-unknown-server.yaml: the converted config is not valid for Warden"), "{err}");
    assert!(err.contains("profile \"safe\" names server \"github\", which is not configured"), "{err}");
    assert!(!err.contains("line "), "positions of the generated text are not shown: {err}");

    for (yaml, expected) in [
        ("servers:\n  a: {}\n", "line 2, column 3: servers.a: has no transport"),
        ("servers:\n  a: {transport: {command: x}}\n", "servers.a.transport: has no kind"),
        ("servers:\n  a:\n    transport: {kind: stdio}\n", "servers.a.transport: a stdio transport needs a command"),
        ("servers:\n  a:\n    transport: {kind: http}\n", "servers.a.transport: an http transport needs a url"),
        (
            "servers:\n  a:\n    transport: {kind: stdio, command: x, args: x}\n",
            "servers.a.transport.args: expected a list",
        ),
        (
            "servers:\n  a:\n    transport: {kind: http, url: x, headers: [a]}\n",
            "servers.a.transport.headers: expected a mapping",
        ),
        (
            "profiles:\n  p:\n    servers:\n      a: {tools: {allow: read_*}}\n",
            "profiles.p.servers.a.tools.allow: expected a list",
        ),
        ("hub: {enabled: yes please}\n", "hub.enabled: expected true or false, found text"),
        ("exposePerServer: [x]\n", "exposePerServer: expected true or false"),
        ("defaultProfile: {a: 1}\n", "defaultProfile: expected text"),
        ("servers: [a]\n", "servers: expected a mapping, found a list"),
    ] {
        let err = error("mcp2.yaml", yaml);
        assert!(err.starts_with("mcp2.yaml: ") && err.contains(expected), "{yaml:?}: {err}");
    }
    // Rules only Warden's loader knows are reported too.
    let err = error("mcp2.yaml", "servers:\n  a: {transport: {kind: http, url: ftp://x}}\n");
    assert!(err.contains("an http or sse transport needs an http:// or https:// url"), "{err}");
    let err = error("mcp2.yaml", "defaultProfile: nope\nservers: {}\n");
    assert!(err.contains("defaultProfile \"nope\" is not a profile"), "{err}");
}
