//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Warden: one MCP endpoint in front of many MCP servers.
#[derive(Debug, Parser)]
#[command(name = "warden", version, about, long_about = None)]
pub struct Cli {
    /// Logging options (logs never go to stdout).
    #[command(flatten)]
    pub log: LogArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Where logs go.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Log filter, e.g. `info`, `warden=debug` (default: info).
    #[arg(long, global = true, env = "WARDEN_LOG", default_value = "info")]
    pub log_level: String,
    /// Append logs to this file instead of stderr.
    #[arg(long, global = true, env = "WARDEN_LOG_FILE")]
    pub log_file: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP on stdin/stdout, in front of the servers of a config file.
    #[command(
        after_help = "Example:\n  warden serve --config warden.yaml\n  claude mcp add warden -- warden serve --config /abs/warden.yaml"
    )]
    Serve(ServeArgs),
    /// Put Warden in front of one server given on the command line; tool names pass through unchanged.
    #[command(
        after_help = "Example:\n  warden wrap -- npx -y @modelcontextprotocol/server-filesystem ~/src\n  claude mcp add fs -- warden wrap -- npx -y @modelcontextprotocol/server-filesystem ~/src"
    )]
    Wrap(WrapArgs),
}

/// `warden serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The configuration file (YAML, or JSON if it ends in .json).
    #[arg(long, short, env = "WARDEN_CONFIG")]
    pub config: PathBuf,
}

/// `warden wrap`.
#[derive(Debug, Args)]
pub struct WrapArgs {
    /// A configuration file for everything but servers (naming, limits, supervision).
    #[arg(long, short)]
    pub config: Option<PathBuf>,
    /// The server's name in logs (default: the command's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// The server's command and its arguments, after `--`.
    #[arg(required = true, last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
