//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use warden_policy::{Decision, Evaluation, PolicyEngine, PolicyError};

/// The configuration in `yaml`.
pub fn config(yaml: &str) -> warden_config::Config {
    match warden_config::parse(Path::new("t.yaml"), yaml, &|_| None) {
        Ok(config) => config,
        Err(err) => panic!("config does not parse: {err}\n{yaml}"),
    }
}

/// The engine of `yaml` (default profile).
pub fn engine(yaml: &str) -> PolicyEngine {
    match PolicyEngine::compile(&config(yaml), None) {
        Ok(engine) => engine,
        Err(err) => panic!("policy does not compile: {err}"),
    }
}

/// The compile problems of `yaml`.
pub fn problems(yaml: &str) -> Vec<String> {
    match PolicyEngine::compile(&config(yaml), None) {
        Err(PolicyError::Invalid { problems }) => problems,
        Err(other) => panic!("expected problems, got {other}"),
        Ok(_) => panic!("expected problems, the policy compiled"),
    }
}

/// Evaluates and checks the decision and rule, printing the trace on failure.
#[track_caller]
pub fn expect(engine: &PolicyEngine, server: &str, tool: &str, args: &str, action: Decision, rule: &str) -> Evaluation {
    let evaluation = engine.evaluate(server, tool, Some(args));
    assert!(
        evaluation.action == action && evaluation.rule == rule,
        "{server}/{tool} {args}: expected {action} by '{rule}', got {} by '{}': {}\ntrace:\n  {}",
        evaluation.action,
        evaluation.rule,
        evaluation.reason,
        evaluation.trace.join("\n  ")
    );
    evaluation
}

/// A fresh, canonical temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warden-policy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::canonicalize(dir).unwrap()
}

/// `text` as a JSON string literal.
pub fn js(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}
