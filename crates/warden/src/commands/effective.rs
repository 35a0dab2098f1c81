//! `warden effective`: what a profile shows and hides, item by item.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use serde_json::json;
use warden_config::{Config, Filter};
use warden_gateway::catalog::{InventoryItem, ItemKind};
use warden_pipeline::Hooks;
use warden_profiles::ProfileView;
use warden_sandbox::SandboxReport;

use crate::cli::EffectiveArgs;
use crate::commands::profiles::labelled;
use crate::local::LocalClient;

/// Connects to the servers (unless `--offline`) and explains each item.
pub async fn run(args: EffectiveArgs) -> anyhow::Result<ExitCode> {
    let config = Arc::new(warden_config::load(&args.target.config)?);
    let view = ProfileView::compile(&config, args.target.profile.as_deref())?;
    if let Some(server) = &args.server
        && !config.servers.contains_key(server)
    {
        bail!("no server named {server:?} in {}", args.target.config.display());
    }
    let servers: Vec<&String> =
        config.servers.keys().filter(|name| args.server.as_ref().is_none_or(|only| only == *name)).collect();
    if args.offline {
        print_rules(&config, &view, &servers);
        for server in servers.iter().filter(|server| config.sandbox_of(server).is_some()) {
            println!("\n{server} sandbox: {}", crate::commands::sandbox::describe(&config, server));
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Everything is listed; the profile is applied here, to explain each item.
    let client = LocalClient::start(config.clone(), Hooks::default(), SandboxReport::default()).await?;
    let items = client.session().inventory();
    let status = client.session().status();
    client.close().await;
    let mut explained: Vec<(&InventoryItem, warden_profiles::Decision)> =
        items.iter().map(|item| (item, view.explain(&item.server, item.kind, &item.key))).collect();
    lose_collisions(&mut explained);
    explained.retain(|(item, _)| servers.iter().any(|server| **server == item.server));
    if args.json {
        let rows: Vec<_> = explained
            .iter()
            .map(|(item, decision)| {
                let mut row = json!({
                    "server": item.server, "kind": kind_name(item.kind), "name": item.key,
                    "exposedAs": item.exposed, "visible": decision.visible, "reason": decision.reason,
                });
                if let Some(display_name) = config.servers.get(&item.server).and_then(|s| s.display_name.as_deref()) {
                    row["displayName"] = json!(display_name);
                }
                row
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json!({"profile": view.name(), "items": rows}))?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("profile: {}", view.name().unwrap_or("(none: everything is visible)"));
    for server in servers {
        let upstream = status.upstreams.iter().find(|u| u.name == **server);
        let state = upstream.map_or("unknown", |u| u.state.as_str());
        println!("\n{} ({state})", labelled(&config, server));
        if config.sandbox_of(server).is_some() {
            let running = upstream.and_then(|u| u.sandbox.as_deref()).unwrap_or("not started");
            println!("  sandbox: {}\n  running: {running}", crate::commands::sandbox::describe(&config, server));
        }
        for kind in ItemKind::ALL {
            let of_kind: Vec<_> =
                explained.iter().filter(|(item, _)| item.server == **server && item.kind == kind).collect();
            if of_kind.is_empty() {
                continue;
            }
            let shown = of_kind.iter().filter(|(_, d)| d.visible).count();
            println!("  {} ({shown} visible, {} hidden)", kind_name(kind), of_kind.len() - shown);
            for (item, decision) in of_kind {
                let (mark, name) = if decision.visible { ('+', &item.exposed) } else { ('-', &item.key) };
                println!("    {mark} {name}  ({})", decision.reason);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Marks hidden what the profile shows but a name collision takes away: an
/// item whose client-facing name an earlier server's shown item already has
/// (the gateway gives the name to the first one in the file). `explained`
/// is every server's, in file order, so `--server` still sees who wins.
fn lose_collisions(explained: &mut [(&InventoryItem, warden_profiles::Decision)]) {
    for at in 0..explained.len() {
        let (item, decision) = &explained[at];
        if !decision.visible {
            continue;
        }
        let winner = explained[..at].iter().find(|(earlier, shown)| {
            shown.visible
                && earlier.kind == item.kind
                && earlier.exposed == item.exposed
                && earlier.server != item.server
        });
        if let Some((winner, _)) = winner {
            let reason = format!("hidden by a name collision: {:?}'s has that name (first in the file)", winner.server);
            explained[at].1 = warden_profiles::Decision { visible: false, reason };
        }
    }
}

fn kind_name(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => "tools",
        ItemKind::Prompt => "prompts",
        ItemKind::Resource => "resources",
        ItemKind::Template => "resource templates",
    }
}

/// The profile's rules, per server, without starting anything.
fn print_rules(config: &Config, view: &ProfileView, servers: &[&String]) {
    let Some(name) = view.name() else {
        println!("no profiles: every tool, prompt and resource of every server is visible");
        return;
    };
    let profile = &config.profiles[name];
    println!("profile: {name}  {}", profile.description);
    for server in servers {
        match profile.servers.get(*server) {
            None => println!("\n{}: hidden entirely (not in profile {name:?})", labelled(config, server)),
            Some(filters) => {
                println!("\n{}:", labelled(config, server));
                for (label, filter) in
                    [("tools", &filters.tools), ("prompts", &filters.prompts), ("resources", &filters.resources)]
                {
                    println!("  {label:9}  {}", describe(filter));
                }
            }
        }
    }
}

fn describe(filter: &Filter) -> String {
    let allow = if filter.allow.is_empty() { "all".to_owned() } else { filter.allow.join(", ") };
    if filter.deny.is_empty() {
        format!("allow {allow}")
    } else {
        format!("allow {allow}; deny {}", filter.deny.join(", "))
    }
}
