//! `warden call`: one call through the same filtered hub the model sees.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::{Value, json};

use crate::cli::{CallArgs, CallTarget};
use crate::hooks;
use crate::local::LocalClient;

/// Makes the call, prints the result as JSON, and fails on an error result.
pub async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    let config = Arc::new(warden_config::load(&args.target.config)?);
    let audit = hooks::open_audit(&config)?;
    let hooks = hooks::for_profile(&config, args.target.profile.as_deref(), audit)?;
    let (method, params) = match &args.what {
        CallTarget::Tool { name, args } => ("tools/call", json!({"name": name, "arguments": parse_args(args)?})),
        CallTarget::Prompt { name, args } => ("prompts/get", json!({"name": name, "arguments": parse_args(args)?})),
        CallTarget::Resource { uri } => ("resources/read", json!({"uri": uri})),
    };
    let mut client = LocalClient::start(config, hooks).await?;
    let answer = client.request(method, params).await;
    client.close().await;
    let answer = answer?;
    if let Some(error) = answer.get("error") {
        eprintln!("warden: {method} failed: {}", error["message"].as_str().unwrap_or("unknown error"));
        println!("{}", serde_json::to_string_pretty(error)?);
        return Ok(ExitCode::FAILURE);
    }
    let result = &answer["result"];
    println!("{}", serde_json::to_string_pretty(result)?);
    Ok(if result["isError"] == json!(true) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn parse_args(text: &str) -> anyhow::Result<Value> {
    let value: Value = serde_json::from_str(text).with_context(|| format!("--args is not valid JSON: {text}"))?;
    anyhow::ensure!(value.is_object(), "--args must be a JSON object, not {value}");
    Ok(value)
}
