//! URL roles: domain allowlists, `*` versus IP addresses, git remotes.

mod common;

use common::{engine, expect, js};
use warden_policy::{Decision, PolicyEngine};

fn web_and_git() -> PolicyEngine {
    engine(
        r#"
policy:
  allowedDomains:
    web: ["*"]
    git: [github.com, "*.gitlab.com"]
  annotations:
    web: {fetch: {args: {url: [fetch-url]}}}
    git:
      clone: {args: {remote: [git-remote-url], dir: [write-path]}}
      push: {args: {remote: [git-remote-url]}}
    api: {call: {args: {endpoint: [fetch-url]}}}
  rules:
    - name: no-admin-fetches
      if: {server: [web], args: {arg: url, contains: "/admin"}}
      then: deny
    - name: internal-hosts
      if: {roles: [fetch-url], domains: {allowed: ["*.internal.example", "10.0.0.1"]}}
      then: allow
    - name: escalate-other-endpoints
      if: {server: [api], roles: [fetch-url]}
      then: escalate
"#,
    )
}

fn url(u: &str) -> String {
    format!(r#"{{"url": {}}}"#, js(u))
}

fn remote(u: &str) -> String {
    format!(r#"{{"remote": {}}}"#, js(u))
}

#[test]
fn star_allows_names_but_never_ips() {
    let engine = web_and_git();
    for u in ["https://example.com/x", "http://sub.example.org:8080/", "HTTPS://EXAMPLE.COM/"] {
        expect(&engine, "web", "fetch", &url(u), Decision::Allow, "default");
    }
    for u in [
        "http://127.0.0.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]:80/",
        "http://2130706433/",
        "http://0x7f.0.0.1/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://0177.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://user@127.0.0.1:8080/",
    ] {
        expect(&engine, "web", "fetch", &url(u), Decision::Escalate, "domain-allowlist");
    }
}

#[test]
fn urls_without_a_host_escalate_under_an_allowlist() {
    let engine = web_and_git();
    for u in [
        "not a url",
        "file:///etc/passwd",
        "http://evil.com\\@example.com/",
        "http:example.com",
        "/etc/passwd",
        // Forms IronCurtain does not admit either: a trailing dot, a port out
        // of range, no scheme.
        "https://example.com./",
        "https://example.com:99999/",
        "//example.com/x",
    ] {
        expect(&engine, "web", "fetch", &url(u), Decision::Escalate, "domain-allowlist");
    }
    expect(&engine, "web", "fetch", r#"{"url": 42}"#, Decision::Deny, "argument-type");
    expect(
        &engine,
        "web",
        "fetch",
        r#"{"url": ["https://ok.example", "http://10.0.0.2/"]}"#,
        Decision::Escalate,
        "domain-allowlist",
    );
}

#[test]
fn git_remotes_in_every_form() {
    let engine = web_and_git();
    for r in [
        "https://github.com/o/r.git",
        "ssh://git@github.com:22/o/r",
        "git@github.com:o/r.git",
        "git://github.com/o/r",
        "https://GitHub.com/o/r",
        "https://x-token:secret@github.com/o/r",
        "git@code.gitlab.com:o/r.git",
        "https://a.b.gitlab.com/o/r",
    ] {
        expect(&engine, "git", "push", &remote(r), Decision::Allow, "default");
    }
    for r in [
        "https://gitlab.com/o/r",
        "git@evil.com:o/r.git",
        "ssh://git@github.com.evil.com/o/r",
        "https://github.com@evil.com/o/r",
        "git@[::1]:o/r",
        "ssh://git@10.0.0.1/o/r",
        "https://github.com./o/r",
        "git@github.com.:o/r",
        "https://github.com:99999/o/r",
        "//github.com/o/r",
    ] {
        expect(&engine, "git", "push", &remote(r), Decision::Escalate, "domain-allowlist");
    }
}

#[test]
fn the_allowlist_escalation_comes_before_the_rules() {
    let engine = web_and_git();
    // Within the allowlist, the rules decide.
    expect(&engine, "web", "fetch", &url("https://example.com/admin"), Decision::Deny, "no-admin-fetches");
    // Outside it, a person decides before any rule (IronCurtain's structural
    // domain gate), also where a rule would deny.
    expect(&engine, "web", "fetch", &url("http://127.0.0.1/admin"), Decision::Escalate, "domain-allowlist");
}

#[test]
fn domain_rules_on_roles() {
    let engine = web_and_git();
    // No allowlist for `api`: rules decide.
    expect(
        &engine,
        "api",
        "call",
        r#"{"endpoint": "https://db.internal.example/q"}"#,
        Decision::Allow,
        "internal-hosts",
    );
    expect(&engine, "api", "call", r#"{"endpoint": "http://10.0.0.1:9000/"}"#, Decision::Allow, "internal-hosts");
    expect(
        &engine,
        "api",
        "call",
        r#"{"endpoint": "https://internal.example/"}"#,
        Decision::Escalate,
        "escalate-other-endpoints",
    );
    expect(&engine, "api", "call", r#"{"endpoint": "garbage"}"#, Decision::Escalate, "escalate-other-endpoints");
    let mixed = r#"{"endpoint": ["https://a.internal.example", "https://b.example"]}"#;
    expect(&engine, "api", "call", mixed, Decision::Escalate, "escalate-other-endpoints");
}

#[test]
fn invalid_domain_patterns_are_errors() {
    let problems = common::problems(
        r#"
policy:
  allowedDomains: {web: ["exa*mple.com", "ok.com"]}
  rules:
    - name: bad-domains
      if: {domains: {allowed: ["*.*.com"]}}
      then: allow
"#,
    );
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("policy.allowedDomains.web"));
    assert!(problems[1].starts_with("rule 'bad-domains'"));
}

#[test]
fn deny_and_escalate_rules_hold_for_remotes_warden_cannot_read() {
    // IronCurtain resolves a remote's name, or no remote, from the
    // repository's configuration (which Warden does not read): the URL may
    // be one a deny or escalate rule names, so that rule matches; a rule
    // that allows by domain does not.
    let engine = engine(
        r#"
policy:
  decideAbsentRoles: true
  annotations:
    git: {push: {args: {remote: [git-remote-url]}}}
    web: {fetch: {args: {url: [fetch-url]}}}
  rules:
    - name: no-pushes-to-evil
      if: {roles: [git-remote-url], domains: {allowed: [evil.com]}}
      then: deny
    - name: pushes-to-github
      if: {roles: [git-remote-url], domains: {allowed: [github.com]}}
      then: allow
    - name: no-fetches-from-evil
      if: {roles: [fetch-url], domains: {allowed: [evil.com]}}
      then: deny
    - name: other-pushes
      if: {roles: [git-remote-url]}
      then: escalate
"#,
    );
    let push = |remote: &str| format!(r#"{{"remote": {}}}"#, js(remote));
    expect(&engine, "git", "push", "{}", Decision::Deny, "no-pushes-to-evil");
    expect(&engine, "git", "push", &push("origin"), Decision::Deny, "no-pushes-to-evil");
    expect(&engine, "git", "push", &push("https://evil.com/o/r.git"), Decision::Deny, "no-pushes-to-evil");
    expect(&engine, "git", "push", &push("https://github.com/o/r.git"), Decision::Allow, "pushes-to-github");
    expect(&engine, "git", "push", &push("https://gitlab.com/o/r.git"), Decision::Escalate, "other-pushes");
    // A fetched URL is what is fetched: no host, nothing to resolve.
    expect(&engine, "web", "fetch", &url("not a url"), Decision::Allow, "default");
}
