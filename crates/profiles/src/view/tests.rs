//! The profile semantics, end to end from a configuration file.

use std::path::Path;

use warden_config::Config;
use warden_pipeline::ItemKind;
use warden_pipeline::View;

use crate::{ProfileError, ProfileView};

const SERVERS: &str = "\
servers:
  fs:
    transport: {kind: stdio, command: fs}
  gh:
    transport: {kind: stdio, command: gh}
";

fn config(rest: &str) -> Config {
    let text = format!("{SERVERS}{rest}");
    match warden_config::parse(Path::new("test.yaml"), &text, &|_| None) {
        Ok(config) => config,
        Err(err) => panic!("invalid test config: {err}"),
    }
}

fn view(rest: &str) -> ProfileView {
    match ProfileView::compile(&config(rest), None) {
        Ok(view) => view,
        Err(err) => panic!("profile did not compile: {err}"),
    }
}

/// A profile `p` whose `fs` server has the given resource filter.
fn resources(filter: &str) -> ProfileView {
    view(&format!("defaultProfile: p\nprofiles:\n  p:\n    servers:\n      fs:\n        resources: {filter}\n"))
}

#[test]
fn no_profiles_shows_everything() {
    let view = view("");
    assert_eq!(view.name(), None);
    for kind in ItemKind::ALL {
        assert!(view.shows("fs", kind, "anything"));
        assert!(view.shows("unknown", kind, "file://../../etc/passwd"));
    }
    assert!(view.explain("fs", ItemKind::Tool, "x").visible);
}

#[test]
fn empty_allow_means_everything_and_deny_wins() {
    let view = view(
        "defaultProfile: safe
profiles:
  safe:
    servers:
      fs:
        tools: {deny: ['write_*']}
        prompts: {allow: ['review', 'sum*'], deny: ['summary_secret']}
",
    );
    assert_eq!(view.name(), Some("safe"));
    assert!(view.shows("fs", ItemKind::Tool, "read_file"));
    assert!(!view.shows("fs", ItemKind::Tool, "write_file"));
    assert!(view.shows("fs", ItemKind::Prompt, "review"));
    assert!(view.shows("fs", ItemKind::Prompt, "summarise"));
    assert!(!view.shows("fs", ItemKind::Prompt, "summary_secret"));
    assert!(!view.shows("fs", ItemKind::Prompt, "other"));
    // No resource filter at all: every resource and template.
    assert!(view.shows("fs", ItemKind::Resource, "file://anything/at/all"));
    assert!(view.shows("fs", ItemKind::Template, "file://{path}"));
}

#[test]
fn name_globs_cross_every_character() {
    let view = view("defaultProfile: p\nprofiles:\n  p:\n    servers:\n      fs:\n        tools: {allow: ['a*']}\n");
    assert!(view.shows("fs", ItemKind::Tool, "a/b.c"));
    assert!(!view.shows("fs", ItemKind::Tool, "ba"));
}

#[test]
fn unlisted_server_is_hidden_entirely() {
    let view = view("defaultProfile: p\nprofiles:\n  p:\n    servers:\n      fs: {}\n");
    for kind in ItemKind::ALL {
        assert!(view.shows("fs", kind, "fixture://x"));
        assert!(!view.shows("gh", kind, "fixture://x"));
    }
    let decision = view.explain("gh", ItemKind::Tool, "list_issues");
    assert!(!decision.visible);
    assert_eq!(decision.reason, "server \"gh\" is not in profile \"p\"");
}

#[test]
fn chosen_profile_overrides_the_default() {
    let config =
        config("defaultProfile: a\nprofiles:\n  a:\n    servers:\n      fs: {}\n  b:\n    servers:\n      gh: {}\n");
    let view = ProfileView::compile(&config, Some("b")).expect("compiles");
    assert_eq!(view.name(), Some("b"));
    assert!(view.shows("gh", ItemKind::Tool, "x"));
    assert!(!view.shows("fs", ItemKind::Tool, "x"));
}

#[test]
fn unknown_profile_lists_the_available_ones() {
    let two = config("defaultProfile: dev\nprofiles:\n  dev: {}\n  safe: {}\n");
    let err = ProfileView::compile(&two, Some("prod")).expect_err("unknown");
    assert_eq!(err, ProfileError::Unknown { name: "prod".into(), available: vec!["dev".into(), "safe".into()] });
    assert_eq!(err.to_string(), "unknown profile \"prod\" (profiles: dev, safe)");
    let none = ProfileView::compile(&config(""), Some("dev")).expect_err("no profiles");
    assert_eq!(none.to_string(), "unknown profile \"dev\" (no profiles are defined)");
}

#[test]
fn profiles_without_a_choice_fail_closed() {
    let mut config = config("defaultProfile: dev\nprofiles:\n  dev: {}\n");
    config.default_profile = None;
    let err = ProfileView::compile(&config, None).expect_err("nothing chosen");
    assert_eq!(err, ProfileError::NoneChosen { available: vec!["dev".into()] });
}

#[test]
fn every_invalid_glob_is_reported() {
    let config = config(
        "defaultProfile: p
profiles:
  p:
    servers:
      fs:
        tools: {allow: ['[abc', 'fine_*'], deny: ['{x']}
        resources: {allow: ['file://../**']}
      gh:
        prompts: {deny: ['a[']}
",
    );
    let Err(ProfileError::InvalidPatterns(problems)) = ProfileView::compile(&config, None) else {
        panic!("expected invalid patterns");
    };
    let found: Vec<_> =
        problems.iter().map(|p| (p.profile.as_str(), p.server.as_str(), p.kind, p.list, p.pattern.as_str())).collect();
    assert_eq!(
        found,
        [
            ("p", "fs", "tools", "allow", "[abc"),
            ("p", "fs", "tools", "deny", "{x"),
            ("p", "fs", "resources", "allow", "file://../**"),
            ("p", "gh", "prompts", "deny", "a["),
        ]
    );
    let message = ProfileError::InvalidPatterns(problems).to_string();
    assert!(message.starts_with("4 invalid patterns: profile \"p\", server \"fs\": tools allow pattern \"[abc\": "));
}

#[test]
fn traversal_never_escapes_an_allow() {
    let view = resources("{allow: ['file://docs/**']}");
    for uri in [
        "file://docs/../secret/x",
        "file://docs/%2e%2e/secret/x",
        "file://docs/%2E%2E/secret/x",
        "file://docs/%252e%252e/secret/x",
        "file://docs/..%2fsecret/x",
        "file://docs/..%5csecret/x",
        "file://docs\\..\\secret\\x",
        "file://docs/./../secret/x",
        "file://docs/a/../../secret/x",
        "file://docs/%00/x",
        "file://docs/../../docs/x",
        "file://docs/.../x",
        "file://secret/x?/../../docs/a",
    ] {
        assert!(!view.shows("fs", ItemKind::Resource, uri), "{uri} should be hidden");
        assert!(!view.shows("fs", ItemKind::Template, uri), "{uri} should be hidden as a template");
        assert!(!view.explain("fs", ItemKind::Resource, uri).visible, "{uri}");
    }
    for uri in
        ["file://docs/a/b.md", "FILE://docs/a.md", "file://docs/a/./b.md", "file://docs/a/../b.md", "file://docs//a.md"]
    {
        assert!(view.shows("fs", ItemKind::Resource, uri), "{uri} should be visible");
        assert!(view.explain("fs", ItemKind::Resource, uri).visible, "{uri}");
    }
}

#[test]
fn traversal_never_escapes_a_deny() {
    let view = resources("{deny: ['file://docs/private/**']}");
    for uri in [
        "file://docs/public/../private/k",
        "file://docs/%70rivate/k",
        "file://docs//private/k",
        "FILE://DOCS/private/k",
        "file://docs/private%2fk",
        "file://other/../docs/private/k",
    ] {
        assert!(!view.shows("fs", ItemKind::Resource, uri), "{uri} should be hidden");
    }
    assert!(view.shows("fs", ItemKind::Resource, "file://docs/public/k"));
}

#[test]
fn patterns_are_normalised_too() {
    let view = resources("{allow: ['FILE://Docs/%70ublic/**', 'file://docs/a/../b/*']}");
    assert!(view.shows("fs", ItemKind::Resource, "file://docs/public/x"));
    assert!(view.shows("fs", ItemKind::Resource, "file://docs/b/x"));
    assert!(!view.shows("fs", ItemKind::Resource, "file://docs/a/x"));
}

#[test]
fn uri_star_does_not_cross_slashes() {
    let view = resources("{allow: ['fixture://items/*']}");
    assert!(view.shows("fs", ItemKind::Template, "fixture://items/{id}"));
    assert!(view.shows("fs", ItemKind::Resource, "fixture://items/7"));
    // The query is part of what is matched, so `*` stops at a '/' in it too.
    assert!(view.shows("fs", ItemKind::Resource, "fixture://items/7?fields=a,b"));
    assert!(!view.shows("fs", ItemKind::Resource, "fixture://items/7?fields=a/b"));
    assert!(!view.shows("fs", ItemKind::Resource, "fixture://items/7/parts"));
    assert!(!view.shows("fs", ItemKind::Template, "fixture://other/{id}"));
}

#[test]
fn unnormalisable_uris_are_hidden_even_without_an_allow_list() {
    let view = resources("{}");
    assert!(view.shows("fs", ItemKind::Resource, "file://docs/x"));
    assert!(!view.shows("fs", ItemKind::Resource, "file://../x"));
    assert!(!view.shows("fs", ItemKind::Resource, "file://docs/%ff"));
    assert!(!view.explain("fs", ItemKind::Resource, "file://../x").visible);
}

#[test]
fn explain_gives_short_reasons() {
    let view = view(
        "defaultProfile: safe
profiles:
  safe:
    servers:
      gh:
        tools: {allow: ['read_*', 'list_*'], deny: ['read_secret*']}
        resources: {allow: ['file://docs/**']}
",
    );
    let reason = |server: &str, kind, key: &str| view.explain(server, kind, key);
    assert_eq!(reason("gh", ItemKind::Tool, "read_file").reason, "allowed by \"read_*\"");
    assert_eq!(reason("gh", ItemKind::Tool, "read_secrets").reason, "denied by \"read_secret*\"");
    assert_eq!(reason("gh", ItemKind::Tool, "write_file").reason, "not in allow list");
    assert_eq!(reason("gh", ItemKind::Prompt, "any").reason, "no allow list: everything allowed");
    assert_eq!(reason("fs", ItemKind::Tool, "x").reason, "server \"fs\" is not in profile \"safe\"");
    assert_eq!(reason("gh", ItemKind::Resource, "file://docs/a").reason, "allowed by \"file://docs/**\"");
    assert_eq!(
        reason("gh", ItemKind::Resource, "file://docs/../etc/x").reason,
        "not in allow list (as \"file://etc/x\")"
    );
    assert!(reason("gh", ItemKind::Resource, "file://../x").reason.starts_with("URI cannot be normalised"));
    for (kind, key) in [(ItemKind::Tool, "read_file"), (ItemKind::Tool, "write"), (ItemKind::Resource, "file://x")] {
        assert_eq!(view.explain("gh", kind, key).visible, view.shows("gh", kind, key));
    }
}
