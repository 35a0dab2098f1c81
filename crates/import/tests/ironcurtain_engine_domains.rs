//! IronCurtain's engine tests (`test/policy-engine.test.ts` at c0aeff9d)
//! on URL roles, ported (see `ironcurtain_engine.rs` for the method and the
//! list of every group): compiled rules' `domains` conditions, multi-role
//! evaluation (path and URL roles), `isIpAddress` (as `url_host` and as the
//! decision it leads to under a `*` allowlist), `extractServerDomainAllowlists`
//! (as the allowlists `--allowed-domains` gives and the decisions they
//! lead to), and git remote enrichment.
//!
//! Git remote enrichment: when a git_push, git_pull or git_fetch call of
//! the git server names no remote, IronCurtain's engine runs `git` in the
//! repository (within the sandbox) to find the branch's upstream remote or
//! `origin`, and lets its compiled rules see that URL. Warden's engine does
//! not: it would run a program, or parse git's configuration (includes,
//! `insteadOf` and `pushurl` rewrites, worktree indirections), on a
//! repository the agent can write, on every call; and IronCurtain's own
//! domain gate does not see the enriched URL either. Without a remote value
//! (or with a remote's name, which IronCurtain resolves alike) a rule that
//! allows by domain does not match, and one that denies or escalates by
//! domain does: Warden is stricter, never more permissive. All nine cases are
//! ported, with real repositories where IronCurtain makes them; eight get
//! IronCurtain's decision, one (a `domains`-constrained allow rule for the
//! enriched URL) is deliberately stricter: Warden denies by default.

mod common;

use std::path::Path;
use std::process::Command;

use common::ironcurtain::{
    Case, REAL_TMP, SANDBOX, allowlists, annotations, compile, engine, fixture_annotations, fixture_policy, input,
    rule, run, scratch, tool,
};
use serde_json::{Value, json};
use warden_import::{IronCurtainInput, parse_allowed_domains};

fn fetch_annotations() -> Value {
    annotations("fetch", vec![tool("fetch", "fetch_url", json!({"url": ["fetch-url"]}))])
}

fn clone_annotations() -> Value {
    annotations("git", vec![tool("git", "git_clone", json!({"url": ["git-remote-url"], "path": ["write-path"]}))])
}

fn fetch_case(name: &'static str, url: &str, decision: &'static str, rule: Option<&'static str>) -> Case {
    Case::new(name, "fetch", "fetch_url", json!({ "url": url }), decision, rule)
}

#[test]
fn compiled_rule_evaluation_domains_condition_matching() {
    let github = |allowed: Value| {
        json!([
            rule(
                "allow-github-fetch",
                json!({"tool": ["fetch_url"], "domains": {"roles": ["fetch-url"], "allowed": allowed}}),
                "allow"
            ),
            rule("deny-all", json!({}), "deny"),
        ])
    };
    let both = engine(github(json!(["github.com", "*.github.com"])), fetch_annotations(), None, &[]);
    run(
        &both,
        &[fetch_case(
            "matches when domain is in the allowed list",
            "https://github.com/user/repo",
            "allow",
            Some("allow-github-fetch"),
        )],
    );
    let one = engine(github(json!(["github.com"])), fetch_annotations(), None, &[]);
    run(
        &one,
        &[fetch_case(
            "does not match when domain is not in the allowed list",
            "https://evil.com/malware",
            "deny",
            Some("deny-all"),
        )],
    );
    let rules = json!([
        rule(
            "allow-github-clones",
            json!({"tool": ["git_clone"], "domains": {"roles": ["git-remote-url"], "allowed": ["github.com"]}}),
            "allow"
        ),
        rule("escalate-writes", json!({"roles": ["write-path"]}), "escalate"),
    ]);
    let clone = engine(rules, clone_annotations(), None, &[]);
    run(
        &clone,
        &[Case::new(
            "handles multi-role tools with domain and path conditions",
            "git",
            "git_clone",
            json!({"url": "https://github.com/user/repo.git", "path": "/some/path"}),
            "escalate",
            None,
        )],
    );
}

#[test]
fn multi_role_evaluation_path_and_url_roles() {
    let rules = json!([
        rule("allow-writes", json!({"roles": ["write-path"]}), "allow"),
        rule("escalate-urls", json!({"roles": ["git-remote-url"]}), "escalate"),
    ]);
    let engine = engine(rules, clone_annotations(), None, &[]);
    run(
        &engine,
        &[Case::new(
            "evaluates both path and URL roles independently",
            "git",
            "git_clone",
            json!({"url": "https://github.com/user/repo.git", "path": "/some/path"}),
            "escalate",
            None,
        )],
    );
}

/// The fixture engine with `TEST_DOMAIN_ALLOWLISTS`'s fetch entry, `*`.
fn fetch_anywhere() -> warden_policy::PolicyEngine {
    compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        allowed_domains: allowlists(&[("fetch", &["*"])]),
        ..input(fixture_policy(), fixture_annotations())
    })
}

fn http_fetch(name: &'static str, url: String, decision: &'static str, rule: &'static str) -> Case {
    Case::new(name, "fetch", "http_fetch", json!({ "url": url }), decision, Some(rule))
}

#[test]
fn is_ip_address() {
    let ipv4 = ["127.0.0.1", "10.0.0.1", "169.254.169.254", "192.168.1.100"];
    let ipv6 = ["[::1]", "[fe80::1]"];
    let names = ["github.com", "api.example.com", "localhost"];
    // `isIpAddress` itself: Warden reads the host of a URL and whether it is an address.
    for host in ipv4.iter().chain(&ipv6) {
        let (_, is_ip) = warden_policy::url_host(&format!("http://{host}/")).expect("a host");
        assert!(is_ip, "{host} is an IP address");
    }
    for host in names {
        let (_, is_ip) = warden_policy::url_host(&format!("https://{host}/")).expect("a host");
        assert!(!is_ip, "{host} is a name");
    }
    // What it decides: `*` allows every name and no address.
    let engine = fetch_anywhere();
    let mut cases = Vec::new();
    for host in ipv4 {
        cases.push(http_fetch(
            "detects IPv4 addresses",
            format!("http://{host}/"),
            "escalate",
            "structural-domain-escalate",
        ));
    }
    for host in ipv6 {
        cases.push(http_fetch(
            "detects IPv6 addresses",
            format!("http://{host}/"),
            "escalate",
            "structural-domain-escalate",
        ));
    }
    for host in names {
        cases.push(http_fetch("does not match domain names", format!("https://{host}/"), "allow", "allow-fetch-get"));
    }
    run(&engine, &cases);
}

#[test]
fn extract_server_domain_allowlists() {
    // IronCurtain reads `sandbox.network.allowedDomains` of each server;
    // Warden takes the same lists as `--allowed-domains SERVER=PATTERN,...`.
    let star = parse_allowed_domains("fetch=*").expect("valid");
    assert_eq!(star, ("fetch".to_owned(), vec!["*".to_owned()]), "preserves * wildcard in allowlist");
    let both = parse_allowed_domains("fetch=*,192.168.1.100").expect("valid");
    assert_eq!(both.1, ["*", "192.168.1.100"], "preserves * alongside explicit domains");
    let engine = |list: (String, Vec<String>)| {
        compile(IronCurtainInput {
            sandbox: Some(SANDBOX.into()),
            allowed_domains: vec![list],
            ..input(fixture_policy(), fixture_annotations())
        })
    };
    run(
        &engine(star),
        &[http_fetch(
            "preserves * wildcard in allowlist (a name passes)",
            "https://example.com/".into(),
            "allow",
            "allow-fetch-get",
        )],
    );
    run(
        &engine(both),
        &[
            http_fetch(
                "preserves * alongside explicit domains (the listed address passes)",
                "http://192.168.1.100/".into(),
                "allow",
                "allow-fetch-get",
            ),
            http_fetch(
                "preserves * alongside explicit domains (another address does not)",
                "http://10.0.0.1/".into(),
                "escalate",
                "structural-domain-escalate",
            ),
        ],
    );
}

fn push_annotations() -> Value {
    annotations(
        "git",
        vec![tool(
            "git",
            "git_push",
            json!({"path": ["none"], "remote": ["git-remote-url"], "branch": ["branch-name"]}),
        )],
    )
}

fn escalate_push() -> Value {
    json!([rule("escalate-git-push", json!({"server": ["git"], "tool": ["git_push"]}), "escalate")])
}

fn push(name: &'static str, args: Value, decision: &'static str, rule: Option<&'static str>) -> Case {
    Case::new(name, "git", "git_push", args, decision, rule)
}

/// Runs `git` in `dir`, as IronCurtain's test sets its repositories up.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@test.local")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@test.local")
        .output()
        .unwrap_or_else(|err| panic!("git {args:?}: {err}"));
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A repository within the sandbox whose `origin` is `url`.
fn repository(name: &str, url: &str) -> std::path::PathBuf {
    let dir = scratch(SANDBOX, name);
    git(&dir, &["init", "-q"]);
    git(&dir, &["config", "user.email", "test@test.local"]);
    git(&dir, &["config", "user.name", "Test"]);
    git(&dir, &["remote", "add", "origin", url]);
    dir
}

#[test]
fn git_remote_enrichment() {
    let github: &[(&str, &[&str])] = &[("git", &["github.com"])];
    let gated = engine(escalate_push(), push_annotations(), Some(SANDBOX), github);
    run(
        &gated,
        &[
            push(
                "does not enrich when remote arg is already present as HTTPS URL",
                json!({"path": "/nonexistent/repo", "remote": "https://github.com/org/repo.git", "branch": "main"}),
                "escalate",
                Some("escalate-git-push"),
            ),
            push(
                "does not enrich when remote arg is already present as SSH URL",
                json!({"path": "/nonexistent/repo", "remote": "git@github.com:org/repo.git", "branch": "main"}),
                "escalate",
                Some("!structural-domain-escalate"),
            ),
        ],
    );
    let ungated = engine(escalate_push(), push_annotations(), Some(SANDBOX), &[]);
    run(
        &ungated,
        &[push(
            "falls back cleanly when path is not a git repo (no enrichment, compiled rule fires)",
            json!({"path": REAL_TMP, "branch": "main"}),
            "escalate",
            Some("escalate-git-push"),
        )],
    );
    let custom = engine(
        json!([rule("allow-custom", json!({"server": ["custom"]}), "allow")]),
        annotations("custom", vec![tool("custom", "push_op", json!({"url": ["git-remote-url"]}))]),
        Some(SANDBOX),
        &[],
    );
    run(
        &custom,
        &[Case::new(
            "does not enrich for non-git server even if annotation has git-remote-url role",
            "custom",
            "push_op",
            json!({"path": "/some/dir"}),
            "allow",
            Some("allow-custom"),
        )],
    );

    // With repo whose origin is github.com.
    let repo = repository("ic-enrich-github", "https://github.com/org/repo.git");
    let at = |repo: &Path| json!({"path": repo.to_str().expect("UTF-8"), "branch": "main"});
    run(
        &gated,
        &[push(
            "enriches absent remote with github.com URL; domain gate passes allowlist",
            at(&repo),
            "escalate",
            Some("escalate-git-push"),
        )],
    );
    let allow_github = json!([rule(
        "allow-github-push",
        json!({"server": ["git"], "tool": ["git_push"], "domains": {"roles": ["git-remote-url"], "allowed": ["github.com"]}}),
        "allow"
    )]);
    let allow_github = engine(allow_github, push_annotations(), Some(SANDBOX), &[]);
    run(
        &allow_github,
        &[push(
            // IronCurtain: allow by allow-github-push (the enriched URL is
            // github.com). Warden reads no repository: the remote has no
            // value, the `domains` condition does not match, the default
            // denies. Stricter.
            "enriches absent remote; domain-constrained allow rule fires for matching domain [Warden stricter: deny]",
            at(&repo),
            "deny",
            Some("default-deny"),
        )],
    );
    let empty = engine(escalate_push(), push_annotations(), Some(SANDBOX), &[("git", &[])]);
    run(
        &empty,
        &[push("enriches absent remote; structural domain gate blocks untrusted domain", at(&repo), "escalate", None)],
    );
    std::fs::remove_dir_all(&repo).expect("remove the repository");

    // With repo whose origin is an untrusted domain.
    let evil = repository("ic-enrich-evil", "https://evil.com/stolen/repo.git");
    run(
        &gated,
        &[push(
            "enriches absent remote with evil.com URL; structural domain gate escalates",
            at(&evil),
            "escalate",
            None,
        )],
    );
    // Not IronCurtain's case: a rule that denies by the enriched URL. It
    // denies in IronCurtain (its engine at c0aeff9d, run on such a
    // repository: deny, deny, allow); Warden, which reads no
    // repository, lets a deny or escalate rule's `domains` hold for a remote
    // it cannot read, so it denies too, by name or without a remote.
    let deny_evil = json!([
        rule(
            "deny-push-evil",
            json!({"server": ["git"], "tool": ["git_push"], "domains": {"roles": ["git-remote-url"], "allowed": ["evil.com"]}}),
            "deny"
        ),
        rule("allow-git-push", json!({"server": ["git"], "tool": ["git_push"]}), "allow"),
    ]);
    let deny_evil = engine(deny_evil, push_annotations(), Some(SANDBOX), &[]);
    let named = json!({"path": evil.to_str().expect("UTF-8"), "remote": "origin", "branch": "main"});
    run(
        &deny_evil,
        &[
            push("a deny rule on the enriched URL (Warden's case)", at(&evil), "deny", Some("deny-push-evil")),
            push("a deny rule on the named remote's URL (Warden's case)", named, "deny", Some("deny-push-evil")),
            push(
                "a deny rule not naming the given URL (Warden's case)",
                json!({"path": evil.to_str().expect("UTF-8"), "remote": "https://github.com/o/r.git"}),
                "allow",
                Some("allow-git-push"),
            ),
        ],
    );
    std::fs::remove_dir_all(&evil).expect("remove the repository");

    // With tracking branch pointing to non-origin remote.
    let tracking = repository("ic-enrich-tracking", "https://github.com/fork/repo.git");
    git(&tracking, &["remote", "add", "upstream", "https://github.com/upstream/repo.git"]);
    git(&tracking, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let branch = git(&tracking, &["rev-parse", "--abbrev-ref", "HEAD"]);
    git(&tracking, &["config", &format!("branch.{branch}.remote"), "upstream"]);
    git(&tracking, &["config", &format!("branch.{branch}.merge"), &format!("refs/heads/{branch}")]);
    run(
        &gated,
        &[push(
            "enriches absent remote using tracking remote (not origin)",
            at(&tracking),
            "escalate",
            Some("escalate-git-push"),
        )],
    );
    std::fs::remove_dir_all(&tracking).expect("remove the repository");
}
