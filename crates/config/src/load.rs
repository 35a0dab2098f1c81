//! Reading a configuration file.

use std::path::Path;

use crate::env::expand;
use crate::error::ConfigError;
use crate::schema::{Config, PrefixMode, Transport};
use crate::validate::validate;

/// Reads, expands and validates the configuration at `path`.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
    let mut config = parse(path, &text, &|name| std::env::var(name).ok())?;
    config.source = Some(std::path::absolute(path).unwrap_or_else(|_| path.to_owned()));
    // Warden's own files, denied to every sandboxed server whatever its
    // `write` says.
    config.sandbox.protected = crate::own_files(&config);
    Ok(config)
}

/// Parses configuration text. `path` names the file in errors and chooses the
/// format: `.json` is JSON, anything else YAML. `lookup` reads environment
/// variables.
pub fn parse(path: &Path, text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
    let is_json = path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let parsed = if is_json {
        serde_json::from_str::<Config>(text)
            .map_err(|err| format!("line {}, column {}: {err}", err.line(), err.column()))
    } else {
        serde_saphyr::from_str::<Config>(text).map_err(|err| err.to_string())
    };
    let mut config = parsed.map_err(|message| ConfigError::Parse { path: path.into(), message })?;
    let mut problems = expand_transports(&mut config, lookup);
    problems.extend(validate(&config, text));
    apply_hub(&mut config);
    if problems.is_empty() { Ok(config) } else { Err(ConfigError::Invalid { path: path.into(), problems }) }
}

/// mcp2's `hub.prefixServerIDs` decides the prefix mode when it is given.
fn apply_hub(config: &mut Config) {
    match config.hub.prefix_server_ids {
        Some(true) => config.naming.prefix = PrefixMode::Always,
        Some(false) => config.naming.prefix = PrefixMode::Never,
        None => {}
    }
}

/// Expands `${VAR}` in every transport field; returns one problem per failure.
fn expand_transports(config: &mut Config, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, server) in &mut config.servers {
        let mut expand_in = |field: &str, value: &mut String| match expand(value, lookup) {
            Ok(expanded) => *value = expanded,
            Err(why) => problems.push(format!("servers.{name}.transport.{field}: {why}")),
        };
        match &mut server.transport {
            Transport::Stdio { command, args, env, cwd } => {
                expand_in("command", command);
                for arg in args.iter_mut() {
                    expand_in("args", arg);
                }
                for value in env.values_mut() {
                    expand_in("env", value);
                }
                if let Some(dir) = cwd
                    && let Some(text) = dir.to_str()
                {
                    let mut text = text.to_owned();
                    expand_in("cwd", &mut text);
                    *dir = text.into();
                }
            }
            Transport::Http { url, headers } | Transport::Sse { url, headers } => {
                expand_in("url", url);
                for value in headers.values_mut() {
                    expand_in("headers", value);
                }
            }
        }
    }
    for (index, token) in config.auth.tokens.iter_mut().enumerate() {
        match expand(&token.token, lookup) {
            Ok(expanded) => token.token = expanded,
            Err(why) => problems.push(format!("auth.tokens[{index}].token: {why}")),
        }
    }
    if let Some(approval) = config.approval.as_mut() {
        let fields = [
            ("token", approval.token.as_mut()),
            ("socket", approval.socket.as_mut()),
            ("listen", approval.listen.as_mut()),
            ("exchangeDir", approval.exchange_dir.as_mut()),
        ];
        for (field, value) in fields {
            let Some(value) = value else { continue };
            match expand(value, lookup) {
                Ok(expanded) => *value = expanded,
                Err(why) => problems.push(format!("approval.{field}: {why}")),
            }
        }
    }
    let tracing = &mut config.tracing;
    for (field, value) in tracing
        .otlp
        .iter_mut()
        .map(|url| ("otlp".to_owned(), url))
        .chain(tracing.headers.iter_mut().map(|(name, value)| (format!("headers.{name}"), value)))
    {
        match expand(value, lookup) {
            Ok(expanded) => *value = expanded,
            Err(why) => problems.push(format!("tracing.{field}: {why}")),
        }
    }
    if let Some(metrics) = config.metrics.as_mut() {
        for (field, value) in [("token", metrics.token.as_mut()), ("listen", metrics.listen.as_mut())] {
            let Some(value) = value else { continue };
            match expand(value, lookup) {
                Ok(expanded) => *value = expanded,
                Err(why) => problems.push(format!("metrics.{field}: {why}")),
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::PrefixMode;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn yaml_and_json_load_the_same_config() {
        let yaml = r#"
servers:
  files:
    displayName: Local Files
    transport:
      kind: stdio
      command: npx
      args: ["-y", "server", "${HOME_DIR:-/tmp}"]
      env: { API_TOKEN: "${TOKEN}" }
  db:
    transport: { kind: stdio, command: db-server }
naming: { separator: "-", prefix: multiple }
"#;
        let json = r#"{"servers":{"files":{"displayName":"Local Files","transport":{"kind":"stdio","command":"npx",
            "args":["-y","server","${HOME_DIR:-/tmp}"],"env":{"API_TOKEN":"${TOKEN}"}}},
            "db":{"transport":{"kind":"stdio","command":"db-server"}}},"naming":{"separator":"-","prefix":"multiple"}}"#;
        for (file, text) in [("w.yaml", yaml), ("w.json", json)] {
            let config = parse(Path::new(file), text, &env).unwrap();
            assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["files", "db"], "order kept");
            let Transport::Stdio { args, env, .. } = &config.servers["files"].transport else { panic!("stdio") };
            assert_eq!(args[2], "/tmp");
            assert_eq!(env["API_TOKEN"], "s3cret");
            assert_eq!(config.naming.prefix, PrefixMode::Multiple);
            assert_eq!(config.naming.max_length, 64);
        }
    }

    #[test]
    fn errors_name_the_place() {
        let err = parse(Path::new("w.yaml"), "servers:\n  a:\n    transport: {kind: stdio}\n", &env).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("w.yaml:") && text.contains("command") && text.contains("line 3"), "{text}");

        let err = parse(Path::new("w.json"), "{\"servers\": {\"a\": 3}}", &env).unwrap_err();
        assert!(err.to_string().contains("line 1, column"), "{err}");

        let err = parse(Path::new("w.yaml"), "servers:\n  a:\n    transport: {kind: ftp, command: x}\n", &env);
        assert!(err.unwrap_err().to_string().contains("ftp"));

        let err = parse(Path::new("w.yaml"), "servrs: {}\n", &env).unwrap_err();
        assert!(err.to_string().contains("servrs"), "{err}");
    }

    #[test]
    fn the_2025_era_is_spelled_legacy_in_the_configuration() {
        let text = "servers:\n  a:\n    transport: {kind: stdio, command: x}\n    protocol: legacy\n";
        let config = parse(Path::new("w.yaml"), text, &env).unwrap();
        assert_eq!(config.servers["a"].protocol, crate::ProtocolEra::Mcp2025);
        let schema = crate::json_schema().to_string();
        assert!(schema.contains("\"legacy\"") && !schema.contains("Mcp2025"), "{schema}");
    }

    #[test]
    fn unset_variables_are_errors() {
        let text = "servers:\n  a:\n    transport: {kind: stdio, command: \"${NOPE}\"}\n";
        let err = parse(Path::new("w.yaml"), text, &env).unwrap_err();
        assert_eq!(err.to_string(), "w.yaml: servers.a.transport.command: environment variable NOPE is not set");
    }
}
