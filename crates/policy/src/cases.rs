//! Policy test tables: calls with the decision expected of each.
//!
//! Two forms are read, as YAML or JSON:
//! - Warden's: `cases: [{name?, profile?, server, tool, arguments?, expect:
//!   allow|deny|escalate, rule?}]` (or the list alone);
//! - IronCurtain's test scenarios: `{scenarios: [{description, request:
//!   {serverName, toolName, arguments}, expectedDecision, reasoning?}]}`,
//!   where `expectedDecision` may also be `not-allow` (deny or escalate).

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compile::PolicyEngine;
use crate::error::PolicyError;
use crate::verdict::Decision;

/// The outcome of a table of cases.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CaseReport {
    /// Cases that got what they expected.
    pub passed: usize,
    /// Cases that did not, in order.
    pub failures: Vec<CaseFailure>,
}

/// What a case expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expected {
    /// Exactly this decision.
    Decision(Decision),
    /// Anything but allow (IronCurtain's `not-allow`: deny or escalate).
    NotAllow,
}

impl Expected {
    /// Whether `decision` meets the expectation.
    pub fn met_by(self, decision: Decision) -> bool {
        match self {
            Expected::Decision(expected) => expected == decision,
            Expected::NotAllow => decision != Decision::Allow,
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Decision(decision) => decision.fmt(f),
            Expected::NotAllow => f.write_str("not-allow (deny or escalate)"),
        }
    }
}

/// A case whose decision (or deciding rule) was not the one expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseFailure {
    /// The case's name (its description, or `case N`).
    pub name: String,
    /// Its position in the file (1-based).
    pub number: usize,
    /// Why the case expects what it does (IronCurtain's `reasoning`).
    pub reasoning: Option<String>,
    /// The decision expected.
    pub expected: Expected,
    /// The decision taken.
    pub actual: Decision,
    /// The rule expected to decide, when the case names one.
    pub expected_rule: Option<String>,
    /// The rule that decided (with its position when its name is shared).
    pub rule: String,
    /// Its reason.
    pub reason: String,
}

/// Warden's form of a case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WardenCase {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    profile: Option<String>,
    server: String,
    tool: String,
    #[serde(default)]
    arguments: Option<Value>,
    expect: String,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
}

/// IronCurtain's test scenario (other fields are ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scenario {
    #[serde(default)]
    description: Option<String>,
    request: ScenarioRequest,
    expected_decision: String,
    #[serde(default)]
    reasoning: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScenarioRequest {
    server_name: String,
    tool_name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// One case, whichever form it came in.
struct Case {
    name: String,
    number: usize,
    reasoning: Option<String>,
    profile: Option<String>,
    server: String,
    tool: String,
    arguments: Option<String>,
    expect: Expected,
    rule: Option<String>,
}

/// Runs the cases of `cases_text` (YAML or JSON, either form), evaluating
/// each with the engine `engine_for` compiles for the case's profile (`None`:
/// the default). Engines are compiled once per profile. Errors: unreadable
/// cases, or an engine that does not compile.
pub fn run_cases(
    engine_for: &dyn Fn(Option<&str>) -> Result<PolicyEngine, PolicyError>,
    cases_text: &str,
) -> Result<CaseReport, PolicyError> {
    let cases = parse_cases(cases_text)?;
    let mut engines: HashMap<Option<String>, PolicyEngine> = HashMap::new();
    let mut report = CaseReport::default();
    for case in cases {
        if !engines.contains_key(&case.profile) {
            let engine = engine_for(case.profile.as_deref())?;
            engines.insert(case.profile.clone(), engine);
        }
        let Some(engine) = engines.get(&case.profile) else { continue };
        let evaluation = engine.evaluate(&case.server, &case.tool, case.arguments.as_deref());
        let rule_ok = case.rule.as_ref().is_none_or(|rule| *rule == evaluation.rule);
        if case.expect.met_by(evaluation.action) && rule_ok {
            report.passed += 1;
        } else {
            report.failures.push(CaseFailure {
                name: case.name,
                number: case.number,
                reasoning: case.reasoning,
                expected: case.expect,
                actual: evaluation.action,
                expected_rule: case.rule,
                rule: evaluation.label,
                reason: evaluation.reason,
            });
        }
    }
    Ok(report)
}

fn parse_cases(text: &str) -> Result<Vec<Case>, PolicyError> {
    let trimmed = text.trim_start();
    let document: Value = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        serde_json::from_str(text).map_err(|err| PolicyError::Cases(format!("invalid JSON: {err}")))?
    } else {
        serde_saphyr::from_str(text).map_err(|err| PolicyError::Cases(format!("invalid YAML: {err}")))?
    };
    let (form, list) = match document {
        Value::Array(list) => ("cases", list),
        Value::Object(mut map) => {
            if let Some(Value::Array(list)) = map.remove("cases") {
                ("cases", list)
            } else if let Some(Value::Array(list)) = map.remove("scenarios") {
                ("scenarios", list)
            } else {
                return Err(PolicyError::Cases("expected a `cases:` or `scenarios:` list".into()));
            }
        }
        _ => return Err(PolicyError::Cases("expected a `cases:` or `scenarios:` list".into())),
    };
    let mut cases = Vec::with_capacity(list.len());
    for (index, item) in list.into_iter().enumerate() {
        let number = index + 1;
        let case = if form == "cases" {
            let case: WardenCase =
                serde_json::from_value(item).map_err(|err| PolicyError::Cases(format!("case {number}: {err}")))?;
            let name = case.name.unwrap_or_else(|| format!("case {number}"));
            Case {
                expect: decision(&case.expect, &name)?,
                name,
                number,
                reasoning: case.reasoning,
                profile: case.profile,
                server: case.server,
                tool: case.tool,
                arguments: arguments_text(case.arguments),
                rule: case.rule,
            }
        } else {
            let scenario: Scenario =
                serde_json::from_value(item).map_err(|err| PolicyError::Cases(format!("scenario {number}: {err}")))?;
            let name = scenario.description.unwrap_or_else(|| format!("scenario {number}"));
            Case {
                expect: decision(&scenario.expected_decision, &name)?,
                name,
                number,
                reasoning: scenario.reasoning,
                profile: None,
                server: scenario.request.server_name,
                tool: scenario.request.tool_name,
                arguments: arguments_text(scenario.request.arguments),
                rule: None,
            }
        };
        cases.push(case);
    }
    Ok(cases)
}

/// `allow`, `deny`, `escalate` or `not-allow`.
fn decision(text: &str, name: &str) -> Result<Expected, PolicyError> {
    if text.trim().eq_ignore_ascii_case("not-allow") {
        return Ok(Expected::NotAllow);
    }
    text.parse()
        .map(Expected::Decision)
        .map_err(|why: String| PolicyError::Cases(format!("{name}: {why}, or not-allow (deny or escalate)")))
}

fn arguments_text(arguments: Option<Value>) -> Option<String> {
    arguments.map(|value| value.to_string())
}
