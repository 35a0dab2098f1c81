use std::path::Path;

use super::{merge, read_config};
use crate::error::ImportError;

fn config(text: &str) -> warden_config::Config {
    read_config(Path::new("w.yaml"), text).expect("a config")
}

const MINE: &str = "\
servers:
  files: {transport: {kind: stdio, command: files, args: ['${HOME}']}}
defaultProfile: safe
profiles:
  safe: {servers: {files: {tools: {allow: [read_file]}}}}
policy:
  rules:
    - {name: mine, if: {tool: ['delete_*']}, then: deny}
";

#[test]
fn servers_and_rules_come_after_the_users_and_env_references_stay_unexpanded() {
    let theirs = config(
        "servers:\n  git: {transport: {kind: stdio, command: git-mcp}}\npolicy:\n  rules:\n    - {name: theirs, if: {tool: [push]}, then: escalate}\n",
    );
    let merged = merge(config(MINE), theirs, false).expect("merged");
    assert_eq!(merged.config.servers.keys().collect::<Vec<_>>(), ["files", "git"]);
    let rules: Vec<&str> = merged.config.policy.rules.iter().map(|rule| rule.name.as_str()).collect();
    assert_eq!(rules, ["mine", "theirs"]);
    let warden_config::Transport::Stdio { args, .. } = &merged.config.servers["files"].transport else { panic!() };
    assert_eq!(args, &["${HOME}"]);
    assert!(merged.notes.iter().any(|note| note.contains("\"safe\" does not list \"git\"")), "{:?}", merged.notes);
}

#[test]
fn a_server_defined_differently_is_a_clash_unless_replaced_in_place() {
    let theirs = config(
        "servers:\n  files: {transport: {kind: stdio, command: other}}\n  git: {transport: {kind: stdio, command: g}}\n",
    );
    let Err(ImportError::Clash { clashes }) = merge(config(MINE), theirs.clone(), false) else { panic!("merged") };
    assert_eq!(clashes, ["server \"files\" is already defined differently"]);
    let merged = merge(config(MINE), theirs, true).expect("replaced");
    assert_eq!(merged.config.servers.keys().collect::<Vec<_>>(), ["files", "git"], "in place");
    let warden_config::Transport::Stdio { command, .. } = &merged.config.servers["files"].transport else { panic!() };
    assert_eq!(command, "other");
    // The same definition again is no clash.
    assert!(merge(config(MINE), config(MINE), false).is_ok());
}

#[test]
fn profiles_merge_server_by_server_and_rule_names_clash() {
    let theirs = config(
        "servers:\n  git: {transport: {kind: stdio, command: g}}\ndefaultProfile: dev\nprofiles:\n  safe: {servers: {git: {tools: {allow: [log]}}}}\n  dev: {servers: {git: {}}}\n",
    );
    let merged = merge(config(MINE), theirs, false).expect("merged");
    let profiles = &merged.config.profiles;
    assert_eq!(profiles["safe"].servers.keys().collect::<Vec<_>>(), ["files", "git"]);
    assert_eq!(profiles["dev"].servers.keys().collect::<Vec<_>>(), ["git"]);
    assert_eq!(merged.config.default_profile.as_deref(), Some("safe"), "the user's default stays");
    assert!(merged.notes.iter().any(|note| note.starts_with("kept the config's defaultProfile")), "{:?}", merged.notes);

    let clash = config("policy:\n  rules:\n    - {name: mine, if: {tool: [x]}, then: allow}\n");
    let Err(ImportError::Clash { clashes }) = merge(config(MINE), clash, false) else { panic!("merged") };
    assert_eq!(clashes, ["policy rule \"mine\" is already defined differently"]);
}

#[test]
fn profiles_added_to_a_config_without_them_keep_its_servers_visible() {
    let mine = config("servers:\n  files: {transport: {kind: stdio, command: f}}\nnaming: {prefix: never}\n");
    let theirs = config(
        "servers:\n  git: {transport: {kind: stdio, command: g}}\ndefaultProfile: safe\nprofiles:\n  safe: {servers: {git: {tools: {allow: [log]}}}}\n",
    );
    let merged = merge(mine, theirs, false).expect("merged");
    let safe = &merged.config.profiles["safe"];
    assert_eq!(safe.servers["files"], warden_config::ServerFilters::default());
    assert_eq!(merged.config.default_profile.as_deref(), Some("safe"));
    assert_eq!(merged.config.naming.prefix, warden_config::PrefixMode::Never, "the user's naming stays");
}
