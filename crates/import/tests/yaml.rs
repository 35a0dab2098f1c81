//! The YAML written for an import loads back, with Warden's own loader, to
//! the same config (`${VAR}` expanded, as the loader does).

mod common;

use std::path::PathBuf;

use common::{expanded, file, load, named, same};
use indexmap::IndexMap;
use warden_config::{Config, Filter, PrefixMode, Profile, ServerConfig, ServerFilters, Transport};
use warden_import::{Source, import, to_yaml};

fn imports() -> Vec<(Source, Vec<(PathBuf, String)>)> {
    vec![
        (Source::Mcpmon, vec![file("mcpmon/mcpmon.yaml")]),
        (Source::Mcpmon, vec![file("mcpmon/single.yaml")]),
        (Source::Mcp2, vec![file("mcp2/config.yaml")]),
        (Source::Mcp2, vec![file("mcp2/config.json")]),
        (
            Source::Mcptools,
            vec![
                file("mcptools/inventory/filesystem-tools.json"),
                file("mcptools/inventory/everything/tools.json"),
                named("sh", "mcptools/inventory/shell.json"),
            ],
        ),
    ]
}

#[test]
fn every_import_round_trips() {
    for (source, files) in imports() {
        let imported = import(source, &files).unwrap();
        let plain = to_yaml(&imported.config).unwrap();
        assert!(same(&load(&plain), &expanded(&imported.config)), "{source}:\n{plain}");
        let headed = imported.to_yaml().unwrap();
        assert!(same(&load(&headed), &expanded(&imported.config)), "{source}:\n{headed}");
        assert!(headed.ends_with(&plain), "the header only adds comments");
    }
}

#[test]
fn the_header_says_where_it_came_from() {
    let imported = import(Source::Mcp2, &[file("mcp2/config.yaml")]).unwrap();
    let yaml = imported.to_yaml().unwrap();
    let header: Vec<&str> = yaml.lines().take_while(|line| line.starts_with('#')).collect();
    assert!(
        header[0].starts_with("# Warden config imported from mcp2 config ")
            && header[0].ends_with("config.yaml by `warden import`."),
        "{}",
        header[0]
    );
    assert!(header.contains(&"# Review:"), "{header:#?}");
    for warning in &imported.warnings {
        assert!(header.contains(&format!("# - {warning}").as_str()), "{warning} in {header:#?}");
    }
    assert!(yaml[header.join("\n").len()..].trim_start().starts_with("servers:"), "{yaml}");
}

#[test]
fn only_what_differs_from_the_defaults_is_written() {
    let imported = import(Source::Mcpmon, &[file("mcpmon/single.yaml")]).unwrap();
    assert_eq!(
        to_yaml(&imported.config).unwrap(),
        "servers:\n  crucible:\n    transport:\n      kind: stdio\n      command: crucible-mcp\n    watch:\n      paths:\n      - ~/crucible/src/\n      extensions:\n      - py\nnaming:\n  separator: __\n  prefix: multiple\n  maxLength: 64\n"
    );
}

/// Text YAML could read as something else, in every place text goes.
#[test]
fn awkward_text_and_every_section_round_trip() {
    let awkward = [
        "",
        "yes",
        "no",
        "on",
        "null",
        "~",
        "true",
        "0123",
        "1e3",
        "0x1F",
        "- x",
        "#x",
        "a: b",
        "a #b",
        "*",
        "&a",
        "!tag",
        "[x]",
        "{y}",
        "'q'",
        "\"d\"",
        "@at",
        "%pct",
        "|",
        ">",
        " lead",
        "trail ",
        "multi\nline\n",
        "tab\there",
        "é ✓",
        "${TOKEN}",
        "${HOME:-/tmp}",
        "back\\slash",
        "---",
        "...",
        "? key",
    ];
    let mut config = Config::default();
    let texts: Vec<String> = awkward.iter().map(|text| (*text).to_owned()).collect();
    let env: IndexMap<String, String> =
        texts.iter().enumerate().map(|(i, text)| (format!("V{i}"), text.clone())).collect();
    config.servers.insert(
        "local".into(),
        ServerConfig {
            display_name: Some("yes: no # maybe".into()),
            ..ServerConfig::new(Transport::Stdio {
                command: "npx".into(),
                args: texts.clone(),
                env,
                cwd: Some("~/x y".into()),
            })
        },
    );
    let headers: IndexMap<String, String> =
        texts.iter().enumerate().map(|(i, text)| (format!("X-{i}"), text.clone())).collect();
    config.servers.insert(
        "remote".into(),
        ServerConfig::new(Transport::Http { url: "https://example.com/mcp?a=1&b=#x".into(), headers }),
    );
    let filters = ServerFilters {
        tools: Filter { allow: texts.clone(), deny: vec!["*".into()] },
        resources: Filter { allow: vec!["file://docs/**".into()], deny: vec![] },
        prompts: Filter { allow: vec![], deny: vec!["?".into()] },
    };
    let profile = Profile {
        description: "multi\nline: description".into(),
        servers: IndexMap::from([("local".to_owned(), filters)]),
        ..Profile::default()
    };
    config.profiles.insert("null".into(), profile);
    config.profiles.insert("empty".into(), Profile::default());
    config.default_profile = Some("null".into());
    config.naming.prefix = PrefixMode::Never;
    config.naming.separator = "--".into();
    config.naming.max_length = 40;
    config.limits.max_message_bytes = 4096;
    config.supervision.backoff_max_ms = 1_000;
    config.hub.enabled = false;
    config.expose_per_server = true;
    let yaml = to_yaml(&config).unwrap();
    assert!(same(&load(&yaml), &expanded(&config)), "{yaml}");
}
