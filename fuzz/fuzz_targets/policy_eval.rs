//! Policies and the arguments they judge: `POLICY-YAML \0 server \0 tool \0
//! ARGUMENTS`. A policy that compiles judges any arguments (any JSON, or
//! none) without crashing, the same way twice, and arguments that are not
//! JSON are allowed only where `{}` is. The tool's name and arguments are
//! also judged as a prompt's, and its name as a resource URI.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use warden_policy::{Decision, PolicyEngine, Request};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut parts = text.splitn(4, '\u{0}');
    let (Some(yaml), Some(server), Some(tool), Some(arguments)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let Ok(config) = warden_config::parse(Path::new("policy.yaml"), yaml, &|_| None) else { return };
    let Ok(engine) = PolicyEngine::compile(&config, None) else { return };
    let first = engine.evaluate(server, tool, Some(arguments));
    let second = engine.evaluate(server, tool, Some(arguments));
    assert_eq!((first.action, &first.rule), (second.action, &second.rule), "not deterministic: {text:?}");
    let _ = engine.evaluate(server, tool, None);
    // The same text as a prompt's name and arguments, and as a resource URI.
    for (request, arguments) in [(Request::Prompt, Some(arguments)), (Request::Resource, None)] {
        let first = engine.evaluate_request(request, server, tool, arguments);
        let second = engine.evaluate_request(request, server, tool, arguments);
        assert_eq!((first.action, &first.rule), (second.action, &second.rule), "not deterministic: {text:?}");
    }
    // Arguments that are not JSON (which a frame never carries) get no more
    // than an empty object would: a rule that allows them allows `{}`.
    let is_json = serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_ok();
    if !is_json && first.action == Decision::Allow {
        let empty = engine.evaluate(server, tool, Some("{}"));
        assert_eq!(empty.action, Decision::Allow, "allowed arguments that are not JSON, not {{}}: {text:?}");
    }
});
