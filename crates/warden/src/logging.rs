//! Logs go to stderr or a file, never to stdout (stdout carries the protocol).

use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::sync::Mutex;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use crate::cli::LogArgs;

/// Installs the global logger.
pub fn init(args: &LogArgs, default_level: &str) -> anyhow::Result<()> {
    let level = args.log_level.as_deref().unwrap_or(default_level);
    let filter = EnvFilter::try_new(level).with_context(|| format!("invalid log filter {level:?}"))?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(false);
    match &args.log_file {
        Some(path) => {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open log file {}", path.display()))?;
            builder.with_ansi(false).with_writer(Mutex::new(file)).init();
        }
        None => builder.with_ansi(std::io::stderr().is_terminal()).with_writer(std::io::stderr).init(),
    }
    Ok(())
}
