//! `warden import`: another gateway's configuration or policy, as a Warden config.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use warden_import::{Imported, IronCurtainInput, Source};

use crate::cli::{ImportArgs, ImportFormat};

/// Reads the files, converts them and writes YAML; warnings go to stderr.
pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let ironcurtain_only = args.sandbox.is_some()
        || !args.protected_paths.is_empty()
        || !args.allowed_domains.is_empty()
        || !args.trusted_servers.is_empty()
        || args.lists.is_some();
    if ironcurtain_only && !matches!(args.format, ImportFormat::Ironcurtain) {
        bail!(
            "--sandbox, --protected-path, --allowed-domains, --trusted-server and --lists are for `import ironcurtain`"
        );
    }
    let imported = match args.format {
        ImportFormat::Mcpmon => config_import(Source::Mcpmon, &args.files)?,
        ImportFormat::Mcp2 => config_import(Source::Mcp2, &args.files)?,
        ImportFormat::Mcptools => config_import(Source::Mcptools, &args.files)?,
        ImportFormat::Sentinel => {
            let [file] = args.files.as_slice() else { bail!("import sentinel takes one policy file") };
            warden_import::import_sentinel(std::path::Path::new(file), &read(file)?)?
        }
        ImportFormat::IroncurtainServers => {
            let [file] = args.files.as_slice() else { bail!("import ironcurtain-servers takes one mcp-servers.json") };
            let mode = match args.sandbox_policy.as_deref() {
                None | Some("warn") => warden_config::SandboxMode::Warn,
                Some("enforce") => warden_config::SandboxMode::Enforce,
                Some(other) => bail!("--sandbox-policy {other:?}: expected enforce or warn"),
            };
            warden_import::import_ironcurtain_servers(std::path::Path::new(file), &read(file)?, mode)?
        }
        ImportFormat::Ironcurtain => {
            let [policy, more @ .., annotations] = args.files.as_slice() else {
                bail!("import ironcurtain takes COMPILED_POLICY.json... TOOL_ANNOTATIONS.json")
            };
            let allowed_domains = args
                .allowed_domains
                .iter()
                .map(|arg| warden_import::parse_allowed_domains(arg))
                .collect::<Result<_, _>>()?;
            let dynamic_lists = match &args.lists {
                Some(path) => Some((path.clone(), read(&path.to_string_lossy())?)),
                None => None,
            };
            warden_import::import_ironcurtain(IronCurtainInput {
                compiled_policy: (PathBuf::from(policy), read(policy)?),
                more_compiled_policies: more
                    .iter()
                    .map(|path| Ok((PathBuf::from(path), read(path)?)))
                    .collect::<anyhow::Result<_>>()?,
                tool_annotations: (PathBuf::from(annotations), read(annotations)?),
                sandbox: args.sandbox.clone(),
                protected_paths: args.protected_paths.clone(),
                allowed_domains,
                trusted_servers: args.trusted_servers.clone(),
                dynamic_lists,
            })?
        }
    };
    for warning in &imported.warnings {
        eprintln!("warning: {warning}");
    }
    crate::output::write(args.output.as_deref(), &imported.to_yaml()?)?;
    Ok(ExitCode::SUCCESS)
}

/// Configs of other gateways: every file, `SERVER=FILE` allowed for mcptools.
fn config_import(source: Source, files: &[String]) -> anyhow::Result<Imported> {
    let mut read_files = Vec::new();
    for arg in files {
        let (_, path) = warden_import::split_name(arg);
        read_files.push((PathBuf::from(arg), read(path)?));
    }
    Ok(warden_import::import(source, &read_files)?)
}

fn read(path: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))
}
