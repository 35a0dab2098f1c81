//! Cases of IronCurtain's own engine tests (`test/policy-engine.test.ts` at
//! c0aeff9d, 151 cases), ported: each group's compiled policy and
//! annotations go through `warden import ironcurtain`, and each call must
//! get IronCurtain's decision (and, where the case asserts it, the rule, in
//! Warden's name). The helpers are in `common/ironcurtain.rs`; the fixture
//! most engines are built with (`test/fixtures/test-policy.ts`) is in
//! `data/ironcurtain-c0aeff9d/test-fixture-*.json`.
//!
//! Ported, by file:
//! - here: untrusted domain gate, repo-level domain matching in compiled
//!   rules, `lists` conditions with github-owner + github-repo;
//! - `crates/policy/src/domains.rs` (`ironcurtain_domain_matching_cases`):
//!   `domainMatchesAllowlist`;
//! - `ironcurtain_engine_paths.rs`: structural invariants, tilde path
//!   recognition, tilde paths in compiled rules, delete, read, write and move
//!   operations, structural sandbox invariant, partial sandbox resolution,
//!   per-element path evaluation, protected path exclusions;
//! - `ironcurtain_engine_roles.rs`: per-role evaluation (multi-role tools),
//!   per-role asymmetric rules, git sandbox containment, GitHub tools, Google
//!   Workspace tools, PolicyEngine with conditional roles, `getAnnotation`
//!   (as the decisions the roles it resolves lead to), trusted server policy
//!   (`isTrustedServer` as whether the policy applies);
//! - `ironcurtain_engine_domains.rs`: compiled rule evaluation of `domains`
//!   conditions, multi-role evaluation (path + URL), `isIpAddress` (as
//!   `url_host` and as decisions under a `*` allowlist),
//!   `extractServerDomainAllowlists` (as `--allowed-domains` and the
//!   decisions it leads to), git remote enrichment.
//!
//! Deliberately stricter than IronCurtain (the case records both):
//! - `domainMatchesAllowlist` "matches *.prefix wildcard for base domain":
//!   `*.github.com` admits only subdomains, not github.com itself;
//! - git remote enrichment "enriches absent remote; domain-constrained allow
//!   rule fires for matching domain": Warden reads no repository (IronCurtain
//!   runs git in it), so the allow rule does not match and the default denies.
//!
//! Not ported (they decide nothing):
//! - getStoredAnnotation "returns stored annotation with conditional
//!   specs", "... with static specs unchanged", "returns undefined for
//!   unknown tool": the return shape of a TypeScript accessor;
//! - extractServerDomainAllowlists "skips servers without sandbox config",
//!   "skips servers with empty allowedDomains": they read IronCurtain's
//!   `mcp-servers.json`, which Warden does not; its `--allowed-domains`
//!   names each server's list and refuses an empty one.
//!
//! Where a ported case asserts a TypeScript return value, the decision it
//! implies is what is tested; those decisions were checked against
//! IronCurtain's own engine at c0aeff9d (run with tsx).

mod common;

use common::ironcurtain::{Case, SANDBOX, annotations, engine, rule, run, tool};
use serde_json::{Value, json};

fn git_annotations() -> Value {
    annotations(
        "git",
        vec![
            tool(
                "git",
                "git_push",
                json!({"path": ["read-path"], "remote": ["git-remote-url"], "branch": ["branch-name"]}),
            ),
            tool("git", "git_clone", json!({"url": ["git-remote-url"], "path": ["write-path"]})),
            tool("git", "git_status", json!({"path": ["read-path"]})),
        ],
    )
}

fn git_policy() -> Value {
    json!([
        rule("escalate-git-push", json!({"server": ["git"], "tool": ["git_push"]}), "escalate"),
        rule("allow-git-read", json!({"server": ["git"], "tool": ["git_status"]}), "allow"),
        rule("escalate-git-clone", json!({"server": ["git"], "tool": ["git_clone"]}), "escalate"),
    ])
}

fn clone(name: &'static str, url: &str, path: &str, decision: &'static str, rule: Option<&'static str>) -> Case {
    Case { name, server: "git", tool: "git_clone", args: json!({"url": url, "path": path}), decision, rule }
}

#[test]
fn untrusted_domain_gate() {
    let in_sandbox = format!("{SANDBOX}/repo");
    let github: &[(&str, &[&str])] = &[("git", &["github.com", "*.github.com"])];
    let gated = engine(git_policy(), git_annotations(), Some(SANDBOX), github);
    run(
        &gated,
        &[
            clone(
                "escalates when URL domain is not in allowlist",
                "https://evil.com/repo.git",
                &in_sandbox,
                "escalate",
                Some("structural-domain-escalate"),
            ),
            clone(
                "escalates when domain matches allowlist (compiled rules still evaluate)",
                "https://github.com/user/repo.git",
                &in_sandbox,
                "escalate",
                Some("escalate-git-clone"),
            ),
            clone(
                "falls through to compiled rule evaluation when domain passes but path is outside sandbox",
                "https://github.com/user/repo.git",
                "/some/external/repo",
                "escalate",
                Some("escalate-git-clone"),
            ),
            clone(
                "handles SSH git URLs in domain check",
                "git@github.com:user/repo.git",
                &in_sandbox,
                "escalate",
                Some("!structural-domain-escalate"),
            ),
            Case {
                name: "does not affect tools with only path roles (no URL args)",
                server: "git",
                tool: "git_status",
                args: json!({"path": in_sandbox}),
                decision: "allow",
                rule: Some("structural-sandbox-allow"),
            },
        ],
    );
    // The gate comes before compiled rules and the default: a rule that
    // would deny, or no rule at all (default deny), still escalates.
    let deny_push = json!([rule("deny-push", json!({"server": ["git"], "tool": ["git_push"]}), "deny")]);
    let strict = engine(deny_push, git_annotations(), Some(SANDBOX), github);
    run(
        &strict,
        &[
            Case {
                name: "gate before a deny rule",
                server: "git",
                tool: "git_push",
                args: json!({"path": "/elsewhere/repo", "remote": "https://evil.com/r.git"}),
                decision: "escalate",
                rule: Some("structural-domain-escalate"),
            },
            clone(
                "gate before the default",
                "git@evil.com:r.git",
                "/elsewhere/repo",
                "escalate",
                Some("structural-domain-escalate"),
            ),
            clone(
                "the default after the gate",
                "https://github.com/o/r.git",
                "/elsewhere/repo",
                "deny",
                Some("default-deny"),
            ),
        ],
    );
    let prefix: &[(&str, &[&str])] = &[("git", &["*.github.com"])];
    let prefixed = engine(git_policy(), git_annotations(), Some(SANDBOX), prefix);
    run(
        &prefixed,
        &[clone(
            "passes when domain matches wildcard prefix",
            "https://api.github.com/user/repo.git",
            &in_sandbox,
            "escalate",
            Some("!structural-domain-escalate"),
        )],
    );
    let open = engine(git_policy(), git_annotations(), Some(SANDBOX), &[]);
    run(
        &open,
        &[clone(
            "skips untrusted domain gate when server has no domain allowlist",
            "https://evil.com/repo.git",
            &in_sandbox,
            "escalate",
            Some("!structural-domain-escalate"),
        )],
    );
    let allow_clone = json!([rule(
        "allow-git-clone-github",
        json!({"server": ["git"], "tool": ["git_clone"], "domains": {"roles": ["git-remote-url"], "allowed": ["github.com"]}}),
        "allow"
    )]);
    let clone_engine = engine(allow_clone, git_annotations(), Some(SANDBOX), &[]);
    run(
        &clone_engine,
        &[clone(
            "sandbox-resolves write-path for git_clone when URL roles are present (Issue 3)",
            "https://github.com/user/repo.git",
            &in_sandbox,
            "allow",
            Some("allow-git-clone-github"),
        )],
    );
}

#[test]
fn repository_level_domain_patterns() {
    let in_sandbox = format!("{SANDBOX}/repo");
    let clone_only =
        annotations("git", vec![tool("git", "git_clone", json!({"url": ["git-remote-url"], "path": ["write-path"]}))]);
    let repo_policy = json!([rule(
        "allow-clone-specific-repo",
        json!({"server": ["git"], "tool": ["git_clone"], "domains": {"roles": ["git-remote-url"], "allowed": ["github.com/provos/ironcurtain"]}}),
        "allow"
    )]);
    let repo = engine(repo_policy, clone_only.clone(), Some(SANDBOX), &[]);
    run(
        &repo,
        &[
            clone(
                "allows clone when repo-level domain pattern matches",
                "https://github.com/provos/ironcurtain.git",
                &in_sandbox,
                "allow",
                Some("allow-clone-specific-repo"),
            ),
            clone(
                "denies clone when repo-level domain pattern does not match",
                "https://github.com/other/repo.git",
                &in_sandbox,
                "deny",
                Some("default-deny"),
            ),
            clone(
                "SSH URL matches repo-level domain pattern",
                "git@github.com:provos/ironcurtain.git",
                &in_sandbox,
                "allow",
                Some("allow-clone-specific-repo"),
            ),
        ],
    );
    let host_policy = json!([rule(
        "allow-clone-github",
        json!({"server": ["git"], "tool": ["git_clone"], "domains": {"roles": ["git-remote-url"], "allowed": ["github.com"]}}),
        "allow"
    )]);
    let host = engine(host_policy, clone_only, Some(SANDBOX), &[]);
    run(
        &host,
        &[clone(
            "hostname-only pattern allows any repo on that host",
            "https://github.com/any/repo.git",
            &in_sandbox,
            "allow",
            Some("allow-clone-github"),
        )],
    );
}

#[test]
fn lists_conditions_with_github_owner_and_github_repo() {
    let github = annotations(
        "github",
        vec![tool(
            "github",
            "create_branch",
            json!({"owner": ["github-owner"], "repo": ["github-repo"], "branch": ["branch-name"]}),
        )],
    );
    let policy = json!([rule(
        "allow-create-branch-ironcurtain",
        json!({"tool": ["create_branch"], "lists": [
            {"roles": ["github-owner"], "allowed": ["provos"], "matchType": "identifiers"},
            {"roles": ["github-repo"], "allowed": ["ironcurtain"], "matchType": "identifiers"},
        ]}),
        "allow"
    )]);
    let engine = engine(policy, github, None, &[]);
    let branch = |name, owner: &str, repo: &str, decision, rule| Case {
        name,
        server: "github",
        tool: "create_branch",
        args: json!({"owner": owner, "repo": repo, "branch": "fix"}),
        decision,
        rule,
    };
    run(
        &engine,
        &[
            branch(
                "allows create_branch for provos/ironcurtain",
                "provos",
                "ironcurtain",
                "allow",
                Some("allow-create-branch-ironcurtain"),
            ),
            branch("denies create_branch for wrong owner (correct repo)", "attacker", "ironcurtain", "deny", None),
            branch("denies create_branch for correct owner but wrong repo", "provos", "other-repo", "deny", None),
            branch("denies create_branch for wrong owner and wrong repo", "attacker", "other-repo", "deny", None),
        ],
    );
}
