//! `warden pins`: what is pinned, what changed, and accepting changes.

use std::process::ExitCode;

use warden_config::Config;
use warden_pins::PinStore;

use crate::cli::PinsCommand;

/// Lists or accepts.
pub fn run(command: PinsCommand) -> anyhow::Result<ExitCode> {
    match command {
        PinsCommand::List(args) => {
            let store = store(&warden_config::load(&args.config)?);
            println!("pins: {}", store.path().display());
            for (server, count) in store.pinned()? {
                println!("  {server}: {count} tool(s) pinned");
            }
            let pending = store.pending()?;
            if pending.is_empty() {
                println!("no changed definitions");
            }
            for change in pending {
                println!("\nchanged: {}/{}\n{}", change.server, change.tool, change.diff());
            }
            Ok(ExitCode::SUCCESS)
        }
        PinsCommand::Accept { config, server, tool } => {
            let store = store(&warden_config::load(&config.config)?);
            let accepted = store.accept(server.as_deref(), tool.as_deref())?;
            if accepted.is_empty() {
                println!("nothing to accept");
            }
            for change in accepted {
                println!("accepted {}/{}:\n{}", change.server, change.tool, change.diff());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The pin store a config names (whatever its mode).
pub fn store(config: &Config) -> PinStore {
    let dir =
        config.pins.state_dir.as_ref().map(std::path::PathBuf::from).unwrap_or_else(warden_pins::default_state_dir);
    PinStore::new(&dir, config.pins.mode)
}
