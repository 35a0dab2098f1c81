//! IronCurtain's engine tests (`test/policy-engine.test.ts` at c0aeff9d)
//! on roles and tools, ported (see `ironcurtain_engine.rs` for the method
//! and the list of every group): per-role evaluation of multi-role tools,
//! asymmetric per-role rules, git sandbox containment, GitHub tools, Google
//! Workspace tools, `PolicyEngine with conditional roles` (its
//! `getAnnotation` cases as the decisions the resolved roles lead to; its
//! `getStoredAnnotation` cases are not ported: they test the return shape of
//! a TypeScript accessor and decide nothing), trusted server policy
//! (`isTrustedServer` as the decision it implies).

mod common;

use common::ironcurtain::{
    Case, REAL_TMP, SANDBOX, annotations, compile, fixture_annotations, fixture_engine, fixture_policy,
    fixture_protected_paths, input, policy, rule, run, tool,
};
use serde_json::{Value, json};
use warden_import::IronCurtainInput;

fn repo() -> String {
    format!("{SANDBOX}/repo")
}

#[test]
fn per_role_evaluation_of_multi_role_tools() {
    run(
        &fixture_engine(),
        &[
            Case::fs(
                "allows edit_file inside sandbox (structural sandbox invariant)",
                "edit_file",
                json!({"path": format!("{SANDBOX}/test.txt"), "edits": [{"oldText": "a", "newText": "b"}], "dryRun": false}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "escalates edit_file outside sandbox (both read-path and write-path escalated)",
                "edit_file",
                json!({"path": "/etc/test.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": false}),
                "escalate",
                None,
            ),
            Case::fs(
                "allows list_allowed_directories with no roles (structural introspection)",
                "list_allowed_directories",
                json!({}),
                "allow",
                Some("structural-introspection-allow"),
            ),
        ],
    );
}

#[test]
fn per_role_asymmetric_rules() {
    let rules = json!([
        rule("allow-all-reads", json!({"roles": ["read-path"]}), "allow"),
        rule("deny-writes-outside-sandbox", json!({"roles": ["write-path"]}), "deny"),
    ]);
    let minimal = annotations(
        "filesystem",
        vec![
            tool("filesystem", "edit_file", json!({"path": ["read-path", "write-path"], "edits": ["none"]})),
            tool("filesystem", "read_file", json!({"path": ["read-path"]})),
        ],
    );
    let engine = compile(input(policy(rules), minimal.to_string()));
    run(
        &engine,
        &[
            Case::fs(
                "denies edit_file when write-path is denied (most restrictive wins)",
                "edit_file",
                json!({"path": "/etc/test.txt", "edits": []}),
                "deny",
                Some("deny-writes-outside-sandbox"),
            ),
            Case::fs(
                "allows read_file with only read-path role (single role, no restriction)",
                "read_file",
                json!({"path": "/etc/test.txt"}),
                "allow",
                Some("allow-all-reads"),
            ),
        ],
    );
}

#[test]
fn git_sandbox_containment() {
    let git = |name, tool, args: Value| Case::new(name, "git", tool, args, "allow", Some("structural-sandbox-allow"));
    run(
        &fixture_engine(),
        &[
            git(
                "allows git_reset in sandbox via structural sandbox-allow",
                "git_reset",
                json!({"path": repo(), "mode": "hard"}),
            ),
            git(
                "allows git_merge in sandbox via structural sandbox-allow",
                "git_merge",
                json!({"path": repo(), "branch": "feature"}),
            ),
            git(
                "allows git_rebase in sandbox via structural sandbox-allow",
                "git_rebase",
                json!({"path": repo(), "branch": "main"}),
            ),
            git(
                "allows git_branch in sandbox via structural sandbox-allow",
                "git_branch",
                json!({"path": repo(), "name": "old-branch", "delete": true}),
            ),
            git("allows git_status in sandbox via structural sandbox-allow", "git_status", json!({"path": repo()})),
            git(
                "allows git_add in sandbox via structural sandbox-allow",
                "git_add",
                json!({"path": repo(), "files": ["test.txt"]}),
            ),
            git(
                "allows git_commit in sandbox via structural sandbox-allow",
                "git_commit",
                json!({"path": repo(), "message": "test commit"}),
            ),
            Case::new(
                "escalates git_reset outside sandbox (compiled rules still apply)",
                "git",
                "git_reset",
                json!({"path": "/home/user/external-repo", "mode": "soft"}),
                "escalate",
                Some("escalate-git-destructive-ops"),
            ),
        ],
    );
}

#[test]
fn github_tools() {
    let github = |name, tool, args: Value, decision, rule| Case::new(name, "github", tool, args, decision, Some(rule));
    let hello = |extra: Value| {
        let mut args = json!({"owner": "octocat", "repo": "hello-world"});
        if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
            args.extend(extra);
        }
        args
    };
    run(
        &fixture_engine(),
        &[
            github("allows read-only GitHub tools", "list_issues", hello(json!({})), "allow", "allow-github-read-ops"),
            github(
                "allows get_issue (read-only)",
                "get_issue",
                hello(json!({"issue_number": 1})),
                "allow",
                "allow-github-read-ops",
            ),
            github(
                "allows search_code (read-only)",
                "search_code",
                json!({"q": "console.log repo:octocat/hello-world"}),
                "allow",
                "allow-github-read-ops",
            ),
            github(
                "escalates create_issue (mutation)",
                "create_issue",
                hello(json!({"title": "Bug", "body": "Details"})),
                "escalate",
                "escalate-github-mutations",
            ),
            github(
                "escalates create_pull_request (mutation)",
                "create_pull_request",
                hello(json!({"title": "Fix", "head": "fix", "base": "main"})),
                "escalate",
                "escalate-github-mutations",
            ),
            github(
                "escalates merge_pull_request (mutation)",
                "merge_pull_request",
                hello(json!({"pull_number": 42})),
                "escalate",
                "escalate-github-mutations",
            ),
            github(
                "denies unknown GitHub tool (structural invariant)",
                "completely_unknown_tool",
                json!({}),
                "deny",
                "structural-unknown-tool",
            ),
        ],
    );
}

#[test]
fn google_workspace_tools() {
    let read =
        |name, tool, args| Case::new(name, "google-workspace", tool, args, "allow", Some("allow-gworkspace-read-ops"));
    let mutation = |name, tool, args| {
        Case::new(name, "google-workspace", tool, args, "escalate", Some("escalate-gworkspace-mutations"))
    };
    run(
        &fixture_engine(),
        &[
            read(
                "allows read-only Gmail list messages",
                "gmail_search_messages",
                json!({"query": "is:unread", "maxResults": 10}),
            ),
            read("allows read-only Gmail get message", "gmail_get_message", json!({"messageId": "msg-123"})),
            read(
                "allows read-only calendar list events",
                "calendar_list_events",
                json!({"calendarId": "primary", "maxResults": 10}),
            ),
            read("allows read-only Drive list files", "drive_list_files", json!({"query": "name contains \"report\""})),
            read("allows read-only Drive read file", "drive_read_file", json!({"fileId": "file-abc123"})),
            mutation(
                "escalates Gmail send message",
                "gmail_send_message",
                json!({"to": "user@example.com", "subject": "Hello", "body": "Hi"}),
            ),
            mutation(
                "escalates Gmail draft message",
                "gmail_draft_message",
                json!({"to": "user@example.com", "subject": "Draft", "body": "content"}),
            ),
            mutation(
                "escalates calendar event creation",
                "calendar_create_event",
                json!({"summary": "Meeting", "start": "2026-01-01T10:00", "end": "2026-01-01T11:00"}),
            ),
            mutation(
                "escalates Drive file sharing",
                "drive_share_file",
                json!({"fileId": "abc123", "email": "user@example.com", "role": "writer"}),
            ),
            mutation("escalates Gmail delete message", "gmail_delete_message", json!({"messageId": "msg-456"})),
            mutation(
                "escalates batch label modification",
                "gmail_batch_modify_labels",
                json!({"messageIds": ["msg-1", "msg-2"], "addLabels": ["STARRED"]}),
            ),
            Case::new(
                "denies unknown Google Workspace tool (structural invariant)",
                "google-workspace",
                "unknown_gworkspace_tool",
                json!({}),
                "deny",
                Some("structural-unknown-tool"),
            ),
        ],
    );
}

/// `conditionalAnnotations` of the conditional-roles group.
fn conditional_annotations() -> Value {
    let history = ["read-path", "write-history", "delete-history"];
    json!({"generatedAt": "test-fixture", "servers": {
        "git": {"inputHash": "test-fixture", "tools": [
            tool("git", "git_branch", json!({
                "path": {"default": history, "when": [
                    {"condition": {"arg": "operation", "equals": "list"}, "roles": ["read-path"]},
                    {"condition": {"arg": "operation", "in": ["create", "rename"]}, "roles": ["read-path", "write-history"]},
                    {"condition": {"arg": "operation", "equals": "delete"}, "roles": ["read-path", "delete-history"]},
                ]},
                "operation": ["none"],
                "name": ["branch-name"],
            })),
            tool("git", "git_status", json!({"path": ["read-path"]})),
            tool("git", "git_clean", json!({
                "path": {"default": ["read-path", "delete-path"], "when": [
                    {"condition": {"arg": "dryRun", "equals": true}, "roles": ["read-path"]},
                ]},
                "dryRun": ["none"],
            })),
            tool("git", "git_stash", json!({
                "path": {"default": history, "when": [
                    {"condition": {"arg": "mode", "equals": "list"}, "roles": ["read-path"]},
                    {"condition": {"arg": "mode", "in": ["push", "pop", "apply"]}, "roles": ["read-path", "write-history"]},
                    {"condition": {"arg": "mode", "in": ["drop", "clear"]}, "roles": ["read-path", "delete-history"]},
                ]},
                "mode": ["none"],
            })),
        ]},
        "filesystem": {"inputHash": "test-fixture", "tools": [
            tool("filesystem", "edit_file", json!({
                "path": {"default": ["read-path", "write-path"], "when": [
                    {"condition": {"arg": "dryRun", "equals": true}, "roles": ["read-path"]},
                ]},
                "edits": ["none"],
                "dryRun": ["none"],
            })),
        ]},
    }})
}

/// `conditionalPolicy` of the conditional-roles group.
fn conditional_rules() -> Vec<Value> {
    vec![
        rule("allow-git-read-ops", json!({"server": ["git"], "tool": ["git_status"]}), "allow"),
        rule("escalate-git-branch-management", json!({"server": ["git"], "tool": ["git_branch"]}), "escalate"),
        rule(
            "escalate-git-destructive-ops",
            json!({"server": ["git"], "roles": ["write-history", "delete-history"]}),
            "escalate",
        ),
        rule("allow-git-safe-ops", json!({"server": ["git"]}), "allow"),
        rule("escalate-filesystem-writes", json!({"roles": ["write-path"], "server": ["filesystem"]}), "escalate"),
        rule("allow-filesystem-reads", json!({"roles": ["read-path"], "server": ["filesystem"]}), "allow"),
    ]
}

#[test]
fn policy_engine_with_conditional_roles() {
    // `new PolicyEngine(conditionalPolicy, conditionalAnnotations, TEST_PROTECTED_PATHS, SANDBOX_DIR)`.
    let engine = compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        protected_paths: fixture_protected_paths(),
        ..input(policy(Value::Array(conditional_rules())), conditional_annotations().to_string())
    });
    let sandboxed = |name, tool, args| Case::new(name, "git", tool, args, "allow", Some("structural-sandbox-allow"));
    let edit = |name, path: String, dry_run: bool, decision, rule| {
        Case::fs(name, "edit_file", json!({"path": path, "edits": "...", "dryRun": dry_run}), decision, Some(rule))
    };
    let inside = format!("{SANDBOX}/test.txt");
    let outside = format!("{REAL_TMP}/outside/test.txt");
    run(
        &engine,
        &[
            sandboxed(
                "allows git_branch operation:list in sandbox (structural sandbox-allow)",
                "git_branch",
                json!({"path": repo(), "operation": "list"}),
            ),
            sandboxed(
                "allows git_branch operation:delete in sandbox (structural sandbox-allow)",
                "git_branch",
                json!({"path": repo(), "operation": "delete"}),
            ),
            sandboxed(
                "allows git_branch with no operation in sandbox (structural sandbox-allow)",
                "git_branch",
                json!({"path": repo()}),
            ),
            edit(
                "allows edit_file with dryRun:true in sandbox (resolves to read-path only)",
                inside.clone(),
                true,
                "allow",
                "structural-sandbox-allow",
            ),
            edit(
                "allows edit_file with dryRun:false in sandbox (resolves to read-path + write-path)",
                inside,
                false,
                "allow",
                "structural-sandbox-allow",
            ),
            edit(
                "escalates edit_file with dryRun:false outside sandbox (write-path escalates)",
                outside.clone(),
                false,
                "escalate",
                "escalate-filesystem-writes",
            ),
            edit(
                "allows edit_file with dryRun:true outside sandbox (read-path allowed)",
                outside,
                true,
                "allow",
                "allow-filesystem-reads",
            ),
            sandboxed(
                "allows git_clean with dryRun:true in sandbox (structural sandbox-allow)",
                "git_clean",
                json!({"path": repo(), "dryRun": true}),
            ),
            sandboxed(
                "allows git_clean with dryRun:false in sandbox (structural sandbox-allow)",
                "git_clean",
                json!({"path": repo(), "dryRun": false}),
            ),
            sandboxed(
                "allows git_stash mode:drop in sandbox (structural sandbox-allow)",
                "git_stash",
                json!({"path": repo(), "mode": "drop"}),
            ),
            sandboxed(
                "allows git_stash mode:list in sandbox (structural sandbox-allow)",
                "git_stash",
                json!({"path": repo(), "mode": "list"}),
            ),
            // `getAnnotation('git', 'nonexistent', {})` is undefined: the tool is unknown.
            Case::new(
                "getAnnotation: returns undefined for unknown tool (so the call is denied)",
                "git",
                "nonexistent",
                json!({}),
                "deny",
                Some("structural-unknown-tool"),
            ),
        ],
    );
    // The roles `getAnnotation` resolves, seen in the decision: the same
    // policy without the rule naming git_branch, so that its history roles
    // decide (outside the sandbox, path `/tmp/repo` as in those cases).
    let rules: Vec<Value> =
        conditional_rules().into_iter().filter(|r| r["name"] != "escalate-git-branch-management").collect();
    let by_roles = compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        protected_paths: fixture_protected_paths(),
        ..input(policy(Value::Array(rules)), conditional_annotations().to_string())
    });
    run(
        &by_roles,
        &[
            Case::new(
                "getAnnotation: resolves conditional roles for a specific call (read-path only: allowed)",
                "git",
                "git_branch",
                json!({"path": "/tmp/repo", "operation": "list"}),
                "allow",
                Some("allow-git-safe-ops"),
            ),
            Case::new(
                "getAnnotation: returns default roles when no condition matches (history roles: escalated)",
                "git",
                "git_branch",
                json!({"path": "/tmp/repo", "operation": "unknown_op"}),
                "escalate",
                Some("escalate-git-destructive-ops"),
            ),
        ],
    );
}

#[test]
fn trusted_server_policy() {
    let trusted = compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        protected_paths: fixture_protected_paths(),
        trusted_servers: vec!["memory".into()],
        ..input(fixture_policy(), fixture_annotations())
    });
    let memory = |name, tool, args| Case::new(name, "memory", tool, args, "allow", Some("trusted-server"));
    run(
        &trusted,
        &[
            memory(
                "allows any tool from a trusted server without annotations",
                "memory_store",
                json!({"content": "hello"}),
            ),
            memory("allows memory_recall from a trusted server", "memory_recall", json!({"query": "test"})),
            memory("allows unknown tool names from a trusted server", "nonexistent_tool", json!({})),
            Case::fs(
                "does not affect non-trusted servers",
                "read_file",
                json!({"path": "/etc/passwd"}),
                "*",
                Some("!trusted-server"),
            ),
            // `isTrustedServer`: what it answers is whether the policy is skipped.
            memory("isTrustedServer returns true for trusted servers (the policy is skipped)", "anything", json!({})),
            Case::fs(
                "isTrustedServer returns false for non-trusted servers (the policy applies)",
                "execute_command",
                json!({}),
                "deny",
                Some("structural-unknown-tool"),
            ),
        ],
    );
    run(
        &fixture_engine(),
        &[Case::new(
            "denies memory tools when trustedServers is not configured",
            "memory",
            "memory_store",
            json!({"content": "hello"}),
            "deny",
            Some("structural-unknown-tool"),
        )],
    );
}
