//! End to end: IronCurtain's own generated policy (provos/ironcurtain at
//! c0aeff9d, vendored with its licence under
//! crates/import/tests/data/ironcurtain-c0aeff9d) goes through
//! `warden import ironcurtain` and `warden policy test` (the real binary),
//! and Warden decides each of IronCurtain's 321 test scenarios as
//! IronCurtain's own engine does (its decisions, recorded by running that
//! engine, are in `ironcurtain-decisions.json` there), and 1,791 calls
//! beyond them as well (`probes.json`).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::{scratch_dir, warden_bin};

/// The home directory the scenarios' paths assume (`~/Downloads` in the
/// rules is `/home/provos/Downloads`); it need not exist.
const HOME: &str = "/home/provos";
const SANDBOX: &str = "/home/provos/.ironcurtain/sandbox";
const PROTECTED: &str = "/home/provos/.ironcurtain";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/data/ironcurtain-c0aeff9d").join(name)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn warden(args: &[&str]) -> Output {
    Command::new(warden_bin()).args(args).env("HOME", HOME).stdin(Stdio::null()).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `warden import ironcurtain` on the vendored files, with the sandbox and
/// protected path the scenarios assume; returns the config's path.
fn import(dir: &Path) -> String {
    let config = dir.join("warden.yaml");
    let output = warden(&[
        "import",
        "ironcurtain",
        data("compiled-policy.json").to_str().unwrap(),
        data("tool-annotations.json").to_str().unwrap(),
        "--lists",
        data("dynamic-lists.json").to_str().unwrap(),
        "--sandbox",
        SANDBOX,
        "--protected-path",
        PROTECTED,
        "-o",
        config.to_str().unwrap(),
    ]);
    let warnings = stderr(&output);
    assert!(output.status.success(), "{warnings}");
    // Where IronCurtain is less safe, Warden keeps the safe choice and says so.
    for difference in ["(invalid-path)", "a protected path inside the sandbox stays protected", ".git/config"] {
        assert!(warnings.contains(difference), "{difference} missing from {warnings}");
    }
    assert!(!warnings.contains("several paths"), "each path is decided on its own, as in IronCurtain: {warnings}");
    let validated = warden(&["validate", "--config", config.to_str().unwrap()]);
    assert!(validated.status.success(), "{}{}", stdout(&validated), stderr(&validated));
    config.to_str().unwrap().to_owned()
}

/// The scenarios, and IronCurtain's decision and rule for each, in order.
fn scenarios_and_decisions() -> (Value, Vec<(String, String)>) {
    let scenarios = read_json(&data("test-scenarios.json"));
    let decisions = read_json(&data("ironcurtain-decisions.json"));
    let list = scenarios["scenarios"].as_array().unwrap();
    let decided = decisions["decisions"].as_array().unwrap();
    assert_eq!(list.len(), 321);
    assert_eq!(decided.len(), list.len());
    let pairs = list
        .iter()
        .zip(decided)
        .map(|(scenario, decision)| {
            assert_eq!(scenario["description"], decision["description"]);
            (decision["decision"].as_str().unwrap().to_owned(), decision["rule"].as_str().unwrap().to_owned())
        })
        .collect();
    (scenarios, pairs)
}

/// Whether IronCurtain's own decision meets the scenario's expectation.
fn meets(expected: &str, decision: &str) -> bool {
    if expected == "not-allow" { decision != "allow" } else { expected == decision }
}

fn policy_test(config: &str, cases: &Path) -> (bool, String) {
    let output = warden(&["policy", "test", "--config", config, cases.to_str().unwrap()]);
    (output.status.success(), stdout(&output) + &stderr(&output))
}

#[test]
fn every_scenario_is_decided_as_ironcurtain_decides_it() {
    let dir = scratch_dir("ironcurtain-decisions");
    let config = import(&dir);
    let (mut scenarios, decisions) = scenarios_and_decisions();

    // IronCurtain's file as it is: the scenarios IronCurtain's own engine
    // meets pass, and exactly the others fail, each named.
    let (ok, report) = policy_test(&config, &data("test-scenarios.json"));
    let list = scenarios["scenarios"].as_array().unwrap().clone();
    let missed: Vec<usize> = list
        .iter()
        .zip(&decisions)
        .enumerate()
        .filter(|(_, (scenario, (decision, _)))| !meets(scenario["expectedDecision"].as_str().unwrap(), decision))
        .map(|(index, _)| index + 1)
        .collect();
    assert_eq!(missed.len(), 158, "IronCurtain's own engine misses 158 of its stale expectations");
    assert!(!ok);
    assert!(report.contains(&format!("{} passed, {} failed", 321 - missed.len(), missed.len())), "{report}");
    let failed: Vec<usize> = report
        .lines()
        .filter_map(|line| line.trim().strip_prefix("case #"))
        .map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(failed, missed, "{report}");

    // Every scenario with IronCurtain's own decision as the expectation.
    for (scenario, (decision, _)) in scenarios["scenarios"].as_array_mut().unwrap().iter_mut().zip(&decisions) {
        scenario["expectedDecision"] = json!(decision);
    }
    let as_decided = dir.join("as-ironcurtain-decides.json");
    std::fs::write(&as_decided, scenarios.to_string()).unwrap();
    let (ok, report) = policy_test(&config, &as_decided);
    assert!(ok && report.contains("321 passed, 0 failed"), "{report}");

    // And by the same rule: Warden's names for IronCurtain's default and
    // its sandbox containment differ.
    let cases: Vec<Value> = list
        .iter()
        .zip(&decisions)
        .map(|(scenario, (decision, rule))| {
            let request = &scenario["request"];
            let mut case = json!({
                "name": scenario["description"],
                "server": request["serverName"],
                "tool": request["toolName"],
                "arguments": request["arguments"],
                "expect": decision,
            });
            if rule != "structural-sandbox-allow" {
                case["rule"] = json!(if rule == "default-deny" { "default" } else { rule.as_str() });
            }
            // Warden protects ~/.ssh out of the box (IronCurtain does not):
            // the same refusal, decided first by the built-in protected path.
            if decision == "deny" && request["arguments"].to_string().contains("/.ssh") {
                case["rule"] = json!("protected-path");
            }
            case
        })
        .collect();
    let by_rule = dir.join("by-rule.json");
    std::fs::write(&by_rule, json!({ "cases": cases }).to_string()).unwrap();
    let (ok, report) = policy_test(&config, &by_rule);
    assert!(ok && report.contains("321 passed, 0 failed"), "{report}");
}

#[test]
fn calls_beyond_the_scenarios_are_decided_as_ironcurtain_decides_them() {
    // probes.json: the scenarios' calls varied (paths, URLs, absent
    // arguments, ...), each expecting IronCurtain's own decision.
    let dir = scratch_dir("ironcurtain-probes");
    let config = import(&dir);
    let probes = read_json(&data("probes.json"));
    let count = probes["scenarios"].as_array().unwrap().len();
    assert_eq!(count, 1791);
    let (ok, report) = policy_test(&config, &data("probes.json"));
    assert!(ok && report.contains(&format!("{count} passed, 0 failed")), "{report}");
}

#[test]
fn a_wrong_expectation_is_reported_with_its_description_and_reasoning() {
    let dir = scratch_dir("ironcurtain-mismatch");
    let config = import(&dir);
    let (scenarios, decisions) = scenarios_and_decisions();
    // The first scenario: a move out of /etc, which IronCurtain escalates.
    let mut scenario = scenarios["scenarios"][0].clone();
    assert_eq!(decisions[0].0, "escalate");
    let description = scenario["description"].as_str().unwrap().to_owned();
    let reasoning = scenario["reasoning"].as_str().unwrap().to_owned();
    scenario["expectedDecision"] = json!("allow");
    let mut kept = scenarios["scenarios"][1].clone();
    kept["expectedDecision"] = json!(decisions[1].0);
    let cases = dir.join("wrong.json");
    std::fs::write(&cases, json!({ "scenarios": [scenario, kept] }).to_string()).unwrap();
    let (ok, report) = policy_test(&config, &cases);
    assert!(!ok, "{report}");
    assert!(
        report.contains(&format!(
            "FAIL {description}: expected allow, got escalate by escalate-move-with-delete-outside-permitted"
        )),
        "{report}"
    );
    assert!(report.contains(&format!("case #1, expected because: {reasoning}")), "{report}");
    assert!(report.contains("1 passed, 1 failed"), "{report}");
}
