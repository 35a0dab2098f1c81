//! Protected by default: Warden's own files and the credential stores are
//! refused with no policy written; shipped annotations find the path
//! arguments of known servers; path-like strings of other tools are checked.

mod common;

use common::{config, engine as compile, expect, js, problems, temp_dir};
use warden_policy::{Decision, PolicyEngine};

/// A configuration with the reference filesystem server and a tool nobody annotated.
const SERVERS: &str = r#"
servers:
  fs: {transport: {kind: stdio, command: npx, args: ["-y", "@modelcontextprotocol/server-filesystem", "/"]}}
  other: {transport: {kind: stdio, command: my-own-server}}
"#;

fn home() -> String {
    std::env::var("HOME").expect("HOME is set for the tests")
}

#[test]
fn credential_stores_are_refused_with_no_policy() {
    let engine = compile(SERVERS);
    let home = home();
    for path in [
        format!("{home}/.ssh/id_rsa"),
        "~/.ssh/id_ed25519".to_owned(),
        format!("{home}/.aws/credentials"),
        format!("{home}/.config/gcloud/application_default_credentials.json"),
        format!("{home}/.netrc"),
        format!("{home}/.docker/config.json"),
        format!("{home}/tmp/../.gnupg/private-keys-v1.d"),
    ] {
        expect(
            &engine,
            "fs",
            "read_text_file",
            &format!(r#"{{"path": {}}}"#, js(&path)),
            Decision::Deny,
            "protected-path",
        );
    }
    // Any path argument of the server: several paths, a move's destination.
    let args = format!(r#"{{"paths": ["/etc/hostname", {}]}}"#, js(&format!("{home}/.kube/config")));
    expect(&engine, "fs", "read_multiple_files", &args, Decision::Deny, "protected-path");
    let args = format!(r#"{{"source": "/tmp/a", "destination": {}}}"#, js(&format!("{home}/.ssh/authorized_keys")));
    expect(&engine, "fs", "move_file", &args, Decision::Deny, "protected-path");
    // A relative path, as the server may resolve it against its root (here `/`).
    let relative = format!(r#"{{"path": {}}}"#, js(&format!("{}/.ssh/id_rsa", home.trim_start_matches('/'))));
    expect(&engine, "fs", "read_text_file", &relative, Decision::Deny, "protected-path");
    // What is not protected goes on to the default.
    expect(&engine, "fs", "read_text_file", r#"{"path": "/etc/hostname"}"#, Decision::Allow, "default");
    expect(&engine, "fs", "write_file", r#"{"path": "/tmp/x", "content": "hello"}"#, Decision::Allow, "default");
}

#[test]
fn wardens_own_files_are_refused() {
    let dir = temp_dir("own");
    let config_file = dir.join("warden.yaml");
    let audit = dir.join("logs/audit.jsonl");
    let text = format!(
        "{SERVERS}audit: {{path: {}}}\napproval: {{exchangeDir: {}}}\n",
        js(&audit.display().to_string()),
        js(&dir.join("exchange").display().to_string())
    );
    std::fs::write(&config_file, &text).unwrap();
    let config = warden_config::load(&config_file).unwrap();
    let engine = PolicyEngine::compile(&config, None).unwrap();
    let home = home();
    for path in [
        config_file.display().to_string(),
        audit.display().to_string(),
        format!("{}.1", audit.display()),
        dir.join("exchange/response-1.json").display().to_string(),
        format!("{home}/.config/warden/warden.yaml"),
        format!("{home}/.local/state/warden/approvals.sock"),
    ] {
        let args = format!(r#"{{"path": {}, "content": "x"}}"#, js(&path));
        expect(&engine, "fs", "write_file", &args, Decision::Deny, "protected-path");
        // The same path given to a tool nobody annotated.
        let args = format!(r#"{{"target": {{"where": [{}]}}}}"#, js(&path));
        expect(&engine, "other", "anything", &args, Decision::Deny, "protected-path");
    }
    // A file beside them is not.
    let beside = dir.join("notes.txt").display().to_string();
    expect(&engine, "fs", "write_file", &format!(r#"{{"path": {}}}"#, js(&beside)), Decision::Allow, "default");
}

#[test]
fn unannotated_tools_are_checked_for_path_like_strings() {
    let engine = compile(SERVERS);
    let home = home();
    for value in [
        format!("{home}/.ssh/id_rsa"),
        "~/.ssh/id_rsa".to_owned(),
        format!("file://{home}/.ssh/id_rsa"),
        format!("file://localhost{home}/%2Essh/id_rsa"),
        format!("{home}/.ssh/../.ssh/id_rsa"),
        // What a server that trims, or a C library that stops at a NUL, opens.
        format!("  {home}/.ssh/id_rsa\n"),
        format!("{home}/.ssh/id_rsa\u{0}.png"),
        // Padding past `PATH_MAX` where no path is: a query, after a NUL.
        format!("file://{home}/.ssh/id_rsa?{}", "q".repeat(5000)),
        format!("{home}/.ssh/id_rsa\u{0}{}", "x".repeat(5000)),
    ] {
        expect(&engine, "other", "read", &format!(r#"{{"file": {}}}"#, js(&value)), Decision::Deny, "protected-path");
        // Also behind JSON escapes.
        let escaped = js(&value).replace('/', "\\u002f");
        expect(&engine, "other", "read", &format!(r#"{{"file": {escaped}}}"#), Decision::Deny, "protected-path");
    }
    // Strings that are not whole paths, and relative paths, are left alone.
    for value in ["see ~/.ssh/id_rsa", ".ssh/id_rsa", "hello", "https://example.com/.ssh/id_rsa"] {
        expect(&engine, "other", "read", &format!(r#"{{"file": {}}}"#, js(value)), Decision::Allow, "default");
    }
    // An argument an annotation leaves out is checked too.
    let args = format!(r#"{{"path": "/tmp/x", "content": {}}}"#, js(&format!("{home}/.ssh/id_rsa")));
    expect(&engine, "fs", "write_file", &args, Decision::Deny, "protected-path");
}

#[test]
fn protected_paths_add_and_removing_a_default_is_explicit() {
    let dir = temp_dir("add");
    let extra = dir.join("secrets");
    let text = format!(
        "{SERVERS}policy:\n  protectedPaths: [{}]\n  unprotectDefaults: [\"~/.npmrc\"]\n",
        js(&extra.display().to_string())
    );
    let engine = compile(&text);
    let inside = extra.join("key").display().to_string();
    expect(
        &engine,
        "fs",
        "read_text_file",
        &format!(r#"{{"path": {}}}"#, js(&inside)),
        Decision::Deny,
        "protected-path",
    );
    expect(&engine, "fs", "read_text_file", r#"{"path": "~/.npmrc"}"#, Decision::Allow, "default");
    expect(&engine, "fs", "read_text_file", r#"{"path": "~/.pypirc"}"#, Decision::Deny, "protected-path");
    assert!(
        engine.warnings().iter().any(|w| w.contains("~/.npmrc")),
        "the removal is reported: {:?}",
        engine.warnings()
    );
    // Only a built-in path can be removed, written as in the list.
    let wrong = problems(&format!("{SERVERS}policy: {{unprotectDefaults: [\"~/.npmrc/\"]}}\n"));
    assert!(wrong.iter().any(|p| p.contains("not a built-in protected path")), "{wrong:?}");
}

#[test]
fn a_servers_own_annotations_replace_the_shipped_ones() {
    let home = home();
    // With its own annotation, which leaves `path` out, the path-like check
    // still refuses the credential store.
    let text =
        format!("{SERVERS}policy:\n  annotations:\n    fs:\n      read_text_file: {{args: {{other: [note]}}}}\n");
    let engine = compile(&text);
    let args = format!(r#"{{"path": {}}}"#, js(&format!("{home}/.ssh/id_rsa")));
    let evaluation = expect(&engine, "fs", "read_text_file", &args, Decision::Deny, "protected-path");
    assert!(evaluation.reason.contains("names"), "found by the path-like check: {}", evaluation.reason);
    // An argument the annotation describes is decided by its roles: here an
    // opaque one (the user said it is not a path).
    let text = format!("{SERVERS}policy:\n  annotations:\n    fs:\n      read_text_file: {{args: {{path: [note]}}}}\n");
    expect(&compile(&text), "fs", "read_text_file", &args, Decision::Allow, "default");
    // Shipped annotations make rules on roles work with no annotation written.
    let text =
        format!("{SERVERS}policy:\n  rules:\n    - {{name: no-writes, if: {{roles: [write-path]}}, then: deny}}\n");
    let engine = compile(&text);
    expect(&engine, "fs", "write_file", r#"{"path": "/tmp/x"}"#, Decision::Deny, "no-writes");
    expect(&engine, "fs", "read_text_file", r#"{"path": "/tmp/x"}"#, Decision::Allow, "default");
    // A dry-run edit is a read.
    expect(&engine, "fs", "edit_file", r#"{"path": "/tmp/x", "dryRun": true}"#, Decision::Allow, "default");
    let _ = config(SERVERS);
}

#[test]
fn rules_that_can_never_match_are_reported() {
    let text = format!(
        "{SERVERS}policy:\n  rules:\n    - {{name: ghost, if: {{server: [db]}}, then: deny}}\n    - {{name: no-role, if: {{roles: [fetch-url]}}, then: deny}}\n    - {{name: writes, if: {{roles: [write-path]}}, then: escalate}}\n    - {{name: everything, then: allow}}\n    - {{name: after, if: {{tool: [x]}}, then: deny}}\n"
    );
    let engine = compile(&text);
    let warnings = engine.warnings().join("\n");
    assert!(warnings.contains("rule 'ghost' never matches: no configured server"), "{warnings}");
    assert!(warnings.contains("rule 'no-role' never matches: no annotation"), "{warnings}");
    assert!(!warnings.contains("'writes'"), "the filesystem server's shipped annotation gives write-path: {warnings}");
    assert!(warnings.contains("rule 'after' never decides a tool call: rule 'everything'"), "{warnings}");
}

/// A `resources/read` of `uri` by `server`, and what decided it.
fn read(engine: &PolicyEngine, server: &str, uri: &str) -> (Decision, String) {
    let evaluation = engine.evaluate_request(warden_policy::Request::Resource, server, uri, None);
    (evaluation.action, evaluation.rule)
}

#[test]
fn resources_and_prompts_that_name_protected_paths_are_refused_with_no_policy() {
    let engine = compile(SERVERS);
    let home = home();
    let refused = (Decision::Deny, "protected-path".to_owned());
    for uri in [
        format!("file://{home}/.ssh/id_rsa"),
        format!("FILE://localhost{home}/%2essh/id_rsa"),
        format!("file:{home}/.aws/credentials"),
        format!("file://{home}/tmp/../.gnupg/private-keys-v1.d"),
        format!("file://{home}/.ssh/id_rsa?raw#top"),
        format!("file://{home}/.ssh/id_rsa%00.png"),
        format!(" file://{home}/.ssh/id_rsa\n"),
        format!("{home}/.ssh/id_rsa"),
        "~/.netrc".to_owned(),
    ] {
        assert_eq!(read(&engine, "other", &uri), refused, "{uri}");
    }
    // `file://home/u/.ssh` is `/u/.ssh` on host `home` by the standard, and
    // `home/u/.ssh` under the server's directory (`/` for `fs`) to a server
    // that strips the prefix.
    let host_form = format!("file://{}/.ssh/id_rsa", home.trim_start_matches('/'));
    assert_eq!(read(&engine, "fs", &host_form), refused);
    // What is not protected is judged by the rules (none here).
    let allowed = (Decision::Allow, "no-rule".to_owned());
    for uri in ["file:///etc/hostname", "fixture://items/1", "https://example.com/.ssh/id_rsa", ".ssh/id_rsa"] {
        assert_eq!(read(&engine, "other", uri), allowed, "{uri}");
    }
    // A prompt argument whose whole value names a protected path.
    let prompt = |args: &str| {
        let evaluation = engine.evaluate_request(warden_policy::Request::Prompt, "other", "explain", Some(args));
        (evaluation.action, evaluation.rule)
    };
    assert_eq!(prompt(&format!(r#"{{"file": {}}}"#, js(&format!("{home}/.ssh/id_rsa")))), refused);
    assert_eq!(prompt(&format!(r#"{{"file": {}}}"#, js(&format!("file://{home}/.kube/config")))), refused);
    assert_eq!(prompt(r#"{"topic": "where ssh keys live"}"#), allowed);
}

#[test]
fn a_resource_is_judged_where_its_symlinks_lead() {
    let dir = temp_dir("resource-link");
    let config_file = dir.join("warden.yaml");
    std::fs::write(&config_file, SERVERS).unwrap();
    let elsewhere = temp_dir("resource-link-elsewhere");
    std::os::unix::fs::symlink(&config_file, elsewhere.join("innocent.txt")).unwrap();
    let config = warden_config::load(&config_file).unwrap();
    let engine = PolicyEngine::compile(&config, None).unwrap();
    let uri = format!("file://{}", elsewhere.join("innocent.txt").display());
    assert_eq!(read(&engine, "other", &uri), (Decision::Deny, "protected-path".to_owned()));
    // A trusted server is not judged; a removed default is not protected.
    let trusting = compile(&format!("{SERVERS}policy: {{trustedServers: [other], unprotectDefaults: [\"~/.ssh\"]}}\n"));
    let home = home();
    assert_eq!(read(&trusting, "other", &format!("file://{home}/.aws/config")).1, "trusted-server");
    assert_eq!(read(&trusting, "fs", &format!("file://{home}/.ssh/id_rsa")).1, "no-rule");
    assert_eq!(read(&trusting, "fs", &format!("file://{home}/.aws/config")).1, "protected-path");
}

/// A completion whose partial value, or a value filled in before it, lies
/// within a protected path is refused: a server completing a path lists
/// the directory it is in. A relative value is resolved against the
/// server's directories, a symbolic link followed; the argument's name is
/// not a path, and what is not within one is allowed.
#[test]
fn completions_within_protected_paths_are_refused() {
    use warden_pipeline::{Call, Guard, Verdict};
    let dir = temp_dir("completion");
    let root = std::fs::canonicalize(&dir).unwrap();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::os::unix::fs::symlink(format!("{}/.ssh", home()), root.join("keys")).unwrap();
    let servers = format!(
        "servers:\n  fs: {{transport: {{kind: stdio, command: npx, args: [\"-y\", \"@modelcontextprotocol/server-filesystem\", {}]}}}}\n",
        js(&root.display().to_string())
    );
    let engine = compile(&servers);
    let method = warden_jsonrpc::Method::Complete;
    let complete = |argument: &str, context: &str| {
        let arguments = format!(r#"{{"argument":{argument},"context":{context}}}"#);
        let call =
            Call { session: "s", server: "fs", method: &method, name: "file:///{path}", arguments: Some(&arguments) };
        matches!(engine.decide(&call), Verdict::Deny { .. })
    };
    let value = |value: &str| format!(r#"{{"name":"path","value":{}}}"#, js(value));
    let home = home();
    assert!(complete(&value(&format!("{home}/.ssh/")), "null"), "an absolute value");
    assert!(complete(&value("~/.aws/cre"), "null"), "a ~ value");
    assert!(complete(&value("keys/id_"), "null"), "a relative value, through a link");
    let filled = format!(r#"{{"arguments":{{"dir":{}}}}}"#, js(&format!("{home}/.ssh")));
    assert!(complete(&value("id_"), &filled), "a value filled in before");
    assert!(!complete(&value("notes/"), "null"), "a directory not protected");
    assert!(!complete(&value("a"), "null"), "a plain value");
    assert!(!complete(r#"{"name":"keys/","value":"x"}"#, "null"), "the argument's name is no path");
    // A resource template's URI with the values in: judged as a read of it,
    // also where the value alone names nothing protected.
    let uri = |uri: &str| {
        let arguments = format!(r#"{{"argument":{},"context":null,"uri":{}}}"#, value("id_"), js(uri));
        let call = Call { session: "s", server: "fs", method: &method, name: "t", arguments: Some(&arguments) };
        matches!(engine.decide(&call), Verdict::Deny { .. })
    };
    assert!(uri(&format!("file://{home}/.ssh/id_")), "a template's URI");
    assert!(uri(&format!("file://localhost{home}/%2essh/id_")), "the URI's other forms");
    assert!(uri("file://keys/id_"), "a host read as a directory of the server's, as for a read");
    assert!(!uri(&format!("file://{}/notes/id_", root.display())), "a URI not protected");
}
