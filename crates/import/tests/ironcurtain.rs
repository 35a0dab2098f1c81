//! IronCurtain's compiled policy, tool annotations and dynamic lists.

mod common;

use std::path::PathBuf;

use common::{file, load, same, text, warning};
use serde_json::json;
use warden_config::{Action, Condition, DomainsAllowed, PathsWithin, Rule};
use warden_import::{ImportError, Imported, IronCurtainInput, import_ironcurtain, parse_allowed_domains};

/// The three files of the data directory `dir`.
fn files_in(dir: &str) -> IronCurtainInput {
    IronCurtainInput {
        compiled_policy: file(&format!("{dir}/compiled-policy.json")),
        tool_annotations: file(&format!("{dir}/tool-annotations.json")),
        dynamic_lists: Some(file(&format!("{dir}/dynamic-lists.json"))),
        ..IronCurtainInput::default()
    }
}

/// A hand-written policy in IronCurtain's older format (with `sideEffects`).
fn input() -> IronCurtainInput {
    files_in("ironcurtain")
}

fn convert(input: IronCurtainInput) -> Imported {
    import_ironcurtain(input).unwrap_or_else(|err| panic!("{err}"))
}

/// The Warden rules written for the IronCurtain rule `name`, in order.
fn rules<'a>(imported: &'a Imported, name: &str) -> Vec<&'a Rule> {
    imported.config.policy.rules.iter().filter(|rule| rule.name == name).collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn test(arg: &str, with: impl FnOnce(&mut Condition)) -> Condition {
    let mut condition = Condition { arg: Some(arg.into()), ..Condition::default() };
    with(&mut condition);
    condition
}

#[test]
fn rules_keep_their_per_role_meaning() {
    let imported = convert(input());
    let policy = &imported.config.policy;
    assert_eq!(policy.default, Some(Action::Deny), "IronCurtain denies what no rule allows");
    assert!(policy.strict, "and unknown tools");
    assert!(imported.config.servers.is_empty());
    assert_eq!(policy.rules[0].name, "structural-introspection-allow");
    assert_eq!(policy.rules[0].when.tool, ["list_allowed_directories"]);

    // A paths condition alone makes a role rule for its roles; `within` is
    // a list of one, and checks the paths of the role being decided, one by
    // one, as IronCurtain does.
    let [downloads] = rules(&imported, "allow-downloads-full-access")[..] else { panic!() };
    assert_eq!(downloads.when.roles, ["read-path", "write-path", "delete-path"]);
    assert_eq!(downloads.when.paths, Some(PathsWithin { roles: vec![], within: strings(&["/home/user/Downloads"]) }));
    assert!(policy.decide_absent_roles, "IronCurtain decides a role whose argument is absent");
    assert_eq!(
        downloads.description,
        "Allow all read, write, and delete operations within the Downloads folder (principle: Concrete Guidance - Downloads folder full access)"
    );
    assert_eq!(downloads.reason, "Constitution explicitly permits read, write, and delete in Downloads folder");
    let [documents] = rules(&imported, "allow-documents-read")[..] else { panic!() };
    assert_eq!(
        (documents.when.server.as_slice(), documents.when.roles.as_slice()),
        (&strings(&["filesystem"])[..], &strings(&["read-path"])[..])
    );
    let [git] = rules(&imported, "allow-git-in-src")[..] else { panic!() };
    assert_eq!(git.when.roles, ["read-path"], "from paths.roles");
    // Roles IronCurtain never evaluates per role are dropped from `roles`.
    let [history] = rules(&imported, "escalate-history-rewrites")[..] else { panic!() };
    assert_eq!(
        (history.when.roles.as_slice(), history.action),
        (&strings(&["write-history", "delete-history"])[..], Action::Escalate)
    );
    let [delete] = rules(&imported, "deny-delete-outside-permitted")[..] else { panic!() };
    assert_eq!((delete.when.roles.as_slice(), delete.action), (&strings(&["delete-path"])[..], Action::Deny));

    // Domains: `@lists` expanded, (values + additions) - removals.
    let [push] = rules(&imported, "allow-push-to-trusted-hosts")[..] else { panic!() };
    assert_eq!(push.when.roles, ["git-remote-url"]);
    assert_eq!(
        (push.when.server.as_slice(), push.when.tool.as_slice()),
        (&strings(&["git"])[..], &strings(&["git_push"])[..])
    );
    assert_eq!(
        push.when.domains,
        Some(DomainsAllowed { roles: vec![], allowed: strings(&["github.com", "gitlab.com", "*.github.com"]) })
    );
    let [news] = rules(&imported, "allow-fetch-news-sites")[..] else { panic!() };
    assert_eq!(
        news.when.domains.as_ref().map(|d| d.allowed.clone()),
        Some(strings(&["nytimes.com", "*.bbc.co.uk", "reuters.com", "apnews.com"]))
    );

    // A rule without role conditions is considered for every role of the
    // tools it selects, and decides tools without resource roles once.
    let read_ops = rules(&imported, "github-read-operations-allow");
    assert_eq!(read_ops.len(), 2);
    assert_eq!(read_ops[0].when.roles, ["github-owner", "github-repo"]);
    assert_eq!(read_ops[0].when.tool, ["list_issues", "get_me"]);
    assert!(read_ops[1].when.roles.is_empty());
    assert_eq!(
        (read_ops[1].when.server.as_slice(), read_ops[1].when.tool.as_slice()),
        (&strings(&["github"])[..], &strings(&["get_me"])[..])
    );
    let [search] = rules(&imported, "allow-web-search")[..] else {
        panic!("only the call rule: web_search has no resource roles")
    };
    assert!(search.when.roles.is_empty() && search.when.tool == ["web_search"]);
    let [escalate_writes] = rules(&imported, "github-issue-write-escalate")[..] else { panic!() };
    assert_eq!(escalate_writes.when.roles, ["github-owner", "github-repo"]);

    // Rules that can never apply are left out, with a warning.
    assert!(rules(&imported, "allow-branch-names").is_empty());
    warning(&imported, &["rule \"allow-branch-names\" is left out", "no role that IronCurtain evaluates"]);
    warning(
        &imported,
        &[
            "allow-list-allowed-directories, github-read-operations-allow, allow-web-search",
            "github/get_me",
            "call rules naming the annotated tools",
        ],
    );
    // Each path of a role is decided on its own, as in IronCurtain: no warning.
    assert!(!imported.warnings.iter().any(|w| w.contains("several paths")), "{:#?}", imported.warnings);
    // Escalations wait for a person now: approval is on, and nothing warns.
    assert_eq!(imported.config.approval, Some(Default::default()));
    assert!(!imported.warnings.iter().any(|warning| warning.contains("approval")), "{:#?}", imported.warnings);
}

#[test]
fn list_conditions_test_the_arguments_with_the_role() {
    let imported = convert(input());
    let policy = &imported.config.policy;
    let [orgs] = rules(&imported, "github-allow-own-orgs")[..] else { panic!() };
    assert_eq!(orgs.when.roles, ["github-owner"]);
    // Each text of an array on its own, as IronCurtain checks them.
    let owner_in = test("owner", |c| {
        c.in_list = Some("my-github-orgs".into());
        c.each = true;
    });
    assert_eq!(
        orgs.when.args,
        Some(Condition { all: Some(vec![test("owner", |c| c.exists = Some(true)), owner_in]), ..Condition::default() })
    );
    assert_eq!(policy.lists["my-github-orgs"], ["provos", "acme-corp", "acme-labs"]);
    // Literal entries make a list of their own; unknown roles work as any other.
    let [channels] = rules(&imported, "allow-general-channels")[..] else { panic!() };
    assert_eq!(channels.when.roles, ["slack-channel"]);
    let list = "allow-general-channels.lists[0]";
    assert_eq!(policy.lists[list], ["general", "random"]);
    assert_eq!(
        channels.when.args.as_ref().and_then(|a| a.all.as_ref()).map(|all| all[1].in_list.as_deref()),
        Some(Some(list))
    );
    assert!(!imported.warnings.iter().any(|w| w.contains("array")), "{:#?}", imported.warnings);
    assert_eq!(policy.lists.len(), 2, "domain lists are expanded in place");
}

#[test]
fn a_rule_needing_a_list_needs_the_lists_file() {
    let err = import_ironcurtain(IronCurtainInput { dynamic_lists: None, ..input() }).unwrap_err().to_string();
    assert!(err.contains("compiled-policy.json: "), "{err}");
    assert!(
        err.contains("rule \"allow-push-to-trusted-hosts\" needs the dynamic list @trusted-git-hosts (domains.allowed): give the dynamic-lists.json file"),
        "{err}"
    );
    let lists = text("dynamic-lists.json", r#"{"lists": {"trusted-git-hosts": {"values": ["gitlab.com"]}}}"#);
    let err = import_ironcurtain(IronCurtainInput { dynamic_lists: Some(lists), ..input() }).unwrap_err().to_string();
    assert!(
        err.contains("rule \"github-allow-own-orgs\" needs the dynamic list @my-github-orgs (lists), which the dynamic lists file does not have"),
        "{err}"
    );
    // Without list references, no lists file is needed.
    let policy = text(
        "compiled-policy.json",
        r#"{"rules": [{"name": "allow-news", "description": "", "principle": "", "if": {"lists": [{"roles": ["fetch-url"], "allowed": ["*.bbc.co.uk", "apnews.com"], "matchType": "domains"}]}, "then": "allow", "reason": "news"}]}"#,
    );
    let imported = convert(IronCurtainInput { compiled_policy: policy, dynamic_lists: None, ..input() });
    let [news] = rules(&imported, "allow-news")[..] else { panic!() };
    let all = news.when.args.as_ref().and_then(|a| a.all.as_ref()).unwrap();
    assert_eq!(
        all[1],
        test("url", |c| {
            c.regex = Some(r"(?s)^(?:(?:[^/]*\.)?bbc\.co\.uk(?:/.*)?|apnews\.com(?:/.*)?)$".into());
            c.each = true;
        }),
        "*.domain matches the domain and its subdomains, each before a `/`"
    );
    // `*` (any name but an IP address) is approximated, and said so.
    let policy = text(
        "compiled-policy.json",
        r#"{"rules": [{"name": "allow-any", "if": {"lists": [{"roles": ["fetch-url"], "allowed": ["*"], "matchType": "domains"}]}, "then": "allow", "reason": "r"}]}"#,
    );
    let imported = convert(IronCurtainInput { compiled_policy: policy, dynamic_lists: None, ..input() });
    warning(&imported, &["rule \"allow-any\"", "an array argument never matches it"]);
}

#[test]
fn annotations_keep_every_role_and_condition() {
    let imported = convert(input());
    let annotations = &imported.config.policy.annotations;
    assert_eq!(annotations.keys().collect::<Vec<_>>(), ["filesystem", "git", "github", "fetch", "slack"]);
    let fs = &annotations["filesystem"];
    assert_eq!(fs["move_file"].args["source"], ["read-path", "delete-path"]);
    assert_eq!(fs["move_file"].args["destination"], ["write-path"]);
    assert_eq!(fs["move_file"].side_effects, Some(true));
    assert_eq!(fs["read_text_file"].args["head"], Vec::<String>::new(), "none is no role");
    assert_eq!(fs["read_text_file"].side_effects, Some(false));
    assert!(fs["list_allowed_directories"].args.is_empty());
    // dryRun: true narrows edit_file to a read.
    let edit = &fs["edit_file"];
    assert_eq!(edit.args["path"], ["read-path", "write-path"]);
    assert_eq!(edit.conditional.len(), 1);
    assert_eq!(edit.conditional[0].when, test("dryRun", |c| c.equals = Some(json!(true))));
    assert_eq!(edit.conditional[0].args["path"], ["read-path"]);
    // First match wins: later entries exclude earlier ones.
    let branch = &annotations["git"]["git_branch"];
    assert_eq!(branch.args["path"], ["read-path", "write-history", "delete-history"]);
    assert_eq!(branch.args["name"], Vec::<String>::new(), "branch-name is not evaluated per role");
    let is_list = test("operation", |c| c.equals = Some(json!("list")));
    let not = |c: Condition| Condition { not: Some(Box::new(c)), ..Condition::default() };
    let create = test("operation", |c| c.one_of = Some(vec![json!("create"), json!("rename")]));
    assert_eq!(
        branch.conditional[1].when,
        Condition { all: Some(vec![create.clone(), not(is_list.clone())]), ..Condition::default() }
    );
    let truthy = Condition {
        all: Some(vec![
            test("force", |c| c.exists = Some(true)),
            not(test("force", |c| c.one_of = Some(vec![json!(false), json!(0), json!(0.0), json!(""), json!(null)]))),
        ]),
        ..Condition::default()
    };
    assert_eq!(
        branch.conditional[2].when,
        Condition { all: Some(vec![truthy, not(is_list), not(create)]), ..Condition::default() }
    );
    assert_eq!(branch.conditional[2].args["path"], ["read-path", "delete-history"]);
    // Unknown roles are kept as they are.
    assert_eq!(annotations["slack"]["post_message"].args["channel"], ["slack-channel"]);
    warning(&imported, &["unknown roles slack-channel are kept as they are"]);
    warning(&imported, &["the roles none, branch-name, commit-message are left out of the annotations"]);
    warning(&imported, &["comments of 16 annotated tools"]);
}

/// Annotations and a policy, given as text, imported with `--sandbox dir`.
fn sandboxed(annotations: &str, policy: &str, dir: &str) -> Imported {
    convert(IronCurtainInput {
        compiled_policy: text("compiled-policy.json", policy),
        tool_annotations: text("tool-annotations.json", annotations),
        sandbox: Some(dir.into()),
        ..IronCurtainInput::default()
    })
}

#[test]
fn command_line_settings_fill_the_structural_checks() {
    let domains = parse_allowed_domains("fetch=*.example.com, docs.rs").unwrap();
    assert_eq!(domains, ("fetch".to_owned(), strings(&["*.example.com", "docs.rs"])));
    let imported = convert(IronCurtainInput {
        sandbox: Some("/home/user/sandbox".into()),
        protected_paths: strings(&["~/.ssh", "/etc/ironcurtain", "~/.ssh"]),
        allowed_domains: vec![
            domains,
            ("git".into(), strings(&["github.com"])),
            ("fetch".into(), strings(&["docs.rs", "crates.io"])),
        ],
        trusted_servers: strings(&["memory"]),
        ..input()
    });
    let policy = &imported.config.policy;
    assert_eq!(policy.protected_paths, ["~/.ssh", "/etc/ironcurtain"]);
    assert_eq!(policy.trusted_servers, ["memory"]);
    assert_eq!(policy.allowed_domains["fetch"], ["*.example.com", "docs.rs", "crates.io"]);
    assert_eq!(policy.allowed_domains["git"], ["github.com"]);
    // Only filesystem and git tools have path roles: a role all of whose
    // paths are in the sandbox is allowed (Warden's sandbox), and on the
    // filesystem server each path in it is, one by one (the first rule).
    assert_eq!(policy.sandbox.as_deref(), Some("/home/user/sandbox"));
    let sandbox = &policy.rules[1];
    assert_eq!(sandbox.name, "structural-sandbox-allow");
    assert_eq!((sandbox.when.server.as_slice(), sandbox.action), (&strings(&["filesystem"])[..], Action::Allow));
    assert_eq!(sandbox.when.roles, ["read-path", "write-path", "delete-path", "write-history", "delete-history"]);
    assert_eq!(sandbox.when.paths.as_ref().map(|p| p.within.clone()), Some(strings(&["/home/user/sandbox"])));
    warning(&imported, &["protected paths", "carves the sandbox out of a protected directory"]);
    warning(&imported, &["allowed domains", "stricter, never looser"]);

    // With only the filesystem server's read/write/delete paths, the sandbox is Warden's.
    let imported = sandboxed(
        r#"{"servers": {"filesystem": {"tools": [{"toolName": "read_file", "sideEffects": false, "args": {"path": ["read-path"]}}]}}}"#,
        r#"{"rules": [{"name": "escalate-reads", "if": {"roles": ["read-path"]}, "then": "escalate", "reason": "r"}]}"#,
        "sandbox",
    );
    assert_eq!(imported.config.policy.sandbox.as_deref(), Some("sandbox"));
    assert_eq!(imported.config.policy.rules.len(), 3);
    warning(&imported, &["relative paths", "--sandbox: sandbox"]);

    // A path role on another server: IronCurtain does not contain it in the
    // sandbox, Warden's sandbox would, so containment is written as a rule
    // for the filesystem and git servers only.
    let imported = sandboxed(
        r#"{"servers": {"notes": {"tools": [{"toolName": "save", "args": {"file": ["write-path"]}}]}}}"#,
        r#"{"rules": [{"name": "escalate-writes", "if": {"roles": ["write-path"]}, "then": "escalate", "reason": "r"}]}"#,
        "/sandbox",
    );
    assert_eq!(imported.config.policy.sandbox, None);
    assert_eq!(imported.config.policy.rules[1].when.server, ["filesystem", "git"]);
    warning(&imported, &["--sandbox /sandbox is written as the first rule", "notes/save (write-path)"]);

    for (bad, expected) in
        [("fetch", "is not SERVER=PATTERN"), ("=a.com", "needs a server name"), ("fetch=", "needs a server")]
    {
        let err = parse_allowed_domains(bad).unwrap_err();
        assert!(matches!(err, ImportError::BadOption { .. }) && err.to_string().contains(expected), "{bad}: {err}");
    }
    let err = import_ironcurtain(IronCurtainInput { trusted_servers: strings(&[" "]), ..input() }).unwrap_err();
    assert_eq!(err.to_string(), "--trusted-server: needs a value");
}

#[test]
fn the_yaml_loads_back_to_the_same_config() {
    let imported = convert(IronCurtainInput {
        sandbox: Some("/srv/sandbox".into()),
        protected_paths: strings(&["~/.ssh"]),
        ..input()
    });
    let yaml = imported.to_yaml().unwrap();
    assert!(same(&load(&yaml), &imported.config), "{yaml}");
    assert!(
        imported.origin.starts_with("IronCurtain policy ") && imported.origin.contains(" and lists "),
        "{}",
        imported.origin
    );
}

#[test]
fn malformed_artifacts_are_errors_naming_the_place() {
    let policy = |rules: &str| text("compiled-policy.json", &format!(r#"{{"rules": [{rules}]}}"#));
    let annotations = |args: &str| {
        text(
            "tool-annotations.json",
            &format!(
                r#"{{"servers": {{"fs": {{"tools": [{{"toolName": "t", "sideEffects": true, "args": {args}}}]}}}}}}"#
            ),
        )
    };
    let run = |compiled_policy: (PathBuf, String), tool_annotations: (PathBuf, String)| {
        import_ironcurtain(IronCurtainInput { compiled_policy, tool_annotations, ..IronCurtainInput::default() })
            .unwrap_err()
            .to_string()
    };
    let fine_annotations = || annotations("{}");
    let fine_policy = || policy("");
    for (err, expected) in [
        (
            run(policy(r#"{"name": "r", "if": {}, "then": "ask"}"#), fine_annotations()),
            "rules[0].then: rule \"r\": unknown decision \"ask\"",
        ),
        (
            run(policy(r#"{"name": "r", "if": {"args": {}}, "then": "deny"}"#), fine_annotations()),
            "rule \"r\": unknown condition \"args\"; refusing to drop it",
        ),
        (
            run(
                policy(r#"{"name": "r", "if": {"paths": {"roles": ["read-path"]}}, "then": "deny"}"#),
                fine_annotations(),
            ),
            "rule \"r\": paths needs a within directory",
        ),
        (
            run(
                policy(
                    r#"{"name": "r", "if": {"lists": [{"roles": ["x"], "allowed": [], "matchType": "phones"}]}, "then": "deny"}"#,
                ),
                fine_annotations(),
            ),
            "unknown matchType \"phones\"",
        ),
        (run(policy(r#"{"if": {}, "then": "deny"}"#), fine_annotations()), "rules[0]: has no name"),
        (
            run(text("compiled-policy.json", r#"{"rules": [}"#), fine_annotations()),
            "compiled-policy.json: not valid JSON",
        ),
        (
            run(
                fine_policy(),
                annotations(
                    r#"{"p": {"default": ["read-path"], "when": [{"condition": {"arg": "x", "equals": 1, "is": "present"}, "roles": []}]}}"#,
                ),
            ),
            "exactly one of equals, in and is",
        ),
        (
            run(
                fine_policy(),
                annotations(
                    r#"{"p": {"default": ["read-path"], "when": [{"condition": {"arg": "x", "is": "set"}, "roles": []}]}}"#,
                ),
            ),
            "unknown predicate \"set\"",
        ),
        (
            run(fine_policy(), annotations(r#"{"p": "read-path"}"#)),
            "servers.fs.tools[0].args.p: expected a list of roles or {default, when}, found text",
        ),
        (
            run(
                fine_policy(),
                text(
                    "tool-annotations.json",
                    r#"{"servers": {"fs": {"tools": [{"toolName": "t", "sideEffects": "no"}]}}}"#,
                ),
            ),
            "servers.fs.tools[0].sideEffects",
        ),
    ] {
        assert!(err.contains(expected), "{expected}\n{err}");
    }
}

#[test]
fn rules_that_can_never_apply_are_left_out_with_a_warning() {
    let policy = text(
        "compiled-policy.json",
        r#"{"rules": [
            {"name": "no-tools", "if": {"tool": []}, "then": "allow"},
            {"name": "disjoint", "if": {"roles": ["read-path"], "paths": {"roles": ["write-path"], "within": "/tmp"}}, "then": "allow"},
            {"name": "nobody", "if": {"server": ["nowhere"]}, "then": "allow"}
        ]}"#,
    );
    let imported = convert(IronCurtainInput { compiled_policy: policy, ..input() });
    assert_eq!(imported.config.policy.rules.len(), 1, "only the introspection rule");
    warning(&imported, &["rule \"no-tools\" is left out", "tool list is empty"]);
    warning(&imported, &["rule \"disjoint\" is left out"]);
    warning(&imported, &["rule \"nobody\" is left out", "no annotated tool can reach it"]);
}

/// IronCurtain's files of c0aeff9d: the current format (no `sideEffects`,
/// an `inputSchema` per tool, `write-history` in `paths.roles`).
fn current() -> IronCurtainInput {
    files_in("ironcurtain-c0aeff9d")
}

#[test]
fn the_current_format_imports_and_validates() {
    let imported = convert(current());
    let annotations = &imported.config.policy.annotations;
    assert_eq!(annotations["filesystem"]["read_file"].side_effects, None);
    assert_eq!(annotations["git"]["git_reset"].args["path"], ["read-path", "write-history"]);
    assert!(!imported.warnings.iter().any(|w| w.contains("inputSchema")), "{:#?}", imported.warnings);
    let [add] = rules(&imported, "allow-git-add-in-downloads")[..] else { panic!() };
    assert_eq!(add.when.roles, ["read-path", "write-history"]);
    // It validates and decides as IronCurtain does: crates/warden/tests/ironcurtain.rs.
}

#[test]
fn per_server_compiled_policies_merge_in_server_order() {
    let merged = convert(current());
    let (_, text) = file("ironcurtain-c0aeff9d/compiled-policy.json");
    let whole: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut by_server: Vec<(String, Vec<serde_json::Value>)> = Vec::new();
    for rule in whole["rules"].as_array().unwrap() {
        let server = rule["if"]["server"][0].as_str().unwrap().to_owned();
        match by_server.iter_mut().find(|(name, _)| *name == server) {
            Some((_, rules)) => rules.push(rule.clone()),
            None => by_server.push((server, vec![rule.clone()])),
        }
    }
    assert_eq!(by_server.len(), 4);
    // Given in reverse order, as IronCurtain writes them per server.
    let mut files: Vec<(PathBuf, String)> = by_server
        .iter()
        .rev()
        .map(|(server, rules)| {
            let file = json!({"generatedAt": "x", "serverName": server, "rules": rules});
            (PathBuf::from(format!("servers/{server}/compiled-policy.json")), file.to_string())
        })
        .collect();
    let first = files.remove(0);
    let split = convert(IronCurtainInput { compiled_policy: first, more_compiled_policies: files, ..current() });
    assert_eq!(split.config.policy.rules, merged.config.policy.rules);
    assert!(split.origin.contains("servers/github/compiled-policy.json, servers/git/compiled-policy.json"));
}
