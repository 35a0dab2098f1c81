//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod ironcurtain;

use warden_config::{Config, Transport};
use warden_import::Imported;

/// The path of a file under `tests/data`.
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// A data file as the CLI passes it: its path and its text.
pub fn file(rel: &str) -> (PathBuf, String) {
    let path = data(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    (path, text)
}

/// A data file given as `NAME=FILE`.
pub fn named(name: &str, rel: &str) -> (PathBuf, String) {
    let (path, text) = file(rel);
    (PathBuf::from(format!("{name}={}", path.display())), text)
}

/// Text under a made-up path (the importers never read the disk).
pub fn text(path: &str, text: &str) -> (PathBuf, String) {
    (PathBuf::from(path), text.to_owned())
}

/// `${VAR}` stands for itself, so references survive loading unchanged.
pub fn keep_variables(name: &str) -> Option<String> {
    Some(format!("${{{name}}}"))
}

/// Loads YAML with Warden's own loader.
pub fn load(yaml: &str) -> Config {
    warden_config::parse(Path::new("imported.yaml"), yaml, &keep_variables)
        .unwrap_or_else(|err| panic!("{err}\n---\n{yaml}"))
}

/// `config` as Warden's loader returns it: `${VAR}` expanded (with
/// [`keep_variables`], so only defaults and `$$` escapes change) in every
/// transport field.
pub fn expanded(config: &Config) -> Config {
    let mut config = config.clone();
    let expand = |text: &mut String| *text = warden_config::expand(text, &keep_variables).unwrap();
    for server in config.servers.values_mut() {
        match &mut server.transport {
            Transport::Stdio { command, args, env, cwd } => {
                expand(command);
                args.iter_mut().for_each(expand);
                env.values_mut().for_each(expand);
                if let Some(dir) = cwd {
                    let mut text = dir.to_string_lossy().into_owned();
                    expand(&mut text);
                    *dir = text.into();
                }
            }
            Transport::Http { url, headers } | Transport::Sse { url, headers } => {
                expand(url);
                headers.values_mut().for_each(expand);
            }
        }
    }
    config
}

/// Whether two configs are the same, key order included (`Config` has no
/// `PartialEq`; its serialization covers every field).
pub fn same(a: &Config, b: &Config) -> bool {
    let (a, b) = (serde_json::to_string(a).unwrap(), serde_json::to_string(b).unwrap());
    if a != b {
        eprintln!("loaded:   {a}\nexpected: {b}");
    }
    a == b
}

/// The warning containing every one of `needles`.
pub fn warning<'a>(imported: &'a Imported, needles: &[&str]) -> &'a str {
    imported
        .warnings
        .iter()
        .find(|warning| needles.iter().all(|needle| warning.contains(needle)))
        .unwrap_or_else(|| panic!("no warning with {needles:?} in {:#?}", imported.warnings))
}
