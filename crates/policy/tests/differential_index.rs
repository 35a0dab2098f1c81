//! Differential: the indexed engine decides exactly as the reference scan.
//!
//! The engine picks a call's candidate rules from an index of their server
//! and tool patterns (see `src/index.rs`) instead of matching every rule's
//! globs. The scan it replaced is kept as the reference
//! (`evaluate_scanning_all`) until the index has earned trust. Generated
//! policies (literal and glob servers and tools, role rules, call rules,
//! `log` rules, `args` conditions, `paths`, `domains`, `sideEffects`,
//! methods, trusted servers, strict mode, a sandbox, allowlists) and calls
//! (annotated and not, path-like and invalid arguments) must get the same
//! [`Evaluation`] from both: decision, rule, reason, position, label,
//! logged rules, and with the trace, every step of it. The reference also
//! tests every `regex` and `contains` alone, where the engine runs an
//! argument's patterns together (see `src/scan.rs`). Seeded and
//! deterministic; set `WARDEN_DIFF_SEED` to try other policies.

mod common;

use serde_json::{Value, json};
use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard};
use warden_policy::{PolicyEngine, Request};

/// A small PRNG (SplitMix64): deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Up to `max` distinct items of `items`.
    fn some<T: Clone + PartialEq>(&mut self, items: &[T], max: usize) -> Vec<T> {
        let mut out: Vec<T> = Vec::new();
        for _ in 0..1 + self.below(max) {
            let item = self.pick(items).clone();
            if !out.contains(&item) {
                out.push(item);
            }
        }
        out
    }
}

const SERVERS: [&str; 8] = ["db", "db2", "fs", "ops-eu", "ops-us", "web", "srv.1", "git"];
const SERVER_GLOBS: [&str; 9] = ["db*", "ops-*", "*", "?b", "srv.?", "{db,fs}", "[dw]*", "*s", "nope*"];
const TOOLS: [&str; 11] = [
    "query",
    "run_query",
    "read_file",
    "write_file",
    "run_exec",
    "ns1_list",
    "ns2_get",
    "fetch",
    "pay_3",
    "x",
    "clone",
];
const TOOL_GLOBS: [&str; 10] =
    ["*_exec", "ns*_*", "read_*", "*file", "*", "run_*", "{fetch,x}", "pay_[0-9]", "*_?ist", "q*y"];
const ACTIONS: [&str; 4] = ["allow", "deny", "escalate", "log"];
const ROLES: [&str; 4] = ["read-path", "write-path", "fetch-url", "git-remote-url"];

/// The directory the generated paths live in.
fn base() -> String {
    std::env::temp_dir().join("warden-diff-index").display().to_string()
}

fn patterns(rng: &mut Rng, literals: &[&str], globs: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let pattern = if rng.chance(60) { *rng.pick(literals) } else { *rng.pick(globs) };
        out.push(pattern.to_owned());
    }
    if rng.chance(5) {
        out.push("unknown-name".to_owned());
    }
    out
}

fn condition(rng: &mut Rng, depth: usize) -> Value {
    if depth < 2 && rng.chance(25) {
        let parts: Vec<Value> = (0..1 + rng.below(3)).map(|_| condition(rng, depth + 1)).collect();
        return match rng.below(3) {
            0 => json!({"all": parts}),
            1 => json!({"any": parts}),
            _ => json!({"not": parts[0]}),
        };
    }
    match rng.below(13) {
        0 => json!({"arg": "q", "contains": "secret", "ignoreCase": rng.chance(50)}),
        // Many needles and patterns on one argument: run together (`src/scan.rs`).
        11 => json!({"arg": "q", "contains": rng.pick(&["a", "z", "cret", "se", "SECRET", "hello", "ab", "é"])}),
        12 => {
            json!({"arg": rng.pick(&["q", "tags"]), "some": rng.chance(30), "regex": rng.pick(&["sec", "(?i)SEC", "^[a-z]+$", "c.?z", "^$", r"\d", "a|h"])})
        }
        1 => json!({"arg": "n", "gt": rng.below(20)}),
        2 => json!({"arg": "path", "startsWith": "/tmp"}),
        3 => json!({"arg": "flag", "equals": true}),
        4 => json!({"arg": "q", "regex": "^a.*z$"}),
        5 => json!({"arg": "q", "notContains": "hello"}),
        6 => json!({"arg": "sql", "sql": {"selectWithoutLimit": true}}),
        7 => json!({"arg": "opts.mode", "in": ["fast", "slow"]}),
        8 => json!({"arg": "tags", "each": true, "startsWith": "t"}),
        9 => json!({"arg": "q", "exists": rng.chance(50)}),
        _ => json!({"arg": "n", "le": rng.below(20)}),
    }
}

fn rule(rng: &mut Rng, number: usize) -> Value {
    let mut when = serde_json::Map::new();
    if rng.chance(60) {
        when.insert("server".into(), json!(patterns(rng, &SERVERS, &SERVER_GLOBS)));
    }
    if rng.chance(70) {
        when.insert("tool".into(), json!(patterns(rng, &TOOLS, &TOOL_GLOBS)));
    }
    let for_requests = rng.chance(10);
    if for_requests {
        let methods = rng.some(&["prompts/get", "resources/read", "tools/call"], 3);
        when.insert("method".into(), json!(methods));
    }
    let tool_only = !for_requests;
    if tool_only && rng.chance(35) {
        when.insert("roles".into(), json!(rng.some(&ROLES, 2)));
    }
    if tool_only && rng.chance(15) {
        let within = rng.some(&[format!("{}/a", base()), format!("{}/b", base()), "/tmp".to_owned()], 2);
        let check =
            if rng.chance(20) { json!({"roles": ["read-path"], "within": within}) } else { json!({"within": within}) };
        when.insert("paths".into(), check);
    }
    if tool_only && rng.chance(10) {
        when.insert("domains".into(), json!({"allowed": rng.some(&["example.com", "*.github.com", "*"], 2)}));
    }
    if tool_only && rng.chance(10) {
        when.insert("sideEffects".into(), json!(rng.chance(50)));
    }
    if rng.chance(50) {
        when.insert("args".into(), condition(rng, 0));
    }
    let name = if rng.chance(5) { "shared".to_owned() } else { format!("r{number}") };
    let mut rule = json!({"name": name, "if": when, "then": rng.pick(&ACTIONS)});
    if rng.chance(30) {
        rule["reason"] = json!(format!("reason {number}"));
    }
    rule
}

fn policy(rng: &mut Rng) -> Value {
    let rules: Vec<Value> = (0..rng.below(40)).map(|i| rule(rng, i)).collect();
    let mut policy = json!({
        "default": rng.pick(&["allow", "deny", "escalate"]),
        "annotations": {
            "fs": {
                "read_file": {"sideEffects": false, "args": {"path": ["read-path"]}},
                "write_file": {"sideEffects": true, "args": {"path": ["write-path"], "content": ["none"]}},
            },
            "web": {"fetch": {"sideEffects": false, "args": {"url": ["fetch-url"]}}},
            "git": {"clone": {"args": {"url": ["git-remote-url"], "path": ["write-path"]},
                "conditional": [{"when": {"arg": "flag", "equals": true}, "args": {"path": ["read-path"]}}]}},
            "db": {"query": {"args": {"sql": ["none"]}}},
        },
        "rules": rules,
    });
    if rng.chance(10) {
        policy["strict"] = json!(true);
    }
    if rng.chance(15) {
        policy["trustedServers"] = json!(["web"]);
    }
    if rng.chance(20) {
        policy["sandbox"] = json!(format!("{}/a", base()));
    }
    if rng.chance(15) {
        policy["allowedDomains"] = json!({"web": ["example.com"]});
    }
    if rng.chance(10) {
        policy["decideAbsentRoles"] = json!(true);
    }
    json!({ "policy": policy })
}

fn arguments(rng: &mut Rng) -> Option<String> {
    match rng.below(24) {
        0 => return None,
        1 => return Some("{not json".to_owned()),
        2 => return Some("[1, 2]".to_owned()),
        3 => return Some("null".to_owned()),
        4 => return Some(r#"{"n": 1e400}"#.to_owned()),
        5 => return Some(r#"{"q": "x"} trailing"#.to_owned()),
        6 => return Some("  ".to_owned()),
        _ => {}
    }
    let base = base();
    let mut args = serde_json::Map::new();
    let mut maybe = |rng: &mut Rng, key: &str, values: &[Value]| {
        if rng.chance(40) {
            args.insert(key.to_owned(), rng.pick(values).clone());
        }
    };
    maybe(
        rng,
        "q",
        &[json!("hello"), json!("a secret z"), json!("abcz"), json!("SECRET"), json!(3), json!("é 42"), json!("")],
    );
    maybe(rng, "n", &[json!(1), json!(15), json!("7"), json!(null)]);
    maybe(rng, "flag", &[json!(true), json!(false)]);
    maybe(
        rng,
        "path",
        &[
            json!(format!("{base}/a/x")),
            json!(format!("{base}/b/y")),
            json!("~/.ssh/id_rsa"),
            json!("rel/x"),
            json!("/etc/hosts"),
            json!([format!("{base}/a/1"), format!("{base}/b/2")]),
            json!(5),
        ],
    );
    maybe(
        rng,
        "url",
        &[
            json!("https://example.com/x"),
            json!("https://api.github.com"),
            json!("git@github.com:o/r"),
            json!("nohost"),
        ],
    );
    maybe(rng, "sql", &[json!("SELECT * FROM t"), json!("SELECT 1 LIMIT 1"), json!("DELETE FROM"), json!(1)]);
    maybe(rng, "opts", &[json!({"mode": "fast"}), json!({"mode": "FAST"}), json!({"note": "/home/u/.aws/x"})]);
    maybe(rng, "tags", &[json!(["t1", "t2"]), json!(["t1", "x"]), json!([]), json!(["sec", "abz", "hello"])]);
    maybe(rng, "content", &[json!("file:///etc/passwd"), json!("plain")]);
    Some(Value::Object(args).to_string())
}

#[test]
fn the_index_decides_as_the_scan_of_every_rule() {
    let seed = std::env::var("WARDEN_DIFF_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_1D3A_u64);
    let mut rng = Rng(seed);
    std::fs::create_dir_all(format!("{}/a", base())).expect("temp dir");
    std::fs::create_dir_all(format!("{}/b", base())).expect("temp dir");
    let (policies, calls_per_policy) = (150, 40);
    let mut compared = 0;
    // How many calls a rule decided, and how many logged one: the
    // generator must keep exercising rules, not only the default.
    let (mut by_rule, mut with_log) = (0, 0);
    // How many tool calls the guard decided at once, and how many it put off
    // (those naming a path on a mount of this machine that may not answer:
    // none where the temporary directory is on a local filesystem).
    let (mut at_once, mut put_off) = (0, 0);
    for p in 0..policies {
        let text = policy(&mut rng).to_string();
        let config = common::config(&text);
        let engine = match PolicyEngine::compile(&config, None) {
            Ok(engine) => engine,
            Err(err) => panic!("policy {p} does not compile: {err}\n{text}"),
        };
        for _ in 0..calls_per_policy {
            let server = if rng.chance(5) { "elsewhere" } else { *rng.pick(&SERVERS) };
            let tool = if rng.chance(5) { "other_tool" } else { *rng.pick(&TOOLS) };
            let args = arguments(&mut rng);
            let args = args.as_deref();
            let context = || format!("policy {p}: {server}/{tool} {args:?}\n{text}");
            let reference = engine.evaluate_scanning_all(server, tool, args, true);
            by_rule += usize::from(reference.position.is_some());
            with_log += usize::from(!reference.logged.is_empty());
            assert_eq!(engine.evaluate(server, tool, args), reference, "traced: {}", context());
            let quiet = engine.evaluate_scanning_all(server, tool, args, false);
            assert_eq!(engine.evaluate_untraced(server, tool, args), quiet, "untraced: {}", context());
            for request in [Request::Prompt, Request::Resource] {
                assert_eq!(
                    engine.evaluate_request(request, server, tool, args),
                    engine.evaluate_request_scanning_all(request, server, tool, args),
                    "{request:?}: {}",
                    context()
                );
            }
            // Deciding at once, paths on local filesystems resolved, the guard
            // decides as it does when it may read any filesystem.
            for method in [Method::ToolsCall, Method::PromptsGet, Method::ResourcesRead] {
                let call = Call { session: "s", server, method: &method, name: tool, arguments: args };
                match engine.decide_at_once(&call) {
                    Some(verdict) => {
                        assert_eq!(verdict, engine.decide(&call), "at once, {method:?}: {}", context());
                        at_once += usize::from(method == Method::ToolsCall);
                    }
                    None => put_off += 1,
                }
            }
            compared += 1;
        }
    }
    assert_eq!(compared, policies * calls_per_policy);
    eprintln!(
        "{compared} calls compared: a rule decided {by_rule}, a log rule matched in {with_log}; \
         the guard decided {at_once} at once and put {put_off} off"
    );
    assert!(by_rule > compared / 5 && with_log > compared / 20, "{by_rule} decided by a rule, {with_log} logged");
    assert!(at_once > compared / 5, "{at_once} decided at once, {put_off} put off");
}

/// Policies where many rules test the same arguments with patterns (the
/// case `src/scan.rs` runs together), each call checked against the
/// reference, which tests every pattern alone.
#[test]
fn patterns_on_one_argument_decide_together_as_alone() {
    const REGEXES: [&str; 10] = ["sec", "(?i)SEC", "^[a-z ]+$", "c.?z", "^$", r"\d", "a|h", "é", "^a.*z$", "x{2,}"];
    const NEEDLES: [&str; 10] = ["a", "z", "cret", "se", "SECRET", "hello", "ab", "é", "", "secret z"];
    const VALUES: [&str; 8] = ["hello", "a secret z", "abcz", "SECRET", "é 42", "", "xxx", "Hello SeCret"];
    let mut rng = Rng(0x5CA4_u64);
    let (mut compared, mut by_rule) = (0, 0);
    for p in 0..200 {
        let rules: Vec<Value> = (0..2 + rng.below(20))
            .map(|i| {
                let arg = *rng.pick(&["q", "q", "tags"]);
                let mut test = match rng.below(3) {
                    0 => json!({"arg": arg, "regex": rng.pick(&REGEXES)}),
                    1 => json!({"arg": arg, "contains": rng.pick(&NEEDLES)}),
                    _ => json!({"arg": arg, "notContains": rng.pick(&NEEDLES)}),
                };
                if rng.chance(20) {
                    test["ignoreCase"] = json!(true);
                }
                if arg == "tags" {
                    test[*rng.pick(&["some", "each"])] = json!(true);
                }
                // Combined with a test on another argument, which a call may
                // not have (what a rule's trigger is made of, `src/trigger.rs`).
                let on = *rng.pick(&["n", "q"]);
                let other =
                    if rng.chance(50) { json!({"arg": on, "gt": 3}) } else { json!({"arg": on, "exists": true}) };
                let args = match rng.below(10) {
                    0 | 1 => json!({"not": test}),
                    2 | 3 => json!({"any": [test, other]}),
                    4 => json!({"all": [other, test]}),
                    _ => test,
                };
                // Mostly `log` rules, so that evaluation goes on through many tests.
                let then = if rng.chance(85) { "log" } else { *rng.pick(&["deny", "escalate", "allow"]) };
                json!({"name": format!("p{i}"), "if": {"args": args}, "then": then})
            })
            .collect();
        let text = json!({"policy": {"default": "allow", "rules": rules}}).to_string();
        let config = common::config(&text);
        let engine = PolicyEngine::compile(&config, None).unwrap_or_else(|err| panic!("policy {p}: {err}\n{text}"));
        for _ in 0..30 {
            let tags: Vec<&str> = (0..rng.below(4)).map(|_| *rng.pick(&VALUES)).collect();
            let mut args = json!({"q": rng.pick(&VALUES), "tags": tags});
            // Now and then an argument is absent, null, of another type, or `n` is there.
            for key in ["q", "tags"] {
                match rng.below(12) {
                    0 => args[key] = Value::Null,
                    1 => args[key] = json!(7),
                    2 => drop(args.as_object_mut().map(|map| map.remove(key))),
                    _ => {}
                }
            }
            if rng.chance(20) {
                args["n"] = json!(rng.below(6));
            }
            let args = args.to_string();
            let args = Some(args.as_str());
            let reference = engine.evaluate_scanning_all("s", "t", args, true);
            by_rule += usize::from(reference.position.is_some() || !reference.logged.is_empty());
            assert_eq!(engine.evaluate("s", "t", args), reference, "policy {p}: {args:?}\n{text}");
            assert_eq!(
                engine.evaluate_untraced("s", "t", args),
                engine.evaluate_scanning_all("s", "t", args, false),
                "policy {p}: {args:?}\n{text}"
            );
            compared += 1;
        }
    }
    assert!(by_rule > compared / 2, "{by_rule} of {compared} calls matched a rule");
}

/// What a hostile client might send to slip past a rule that the
/// engine's shortcuts (argument slots, the needle groups' automata, the
/// triggers' sieve) would leave out: the needle spelled with escapes, the
/// key spelled with escapes, the argument named twice, the needle in an
/// array item, beside other needles, across a dotted path. Each is decided
/// as the reference decides it, by the guard (with the shortcuts) and with
/// the trace (without them), and the plain spellings are denied.
#[test]
fn hostile_spellings_are_decided_as_the_reference_decides_them() {
    let text = json!({"policy": {"default": "allow", "rules": [
        {"name": "no-drop", "if": {"tool": ["q*"], "args": {"any": [
            {"arg": "sql", "contains": "DROP"}, {"arg": "sql", "contains": "TRUNCATE"},
            {"arg": "cmds", "contains": "rm -rf", "some": true}, {"arg": "opts.mode", "equals": "force"}]}}, "then": "deny"},
        {"name": "no-secret", "if": {"args": {"arg": "note", "contains": "secret"}}, "then": "deny"},
    ]}})
    .to_string();
    let engine = PolicyEngine::compile(&common::config(&text), None).unwrap();
    let denied = [
        r#"{"sql": "DROP TABLE t"}"#,
        r#"{"sql": "\u0044ROP TABLE t"}"#,
        r#"{"s\u0071l": "DROP TABLE t"}"#,
        r#"{"sql": "ok", "sql": "DROP TABLE t"}"#,
        r#"{"sql": "x TRUNCATE y DROP"}"#,
        r#"{"cmds": ["ls", "rm -rf /"]}"#,
        r#"{"opts": {"mode": "force"}}"#,
        r#"{"opts.mode": "force"}"#,
        r#"{"note": "a secret", "sql": "SELECT 1"}"#,
    ];
    let others = [
        r#"{"sql": "DROP TABLE t", "sql": "ok"}"#,
        r#"{"sql": ["DROP TABLE t"]}"#,
        r#"{"sql": {"DROP": 1}}"#,
        r#"{"cmds": "rm -rf /"}"#,
        r#"{"cmds": [["rm -rf /"]]}"#,
        r#"{"sql": "drop table t"}"#,
        r#"{"sql": null, "note": null}"#,
    ];
    for args in denied.iter().chain(&others) {
        for tool in ["query", "other"] {
            let reference = engine.evaluate_scanning_all("db", tool, Some(args), false);
            assert_eq!(engine.evaluate_untraced("db", tool, Some(args)), reference, "guard: {tool} {args}");
            assert_eq!(engine.evaluate("db", tool, Some(args)).action, reference.action, "traced: {tool} {args}");
        }
    }
    for args in denied {
        let decided = engine.evaluate_untraced("db", "query", Some(args));
        assert_eq!(decided.action.to_string(), "deny", "{args}: {decided:?}");
    }
}
