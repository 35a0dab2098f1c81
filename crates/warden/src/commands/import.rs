//! `warden import`: another gateway's configuration, as a Warden config.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use warden_import::Source;

use crate::cli::{ImportArgs, ImportFormat};

/// Reads the files, converts them and writes YAML; warnings go to stderr.
pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let source = match args.format {
        ImportFormat::Mcpmon => Source::Mcpmon,
        ImportFormat::Mcp2 => Source::Mcp2,
        ImportFormat::Mcptools => Source::Mcptools,
    };
    let mut files = Vec::new();
    for arg in &args.files {
        // mcptools inventories may be named `SERVER=FILE`.
        let (_, path) = warden_import::split_name(arg);
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
        files.push((PathBuf::from(arg), text));
    }
    let imported = warden_import::import(source, &files)?;
    for warning in &imported.warnings {
        eprintln!("warning: {warning}");
    }
    let yaml = imported.to_yaml()?;
    crate::output::write(args.output.as_deref(), &yaml)?;
    Ok(ExitCode::SUCCESS)
}
