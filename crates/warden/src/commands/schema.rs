//! `warden schema`: the config file's JSON Schema.

use std::process::ExitCode;

/// Prints the schema.
pub fn run() -> anyhow::Result<ExitCode> {
    println!("{}", serde_json::to_string_pretty(&warden_config::json_schema())?);
    Ok(ExitCode::SUCCESS)
}
