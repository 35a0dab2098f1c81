//! `warden policy`: test a policy against a table of calls, or explain one.

use std::process::ExitCode;

use anyhow::Context;
use warden_policy::PolicyEngine;

use crate::cli::PolicyCommand;

/// Tests or explains.
pub fn run(command: PolicyCommand) -> anyhow::Result<ExitCode> {
    match command {
        PolicyCommand::Test { target, cases } => {
            let config = warden_config::load(&target.config)?;
            let text = std::fs::read_to_string(&cases).with_context(|| format!("cannot read {}", cases.display()))?;
            let default_profile = target.profile.clone();
            let engine_for =
                |profile: Option<&str>| PolicyEngine::compile(&config, profile.or(default_profile.as_deref()));
            let report = warden_policy::run_cases(&engine_for, &text)?;
            for failure in &report.failures {
                let expected_rule =
                    failure.expected_rule.as_ref().map(|rule| format!(" by {rule}")).unwrap_or_default();
                println!(
                    "FAIL {}: expected {}{expected_rule}, got {} by {} ({})",
                    failure.name, failure.expected, failure.actual, failure.rule, failure.reason
                );
                if let Some(reasoning) = failure.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                    println!("  case #{}, expected because: {reasoning}", failure.number);
                } else {
                    println!("  case #{}", failure.number);
                }
            }
            println!("{} passed, {} failed", report.passed, report.failures.len());
            Ok(if report.failures.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        PolicyCommand::Explain { target, server, tool, args } => {
            let config = warden_config::load(&target.config)?;
            let engine = PolicyEngine::compile(&config, target.profile.as_deref())?;
            let evaluation = engine.evaluate(&server, &tool, Some(&args));
            match evaluation.position {
                Some(position) => {
                    println!("{}: {} by {} (rule #{position})", tool, evaluation.action, evaluation.rule)
                }
                None => println!("{}: {} by {}", tool, evaluation.action, evaluation.rule),
            }
            if !evaluation.reason.is_empty() {
                println!("reason: {}", evaluation.reason);
            }
            for step in &evaluation.trace {
                println!("  - {step}");
            }
            for logged in &evaluation.logged {
                println!("  logged by {logged}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
