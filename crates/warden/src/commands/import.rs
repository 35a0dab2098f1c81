//! `warden import`: another gateway's configuration or policy, as a Warden config.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use warden_import::{Imported, IronCurtainInput, Source};

use crate::cli::{ImportArgs, ImportFormat, default_config};

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
    if args.merge {
        let target = args.output.clone().unwrap_or_else(merge_target);
        merge_into(&target, &imported, args.replace)?;
    } else {
        crate::output::write(args.output.as_deref(), &imported.to_yaml()?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The config `--merge` adds to without `-o`: the one the other commands read.
fn merge_target() -> PathBuf {
    std::env::var_os("WARDEN_CONFIG").filter(|path| !path.is_empty()).map_or_else(default_config, PathBuf::from)
}

/// Adds `imported` to the config at `target`, keeping the old file as
/// `<target>.bak`. The file is rewritten from the merged config, so its
/// comments and layout are not kept (the command says so).
fn merge_into(target: &Path, imported: &Imported, replace: bool) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(target).with_context(|| {
        format!("--merge: cannot read {} (leave out --merge to write a new config)", target.display())
    })?;
    let mine = warden_import::read_config(target, &text)?;
    let merged = warden_import::merge(mine, imported.config.clone(), replace)?;
    let json = target.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let backup = with_suffix(target, ".bak");
    let new_text = if json {
        format!("{}\n", serde_json::to_string_pretty(&merged.config)?)
    } else {
        let header = format!(
            "Warden config; `warden import --merge` added {}.\nThe file before it is {}.\n",
            imported.origin,
            backup.display()
        );
        format!("{}\n{}", comment(&header), warden_import::to_yaml(&merged.config)?)
    };
    std::fs::copy(target, &backup)
        .with_context(|| format!("cannot back up {} to {}", target.display(), backup.display()))?;
    // Renamed into place, so a running Warden never reads half a file.
    let partial = with_suffix(target, &format!(".merge-{}", std::process::id()));
    std::fs::write(&partial, new_text).with_context(|| format!("cannot write {}", partial.display()))?;
    let permissions = std::fs::metadata(target)?.permissions();
    std::fs::set_permissions(&partial, permissions)?;
    std::fs::rename(&partial, target).with_context(|| format!("cannot replace {}", target.display()))?;
    eprintln!("merged {} into {}:", imported.origin, target.display());
    for note in &merged.notes {
        eprintln!("  - {note}");
    }
    eprintln!(
        "note: {} was rewritten from its settings: its comments and layout are not kept; the previous file is {}",
        target.display(),
        backup.display()
    );
    Ok(())
}

/// `path` with `suffix` added to its file name (`warden.yaml.bak`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    path.with_file_name(name)
}

/// `# ` before every line of `text`.
fn comment(text: &str) -> String {
    text.lines().map(|line| format!("# {line}\n")).collect()
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
