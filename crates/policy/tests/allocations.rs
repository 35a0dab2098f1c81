//! The guard decides an allowed call that no rule reads the arguments of
//! without allocating (issue 32): the candidate rules come from the index,
//! the arguments are checked without being decoded, the outcome borrows its
//! texts. A counting allocator watches the decisions.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use warden_jsonrpc::Method;
use warden_pipeline::{Call, Guard, Verdict};

/// Counts the allocations of the thread that is counting.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNT.with(|count| count.set(count.get() + 1));
        }
        // SAFETY: as the caller promised for `layout`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            COUNT.with(|count| count.set(count.get() + 1));
        }
        // SAFETY: as the caller promised for `ptr` and `layout`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocations `decide` makes.
fn allocations(decide: impl Fn() -> Verdict) -> (usize, Verdict) {
    decide(); // Thread-local buffers are made once.
    COUNT.with(|count| count.set(0));
    COUNTING.with(|counting| counting.set(true));
    let verdict = decide();
    COUNTING.with(|counting| counting.set(false));
    (COUNT.with(Cell::get), verdict)
}

const POLICY: &str = r#"
policy:
  default: allow
  rules:
    - {name: seen, if: {server: [srv3]}, then: log}
    - {name: block, if: {server: [srv3], tool: [tool_13], args: {arg: query, contains: secret}}, then: deny}
    - {name: any-exec, if: {tool: ["*_exec"]}, then: allow}
    - {name: pay, if: {tool: [pay_7, "*_transfer"], args: {arg: amount, gt: 1000}}, then: escalate}
    - {name: ops, if: {server: ["ops*"], sideEffects: true}, then: escalate}
"#;

#[test]
fn an_allowed_call_no_rule_reads_allocates_nothing() {
    let engine = common::engine(POLICY);
    let call = |server, tool, arguments| {
        let call = Call { session: "s", server, method: &Method::ToolsCall, name: tool, arguments: Some(arguments) };
        engine.decide(&call)
    };
    let quiet = [
        // Nothing applies: the default.
        ("misc", "unknown_tool", r#"{"a": [1, 2, 3], "b": {"c": "d"}, "e": null, "n": 1.5}"#),
        // A rule without conditions on the arguments decides.
        ("shell", "run_exec", r#"{"cmd": "ls -la", "n": 3}"#),
        // Rules apply whose conditions do not read arguments.
        ("ops-eu", "restart", r#"{"target": "host3"}"#),
    ];
    for (server, tool, arguments) in quiet {
        let (count, verdict) = allocations(|| call(server, tool, arguments));
        assert_eq!(verdict, Verdict::Allow, "{server}/{tool}");
        assert_eq!(count, 0, "{server}/{tool} {arguments}: {count} allocations");
    }
    // What must be looked at still is: a rule reading the arguments, a
    // path-like string (checked against the protected paths), invalid JSON.
    let (count, verdict) = allocations(|| call("bank", "pay_7", r#"{"amount": 5000}"#));
    assert!(count > 0 && matches!(verdict, Verdict::Escalate { .. }), "{verdict:?}");
    let (_, verdict) = allocations(|| call("misc", "unknown_tool", r#"{"p": "~/.ssh/id_rsa"}"#));
    assert!(matches!(&verdict, Verdict::Deny { rule, .. } if rule == "protected-path"), "{verdict:?}");
    let (_, verdict) = allocations(|| call("shell", "run_exec", r#"{"a": 1,}"#));
    assert!(matches!(&verdict, Verdict::Deny { rule, .. } if rule == "invalid-arguments"), "{verdict:?}");
}
