//! Cases of IronCurtain's own engine tests (`test/policy-engine.test.ts` at
//! c0aeff9d), ported: each group's compiled policy and annotations go
//! through `warden import ironcurtain`, and each call must get IronCurtain's
//! decision (and, where the case asserts it, the rule, in Warden's name).
//!
//! Covered groups: the untrusted domain gate, repository-level domain
//! patterns, `lists` conditions on github-owner and github-repo,
//! `domainMatchesAllowlist`. Other groups are not ported yet.

mod common;

use common::text;
use serde_json::{Value, json};
use warden_import::{IronCurtainInput, import_ironcurtain};
use warden_policy::PolicyEngine;

/// IronCurtain's test sandbox (`${REAL_TMP}/ironcurtain-sandbox`).
const SANDBOX: &str = "/tmp/ironcurtain-sandbox";

/// One ported case: the call and IronCurtain's expected decision and rule
/// (`None`: the case asserts only the decision; `Some("!rule")`: it asserts
/// the rule is not that one).
struct Case {
    name: &'static str,
    server: &'static str,
    tool: &'static str,
    args: Value,
    decision: &'static str,
    rule: Option<&'static str>,
}

/// Warden's name for an IronCurtain rule name.
fn warden_rule(rule: &str) -> &str {
    match rule {
        "structural-domain-escalate" => "domain-allowlist",
        "structural-sandbox-allow" => "sandbox",
        "structural-protected-path" => "protected-path",
        "structural-unknown-tool" => "unannotated-tool",
        "default-deny" => "default",
        other => other,
    }
}

/// The engine IronCurtain's `new PolicyEngine(policy, annotations, [], sandbox, allowlists)` makes.
fn engine(rules: Value, annotations: Value, sandbox: Option<&str>, allowlists: &[(&str, &[&str])]) -> PolicyEngine {
    let policy = json!({"generatedAt": "test", "constitutionHash": "test", "inputHash": "test", "rules": rules});
    let input = IronCurtainInput {
        compiled_policy: text("compiled-policy.json", &policy.to_string()),
        tool_annotations: text("tool-annotations.json", &annotations.to_string()),
        sandbox: sandbox.map(str::to_owned),
        allowed_domains: allowlists
            .iter()
            .map(|(server, domains)| ((*server).to_owned(), domains.iter().map(|d| (*d).to_owned()).collect()))
            .collect(),
        ..IronCurtainInput::default()
    };
    let imported = import_ironcurtain(input).unwrap_or_else(|err| panic!("import: {err}"));
    // As Warden loads it: written, read back, validated.
    let yaml = serde_saphyr::to_string(&imported.config).expect("serialise");
    let config = common::load(&yaml);
    PolicyEngine::compile(&config, None).unwrap_or_else(|err| panic!("{err}\n---\n{yaml}"))
}

fn run(engine: &PolicyEngine, cases: &[Case]) {
    let mut failures = Vec::new();
    for case in cases {
        let evaluation = engine.evaluate(case.server, case.tool, Some(&case.args.to_string()));
        let decision_ok = evaluation.action.as_str() == case.decision;
        let rule_ok = match case.rule {
            None => true,
            Some(not) if not.starts_with('!') => evaluation.rule != warden_rule(&not[1..]),
            Some(rule) => evaluation.rule == warden_rule(rule),
        };
        if !(decision_ok && rule_ok) {
            failures.push(format!(
                "{}: expected {} by {:?}, got {} by {}: {}\n  {}",
                case.name,
                case.decision,
                case.rule,
                evaluation.action,
                evaluation.rule,
                evaluation.reason,
                evaluation.trace.join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

fn tool(server: &str, name: &str, args: Value) -> Value {
    json!({"toolName": name, "serverName": server, "comment": name, "args": args})
}

fn annotations(server: &str, tools: Vec<Value>) -> Value {
    json!({"generatedAt": "test", "servers": {server: {"inputHash": "test", "tools": tools}}})
}

fn rule(name: &str, when: Value, then: &str) -> Value {
    json!({"name": name, "description": name, "principle": "test", "if": when, "then": then, "reason": name})
}

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
