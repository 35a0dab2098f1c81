//! mcpmon gateway configs.

mod common;

use std::path::Path;

use common::{file, named, text, warning};
use warden_config::{PrefixMode, Transport};
use warden_import::{ImportError, Source, import};

/// A stdio transport's fields.
#[derive(Debug, PartialEq)]
struct Stdio<'a> {
    command: &'a str,
    args: &'a [String],
    env: Vec<(&'a str, &'a str)>,
    cwd: Option<&'a Path>,
}

fn stdio(transport: &Transport) -> Stdio<'_> {
    let Transport::Stdio { command, args, env, cwd } = transport else { panic!("expected stdio, got {transport:?}") };
    let env = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Stdio { command, args, env, cwd: cwd.as_deref() }
}

#[test]
fn backends_become_stdio_servers() {
    let imported = import(Source::Mcpmon, &[file("mcpmon/mcpmon.yaml")]).unwrap();
    let config = &imported.config;
    assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["sage", "crucible", "my-server", "node_tools", "notes"]);
    assert_eq!(
        stdio(&config.servers["sage"].transport),
        Stdio { command: "sage-mcp", args: &[], env: vec![], cwd: None }
    );
    assert_eq!(stdio(&config.servers["notes"].transport).command, "notes-mcp");
    let Stdio { command, args, env, .. } = stdio(&config.servers["my-server"].transport);
    assert_eq!((command, args), ("python", &["-m".to_owned(), "my_server".to_owned()][..]));
    // Values as mcpmon passes them: str(True), str(8080); ${VAR} kept for Warden to expand.
    assert_eq!(env, [("API_KEY", "${MY_SERVER_API_KEY}"), ("DEBUG", "True"), ("PORT", "8080")]);
    // cmd as a list; mcpmon passes args literally, so "${name}" is escaped.
    let Stdio { command, args, cwd, .. } = stdio(&config.servers["node_tools"].transport);
    assert_eq!(command, "node");
    assert_eq!(args, ["dist/index.js", "--stdio", "--template", "$${name}.md"]);
    assert_eq!(cwd, Some(Path::new("./packages/tools")));
    assert_eq!(config.naming.prefix, PrefixMode::Multiple);
    assert_eq!(config.naming.separator, "__");
    assert!(config.profiles.is_empty() && config.default_profile.is_none());
    assert!(imported.origin.starts_with("mcpmon config ") && imported.origin.ends_with("mcpmon.yaml"));

    warning(&imported, &["\"node.tools\"", "\"node_tools\""]);
    warning(&imported, &["backend::tool", "backend__tool", "naming.prefix: multiple"]);
    // watch and extensions carry over; mcpmon's default extension is py.
    let watch = |name: &str| config.servers[name].watch.clone().map(|w| (w.paths, w.extensions));
    assert_eq!(watch("sage"), Some((vec!["~/.sage/src/".to_owned()], vec!["py".to_owned()])));
    assert_eq!(watch("my-server"), Some((vec!["./src/".to_owned()], vec!["py".to_owned(), "json".to_owned()])));
    assert_eq!(watch("notes"), None);
    assert_eq!(watch("node_tools"), None, "mcpmon watches nothing without watch:");
    warning(&imported, &["servers.node.tools has extensions (ts) but no watch"]);
    warning(&imported, &["settings.log_level (debug)", "--log-level"]);
    warning(&imported, &["settings.notify_on_change (true)"]);
    warning(&imported, &["'$' is doubled in servers.node.tools.args"]);
    warning(&imported, &["${MY_SERVER_API_KEY}", "refuses to start"]);
}

#[test]
fn a_single_backend_stays_unprefixed() {
    let imported = import(Source::Mcpmon, &[file("mcpmon/single.yaml")]).unwrap();
    assert_eq!(imported.config.servers.keys().collect::<Vec<_>>(), ["crucible"]);
    assert_eq!(imported.config.naming.prefix, PrefixMode::Multiple);
    let watch = imported.config.servers["crucible"].watch.as_ref().expect("watch carried over");
    assert_eq!(
        (&watch.paths[..], &watch.extensions[..]),
        (&["~/crucible/src/".to_owned()][..], &["py".to_owned()][..])
    );
    let yaml = imported.to_yaml().unwrap();
    assert!(yaml.contains("watch:") && yaml.contains("~/crucible/src/"), "{yaml}");
    let loaded = warden_config::parse(Path::new("warden.yaml"), &yaml, &|_| None).unwrap();
    assert_eq!(loaded.servers["crucible"].watch.as_ref(), Some(watch), "the written config loads the same watch");
}

#[test]
fn literal_text_survives_loading() {
    let imported = import(Source::Mcpmon, &[file("mcpmon/mcpmon.yaml")]).unwrap();
    let yaml = imported.to_yaml().unwrap();
    let lookup = |name: &str| (name == "MY_SERVER_API_KEY").then(|| "k3y".to_owned());
    let loaded = warden_config::parse(Path::new("warden.yaml"), &yaml, &lookup).unwrap();
    assert_eq!(stdio(&loaded.servers["node_tools"].transport).args[3], "${name}.md", "passed as mcpmon passed it");
    assert_eq!(stdio(&loaded.servers["my-server"].transport).env[0], ("API_KEY", "k3y"), "expanded as mcpmon did");
}

#[test]
fn simple_forms_and_empty_files() {
    let imported =
        import(Source::Mcpmon, &[text("m.yaml", "servers:\n  a: \"my server\"\n  b: {cmd: b-mcp}\n")]).unwrap();
    assert_eq!(stdio(&imported.config.servers["b"].transport).command, "b-mcp");
    warning(&imported, &["servers.a", "contains spaces"]);

    for empty in ["", "# nothing yet\n", "servers:\n"] {
        let imported = import(Source::Mcpmon, &[text("m.yaml", empty)]).unwrap();
        assert!(imported.config.servers.is_empty());
        warning(&imported, &["no servers"]);
    }
    let imported = import(Source::Mcpmon, &[text("m.yaml", "servers: {a: a-mcp}\nbackends: {}\n")]).unwrap();
    warning(&imported, &["ignored backends"]);
    let imported = import(Source::Mcpmon, &[text("m.yaml", "servers:\n  a: {command: a, restart: always}\n")]).unwrap();
    warning(&imported, &["ignored servers.a.restart"]);
}

fn error(files: &[(std::path::PathBuf, String)]) -> String {
    import(Source::Mcpmon, files).unwrap_err().to_string()
}

#[test]
fn malformed_files_are_errors_naming_the_file() {
    let err = error(&[file("bad/mcpmon-no-command.yaml")]);
    assert!(err.contains("mcpmon-no-command.yaml: line 4, column 3: servers.broken: has no command"), "{err}");

    let err = error(&[file("bad/mcpmon-args.yaml")]);
    assert!(
        err.contains("mcpmon-args.yaml: line 4, column 5: servers.sage.args: expected a list, found text"),
        "{err}"
    );

    let err = error(&[file("bad/mcpmon-syntax.yaml")]);
    assert!(err.contains("mcpmon-syntax.yaml: not valid YAML") && err.contains("line"), "{err}");

    for (yaml, expected) in [
        ("- a\n- b\n", "m.yaml: expected a mapping, found a list"),
        ("servers: [a, b]\n", "servers: expected a mapping, found a list"),
        ("servers:\n  a: 3\n", "servers.a: expected a command"),
        ("servers:\n  a:\n", "servers.a: expected a command"),
        ("servers:\n  a: {command: []}\n", "servers.a.command: the command list is empty"),
        ("servers:\n  a: {command: [x, [y]]}\n", "servers.a.command[1]: expected text, found a list"),
        ("servers:\n  a: {command: ' '}\n", "servers.a: the command is empty"),
        ("servers:\n  a: {command: x, env: [A]}\n", "servers.a.env: expected a mapping"),
        ("servers:\n  a: {command: x, env: {A: }}\n", "servers.a.env.A: has no value"),
        ("servers:\n  a: {command: x, watch: [a, b]}\n", "servers.a.watch: expected text"),
        ("servers:\n  a.b: x\n  a_b: y\n", "servers \"a.b\" and \"a_b\" would get the same Warden name"),
        ("settings: loud\n", "settings: expected a mapping, found text"),
    ] {
        let err = error(&[text("m.yaml", yaml)]);
        assert!(err.starts_with("m.yaml: ") && err.contains(expected), "{yaml:?}: {err}");
    }
}

#[test]
fn takes_exactly_one_unnamed_file() {
    let err = import(Source::Mcpmon, &[]).unwrap_err();
    assert!(matches!(err, ImportError::NoFiles { format: "mcpmon" }), "{err}");
    let err = error(&[file("mcpmon/mcpmon.yaml"), file("mcpmon/single.yaml")]);
    assert_eq!(err, "mcpmon keeps its whole configuration in one file; got 2 files");
    let err = error(&[named("x", "mcpmon/single.yaml")]);
    assert!(err.contains("x=FILE names an mcptools inventory's server"), "{err}");
}
