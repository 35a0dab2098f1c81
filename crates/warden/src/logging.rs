//! Logs go to stderr or a file, never to stdout (stdout carries the protocol).

use std::fs::OpenOptions;
use std::io::IsTerminal;
use std::sync::Mutex;

use anyhow::Context;
use tracing_subscriber::EnvFilter;

use crate::cli::LogArgs;

/// Installs the global logger.
pub fn init(args: &LogArgs) -> anyhow::Result<()> {
    let filter =
        EnvFilter::try_new(&args.log_level).with_context(|| format!("invalid log filter {:?}", args.log_level))?;
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
