//! `warden sandbox check`: what this machine supports, and each server's sandbox.

use std::process::ExitCode;

use crate::cli::SandboxCommand;

/// Runs a `sandbox` subcommand.
pub fn run(command: SandboxCommand) -> anyhow::Result<ExitCode> {
    let SandboxCommand::Check { config } = command;
    let config = config.map(|path| warden_config::load(&path)).transpose()?;
    let bwrap = config.as_ref().and_then(|config| config.sandbox.bwrap.clone());
    let support = warden_sandbox::check::Support::detect(bwrap.as_deref());
    print!("{}", support.report());
    if let Some(config) = &config {
        for name in config.servers.keys() {
            println!("server {name}: {}", describe(config, name));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One server's sandbox in one line: its settings, or why it has none.
pub fn describe(config: &warden_config::Config, name: &str) -> String {
    match config.sandbox_of(name) {
        None => "not sandboxed".into(),
        Some(sandbox) => match warden_sandbox::plan::Plan::resolve(name, &sandbox) {
            Ok(plan) => format!(
                "{}; state directory {}; runs as: {}",
                plan.describe(),
                plan.state_dir.display(),
                warden_sandbox::launch::expected(&plan)
            ),
            Err(err) => format!("invalid: {err}"),
        },
    }
}
