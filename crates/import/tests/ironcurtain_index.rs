//! IronCurtain's own generated policy (c0aeff9d), imported, decides each of
//! its 321 scenarios' calls and its 1,791 probes exactly as the reference
//! scan of every rule does (`evaluate_scanning_all`, kept in warden-policy
//! until the rule index has earned trust; see its
//! `tests/differential_index.rs` for generated policies): the same
//! decision, rule, reason, logged rules and trace.

mod common;

use common::file;
use serde_json::Value;
use warden_import::{IronCurtainInput, import_ironcurtain};
use warden_policy::PolicyEngine;

const DIR: &str = "ironcurtain-c0aeff9d";

fn engine() -> PolicyEngine {
    let input = IronCurtainInput {
        compiled_policy: file(&format!("{DIR}/compiled-policy.json")),
        tool_annotations: file(&format!("{DIR}/tool-annotations.json")),
        dynamic_lists: Some(file(&format!("{DIR}/dynamic-lists.json"))),
        sandbox: Some("/home/provos/.ironcurtain/sandbox".to_owned()),
        protected_paths: vec!["/home/provos/.ironcurtain".to_owned()],
        ..IronCurtainInput::default()
    };
    let imported = import_ironcurtain(input).unwrap_or_else(|err| panic!("import: {err}"));
    let yaml = serde_saphyr::to_string(&imported.config).expect("serialise");
    PolicyEngine::compile(&common::load(&yaml), None).unwrap_or_else(|err| panic!("{err}"))
}

/// The calls of a scenarios file: server, tool, arguments.
fn calls(name: &str) -> Vec<(String, String, String)> {
    let (_, text) = file(&format!("{DIR}/{name}"));
    let scenarios: Value = serde_json::from_str(&text).expect("json");
    scenarios["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|scenario| {
            let request = &scenario["request"];
            let name = |key: &str| request[key].as_str().expect("name").to_owned();
            (name("serverName"), name("toolName"), request["arguments"].to_string())
        })
        .collect()
}

#[test]
fn the_scenarios_and_probes_are_decided_as_by_the_scan_of_every_rule() {
    let engine = engine();
    let scenarios = calls("test-scenarios.json");
    let probes = calls("probes.json");
    assert_eq!((scenarios.len(), probes.len()), (321, 1791));
    for (server, tool, args) in scenarios.iter().chain(&probes) {
        let args = Some(args.as_str());
        let reference = engine.evaluate_scanning_all(server, tool, args, true);
        assert_eq!(engine.evaluate(server, tool, args), reference, "{server}/{tool} {args:?}");
        let quiet = engine.evaluate_scanning_all(server, tool, args, false);
        assert_eq!(engine.evaluate_untraced(server, tool, args), quiet, "{server}/{tool} {args:?}");
    }
}
