//! IronCurtain's engine tests (`test/policy-engine.test.ts` at c0aeff9d)
//! on paths, ported (see `ironcurtain_engine.rs` for the method and the
//! list of every group): structural invariants, tilde path recognition,
//! tilde paths in compiled rules, delete, read, write and move operations,
//! the structural sandbox invariant, partial sandbox resolution, per-element
//! path evaluation, protected path exclusions. Every case is ported and
//! gets IronCurtain's decision (and rule, where the case asserts it).

mod common;

use common::ironcurtain::{
    Case, REAL_TMP, SANDBOX, compile, fixture_annotations, fixture_engine, fixture_policy, fixture_protected_paths,
    home, input, policy, rule, run,
};
use serde_json::json;
use warden_import::IronCurtainInput;

fn sandboxed(name: &str) -> String {
    format!("{SANDBOX}/{name}")
}

#[test]
fn structural_invariants() {
    let protected = fixture_protected_paths();
    let read = |name, path: String| {
        Case::fs(name, "read_file", json!({"path": path}), "deny", Some("structural-protected-path"))
    };
    run(
        &fixture_engine(),
        &[
            read("denies access to the real constitution file", protected[0].clone()),
            read("denies access to generated policy directory", format!("{}/compiled-policy.json", protected[1])),
            Case::fs(
                "denies write to audit log",
                "write_file",
                json!({"path": protected[3]}),
                "deny",
                Some("structural-protected-path"),
            ),
            read("denies access to mcp-servers.json", protected[2].clone()),
            read("denies access to .env file", protected[4].clone()),
            read("denies access to user config file", protected[5].clone()),
            Case::fs(
                "denies unknown tools",
                "execute_command",
                json!({"command": "rm -rf /"}),
                "deny",
                Some("structural-unknown-tool"),
            ),
        ],
    );
}

#[test]
fn tilde_path_recognition() {
    // `new PolicyEngine(testCompiledPolicy, testToolAnnotations, [homeDir], SANDBOX_DIR)`.
    let engine = compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        protected_paths: vec![home()],
        ..input(fixture_policy(), fixture_annotations())
    });
    run(
        &engine,
        &[Case::fs(
            "with pre-normalized tilde path, denies access to protected home directory",
            "read_file",
            json!({"path": format!("{}/.ssh/id_rsa", home())}),
            "deny",
            Some("structural-protected-path"),
        )],
    );
}

#[test]
fn tilde_paths_in_compiled_rules() {
    let rules = json!([
        rule(
            "allow-reads-in-tilde-dir",
            json!({"paths": {"roles": ["read-path"], "within": "~/somedir"}, "server": ["filesystem"]}),
            "allow"
        ),
        rule("deny-all", json!({}), "deny"),
    ]);
    let engine = compile(input(policy(rules), fixture_annotations()));
    run(
        &engine,
        &[Case::fs(
            "matches tool call targeting ~/somedir when rule uses paths.within: \"~/somedir\"",
            "read_file",
            json!({"path": format!("{}/somedir/file.txt", home())}),
            "allow",
            Some("allow-reads-in-tilde-dir"),
        )],
    );
}

#[test]
fn delete_read_write_and_move_operations() {
    let outside = format!("{REAL_TMP}/outside/b.txt");
    run(
        &fixture_engine(),
        &[
            // delete operations
            Case::fs(
                "denies delete_file in sandbox when tool is unannotated (unknown tool)",
                "delete_file",
                json!({"path": sandboxed("test.txt")}),
                "deny",
                Some("structural-unknown-tool"),
            ),
            Case::fs(
                "denies delete_directory in sandbox when tool is unannotated (unknown tool)",
                "delete_directory",
                json!({"path": sandboxed("subdir")}),
                "deny",
                Some("structural-unknown-tool"),
            ),
            Case::fs(
                "denies delete_file outside sandbox (unknown tool)",
                "delete_file",
                json!({"path": "/etc/important.txt"}),
                "deny",
                Some("structural-unknown-tool"),
            ),
            // read operations
            Case::fs(
                "allows read_file within allowed directory",
                "read_file",
                json!({"path": sandboxed("test.txt")}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "allows list_directory within allowed directory",
                "list_directory",
                json!({"path": SANDBOX}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "allows search_files within allowed directory",
                "search_files",
                json!({"path": SANDBOX, "pattern": "*.txt"}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "allows list_allowed_directories (structural introspection)",
                "list_allowed_directories",
                json!({}),
                "allow",
                Some("structural-introspection-allow"),
            ),
            Case::fs(
                "escalates read_file outside allowed directory",
                "read_file",
                json!({"path": "/etc/passwd"}),
                "escalate",
                Some("escalate-read-outside-permitted-areas"),
            ),
            Case::fs(
                "escalates path traversal attempts",
                "read_file",
                json!({"path": sandboxed("../../../etc/passwd")}),
                "escalate",
                Some("escalate-read-outside-permitted-areas"),
            ),
            // write operations
            Case::fs(
                "allows write_file within allowed directory",
                "write_file",
                json!({"path": sandboxed("output.txt"), "content": "hello"}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "allows create_directory within allowed directory",
                "create_directory",
                json!({"path": sandboxed("newdir")}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "escalates write_file outside allowed directory",
                "write_file",
                json!({"path": "/etc/test.txt", "content": "hello"}),
                "escalate",
                Some("escalate-write-outside-permitted-areas"),
            ),
            // move operations
            Case::fs(
                "allows move within sandbox (structural sandbox invariant fires first)",
                "move_file",
                json!({"source": sandboxed("a.txt"), "destination": sandboxed("b.txt")}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "escalates move from sandbox to external (source roles sandbox-resolved)",
                "move_file",
                json!({"source": sandboxed("a.txt"), "destination": outside}),
                "escalate",
                Some("escalate-write-outside-permitted-areas"),
            ),
            Case::fs(
                "denies move from external to sandbox (delete-path on source denied)",
                "move_file",
                json!({"source": "/etc/important.txt", "destination": sandboxed("important.txt")}),
                "deny",
                Some("deny-delete-outside-permitted-areas"),
            ),
            Case::fs(
                "denies move from external to external",
                "move_file",
                json!({"source": "/etc/a.txt", "destination": outside}),
                "deny",
                Some("deny-delete-outside-permitted-areas"),
            ),
        ],
    );
}

#[test]
fn structural_sandbox_invariant() {
    run(
        &fixture_engine(),
        &[Case::fs(
            "does not fire for tools with no path arguments",
            "list_allowed_directories",
            json!({}),
            "allow",
            Some("structural-introspection-allow"),
        )],
    );
    let shadow = compile(IronCurtainInput {
        sandbox: Some(SANDBOX.into()),
        protected_paths: vec!["/etc/shadow".into()],
        ..input(fixture_policy(), fixture_annotations())
    });
    run(
        &shadow,
        &[Case::fs(
            "protected path outside sandbox is denied",
            "read_file",
            json!({"path": "/etc/shadow"}),
            "deny",
            Some("structural-protected-path"),
        )],
    );
    let dynamic_sandbox = "/home/user/.ironcurtain/sessions/abc123/sandbox";
    let dynamic = compile(IronCurtainInput {
        sandbox: Some(dynamic_sandbox.into()),
        ..input(fixture_policy(), fixture_annotations())
    });
    run(
        &dynamic,
        &[
            Case::fs(
                "works with dynamic sandbox path",
                "read_file",
                json!({"path": format!("{dynamic_sandbox}/test.txt")}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
            Case::fs(
                "blocks path traversal out of dynamic sandbox",
                "read_file",
                json!({"path": format!("{dynamic_sandbox}/../../etc/passwd")}),
                "!allow",
                Some("!structural-sandbox-allow"),
            ),
        ],
    );
    let no_sandbox = compile(input(fixture_policy(), fixture_annotations()));
    run(
        &no_sandbox,
        &[Case::fs(
            "engine without allowedDirectory skips sandbox check",
            "read_file",
            json!({"path": sandboxed("test.txt")}),
            "*",
            Some("!structural-sandbox-allow"),
        )],
    );
}

#[test]
fn partial_sandbox_resolution() {
    let downloads = "/home/user/Downloads";
    let permissive = json!([
        rule("allow-read-downloads", json!({"paths": {"roles": ["read-path"], "within": downloads}}), "allow"),
        rule("allow-delete-downloads", json!({"paths": {"roles": ["delete-path"], "within": downloads}}), "allow"),
        rule("deny-all-else", json!({}), "deny"),
    ]);
    let permissive =
        compile(IronCurtainInput { sandbox: Some(SANDBOX.into()), ..input(policy(permissive), fixture_annotations()) });
    run(
        &permissive,
        &[Case::fs(
            "allows move from permitted area to sandbox when source roles are allowed",
            "move_file",
            json!({"source": format!("{downloads}/file.zip"), "destination": sandboxed("file.zip")}),
            "allow",
            None,
        )],
    );
    let cross_dir = json!([
        rule(
            "allow-downloads",
            json!({"paths": {"roles": ["read-path", "write-path", "delete-path"], "within": downloads}}),
            "allow"
        ),
        rule(
            "allow-documents",
            json!({"paths": {"roles": ["read-path", "write-path"], "within": "/home/user/Documents"}}),
            "allow"
        ),
    ]);
    let cross_dir =
        compile(IronCurtainInput { sandbox: Some(SANDBOX.into()), ..input(policy(cross_dir), fixture_annotations()) });
    run(
        &cross_dir,
        &[Case::fs(
            "allows move between two permitted directories with complementary role coverage",
            "move_file",
            json!({"source": format!("{downloads}/report.pdf"), "destination": "/home/user/Documents/report.pdf"}),
            "allow",
            None,
        )],
    );
    run(
        &fixture_engine(),
        &[Case::fs(
            "does not sandbox-resolve roles when array has paths both inside and outside",
            "read_multiple_files",
            json!({"paths": [sandboxed("a.txt"), "/etc/b.txt"]}),
            "escalate",
            Some("escalate-read-outside-permitted-areas"),
        )],
    );
}

#[test]
fn per_element_path_evaluation() {
    let a = |file: &str| format!("{REAL_TMP}/permitted-a/{file}");
    let read = |name, paths: Vec<String>, decision, rule| {
        Case::fs(name, "read_multiple_files", json!({ "paths": paths }), decision, rule)
    };
    run(
        &fixture_engine(),
        &[
            read(
                "allows read_multiple_files with paths spanning two permitted directories",
                vec![a("file1.txt"), format!("{REAL_TMP}/permitted-b/file2.txt")],
                "allow",
                None,
            ),
            read(
                "escalates when paths span permitted and non-permitted directories",
                vec![a("file1.txt"), "/etc/some-file.txt".into()],
                "escalate",
                Some("escalate-read-outside-permitted-areas"),
            ),
            read(
                "allows all paths in one permitted directory (regression)",
                vec![a("file1.txt"), a("file2.txt")],
                "allow",
                Some("allow-reads-within-dir-a"),
            ),
        ],
    );
    let restrictive = json!([rule(
        "allow-reads-dir-a",
        json!({"paths": {"roles": ["read-path"], "within": format!("{REAL_TMP}/permitted-a")}, "server": ["filesystem"]}),
        "allow"
    )]);
    let restrictive = compile(input(policy(restrictive), fixture_annotations()));
    run(
        &restrictive,
        &[read(
            "denies when one path has no matching rule (default-deny)",
            vec![a("file1.txt"), format!("{REAL_TMP}/nowhere/file2.txt")],
            "deny",
            Some("default-deny"),
        )],
    );
}

#[test]
fn protected_path_exclusions() {
    let ironcurtain_home = format!("{REAL_TMP}/fake-ironcurtain-home");
    let sessions = format!("{ironcurtain_home}/sessions");
    let session_sandbox = format!("{sessions}/test-session/sandbox");
    let engine = compile(IronCurtainInput {
        sandbox: Some(session_sandbox.clone()),
        protected_paths: vec![ironcurtain_home.clone()],
        ..input(fixture_policy(), fixture_annotations())
    });
    run(
        &engine,
        &[
            Case::fs(
                "denies access to file within protected parent directory",
                "read_file",
                json!({"path": format!("{ironcurtain_home}/config.json")}),
                "deny",
                Some("structural-protected-path"),
            ),
            Case::fs(
                "denies access to session files outside the sandbox",
                "read_file",
                json!({"path": format!("{sessions}/other-session/audit.jsonl")}),
                "deny",
                Some("structural-protected-path"),
            ),
            Case::fs(
                "allows access within sandbox (excluded from protection)",
                "read_file",
                json!({"path": format!("{session_sandbox}/test.txt")}),
                "allow",
                Some("structural-sandbox-allow"),
            ),
        ],
    );
}
