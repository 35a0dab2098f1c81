//! End to end: guards decide per call (rate limits, the breaker, argument
//! policies) and a refused tools/call is a tool result the model can read.

mod support;

use serde_json::json;
use support::{Client, fixtures};

fn refusal(result: &serde_json::Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

#[test]
fn rate_limits_and_the_breaker_refuse_with_when_to_retry() {
    let config = fixtures(
        &[("fx", &[])],
        "rateLimits:\n  - {tool: echo, calls: 2, perSeconds: 60}\nbreaker: {identicalCalls: 3, withinSeconds: 60}\n",
    );
    let mut client = Client::serve_initialized(&config);
    client.wait_for_tool("fx__echo");
    assert_eq!(client.call_text("fx__echo", json!({"text": "1"})), "1");
    assert_eq!(client.call_text("fx__echo", json!({"text": "2"})), "2");
    let limited = refusal(&client.call_tool("fx__echo", json!({"text": "3"})));
    assert!(limited.starts_with("Denied by policy 'rate-limit:0': rate limit of 2 calls per 60 s for */echo reached; retry in"), "{limited}");

    for _ in 0..3 {
        assert!(!client.call_text("fx__pid", json!({})).is_empty());
    }
    let looped = refusal(&client.call_tool("fx__pid", json!({})));
    assert!(looped.starts_with("Denied by policy 'breaker'") && looped.contains("loop"), "{looped}");
    // Other tools and other arguments go on.
    assert_eq!(client.call_text("fx__large", json!({"bytes": 3})), "xxx");
}
