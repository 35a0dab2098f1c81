//! `warden call`: one call through the same filtered hub the model sees.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use indexmap::IndexMap;
use serde_json::{Value, json};

use warden_config::{Config, PrefixMode, ServerConfig, Transport};
use warden_pipeline::Hooks;
use warden_sandbox::SandboxReport;

use crate::cli::{CallArgs, CallTarget};
use crate::hooks;
use crate::local::LocalClient;

/// Makes the call, prints the result as JSON, and fails on an error result.
pub async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    let (config, hooks) = match (&args.url, &args.config) {
        (Some(url), _) => (Arc::new(remote(url, args.token.as_deref(), args.profile.as_deref())), Hooks::default()),
        (None, Some(path)) => {
            let config = Arc::new(warden_config::load(path)?);
            let audit = hooks::open_audit(&config)?;
            let hooks = hooks::for_profile(
                &config,
                args.profile.as_deref(),
                hooks::ProcessHooks { audit, ..Default::default() },
            )?;
            (config, hooks)
        }
        (None, None) => anyhow::bail!("give --config or --url"),
    };
    let (method, params) = match &args.what {
        CallTarget::Tool { name, args } => ("tools/call", json!({"name": name, "arguments": parse_args(args)?})),
        CallTarget::Prompt { name, args } => ("prompts/get", json!({"name": name, "arguments": parse_args(args)?})),
        CallTarget::Resource { uri } => ("resources/read", json!({"uri": uri})),
    };
    // As before: the sandboxes' refusals are logged, not audited.
    let mut client = LocalClient::start(config, hooks, SandboxReport::default()).await?;
    if let Some(url) = &args.url
        && let Some(remote) = client.session().status().upstreams.first().filter(|remote| remote.state != "ready")
    {
        let reason = remote.state.clone();
        client.close().await;
        anyhow::bail!("cannot use the Warden at {url}: {reason}");
    }
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

/// A configuration whose one server is the Warden at `url`, reached with
/// Warden's own HTTP upstream client; names pass through unchanged, and the
/// remote applies its own profile, policy and audit.
fn remote(url: &str, token: Option<&str>, profile: Option<&str>) -> Config {
    let mut headers = IndexMap::new();
    if let Some(token) = token {
        headers.insert("Authorization".to_owned(), format!("Bearer {token}"));
    }
    if let Some(profile) = profile {
        headers.insert("Warden-Profile".to_owned(), profile.to_owned());
    }
    let mut config = Config::default();
    config.servers.insert("remote".to_owned(), ServerConfig::new(Transport::Http { url: url.to_owned(), headers }));
    config.naming.prefix = PrefixMode::Never;
    // A command line should fail within seconds, not wait the default minute.
    config.supervision.start_timeout_ms = 15_000;
    config
}

fn parse_args(text: &str) -> anyhow::Result<Value> {
    let value: Value = serde_json::from_str(text).with_context(|| format!("--args is not valid JSON: {text}"))?;
    anyhow::ensure!(value.is_object(), "--args must be a JSON object, not {value}");
    Ok(value)
}
