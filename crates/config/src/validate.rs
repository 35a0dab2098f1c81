//! Rules the schema alone cannot express. Every problem is reported, with the
//! line and column of the key it concerns when it can be found.

use std::collections::HashMap;

use crate::locate::locate;
use crate::schema::{Config, PrefixMode, Transport};

/// Characters every major client accepts in a tool name.
fn is_client_safe(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether a glob has no wildcard, so it names exactly one thing.
fn is_literal(pattern: &str) -> bool {
    !pattern.contains(['*', '?', '[', '{'])
}

struct Problems<'a> {
    text: &'a str,
    list: Vec<String>,
}

impl Problems<'_> {
    fn at(&mut self, path: &[&str], message: String) {
        match locate(self.text, path) {
            Some((line, column)) => self.list.push(format!("line {line}, column {column}: {message}")),
            None => self.list.push(message),
        }
    }
}

/// Returns every problem found, one sentence each. `text` is the file, for
/// positions.
pub(crate) fn validate(config: &Config, text: &str) -> Vec<String> {
    let mut problems = Problems { text, list: Vec::new() };
    for (name, server) in &config.servers {
        if !is_client_safe(name) {
            problems.at(
                &["servers", name],
                format!("server name {name:?} must use only letters, digits, '_' and '-' (it prefixes tool names)"),
            );
        }
        match &server.transport {
            Transport::Stdio { command, .. } if command.trim().is_empty() => {
                problems
                    .at(&["servers", name, "command"], format!("servers.{name}: a stdio transport needs a command"));
            }
            Transport::Http { url, .. } | Transport::Sse { url, .. }
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                problems.at(
                    &["servers", name, "url"],
                    format!("servers.{name}: an http or sse transport needs an http:// or https:// url, not {url:?}"),
                );
            }
            _ => {}
        }
        if server.sandbox.is_some() && !matches!(server.transport, Transport::Stdio { .. }) {
            problems.at(
                &["servers", name, "sandbox"],
                format!("servers.{name}: only stdio servers run in a sandbox (Warden starts their process)"),
            );
        }
    }
    let naming = &config.naming;
    if naming.separator.is_empty() {
        problems.at(&["naming", "separator"], "naming.separator must not be empty".into());
    }
    if naming.max_length < 16 {
        problems
            .at(&["naming", "maxLength"], format!("naming.maxLength must be at least 16, not {}", naming.max_length));
    }
    if config.limits.max_message_bytes < 1024 {
        problems.at(&["limits", "maxMessageBytes"], "limits.maxMessageBytes must be at least 1024".into());
    }
    let sup = &config.supervision;
    if sup.backoff_initial_ms == 0 || sup.backoff_max_ms < sup.backoff_initial_ms {
        problems.at(&["supervision"], "supervision: backoffInitialMs must be positive and at most backoffMaxMs".into());
    }
    validate_profiles(config, &mut problems);
    validate_auth(config, &mut problems);
    problems.list
}

fn validate_auth(config: &Config, problems: &mut Problems<'_>) {
    let mut seen = HashMap::new();
    for (index, token) in config.auth.tokens.iter().enumerate() {
        let who = &token.name;
        if token.token.len() < 16 {
            problems.at(
                &["auth", "tokens"],
                format!("auth.tokens[{index}] ({who}): a token must be at least 16 characters long"),
            );
        }
        if let Some(other) = seen.insert(token.token.as_str(), who) {
            problems.at(&["auth", "tokens"], format!("auth.tokens: {other:?} and {who:?} have the same token"));
        }
        for profile in &token.profiles {
            if !config.profiles.contains_key(profile) {
                problems.at(
                    &["auth", "tokens"],
                    format!(
                        "auth.tokens[{index}] ({who}) allows profile {profile:?}, which is not defined (profiles: {})",
                        names(config.profiles.keys())
                    ),
                );
            }
        }
    }
    if config.http.session_idle_secs == 0 || config.http.keep_alive_secs == 0 || config.http.max_sessions == 0 {
        problems.at(&["http"], "http: sessionIdleSecs, keepAliveSecs and maxSessions must be positive".into());
    }
}

fn validate_profiles(config: &Config, problems: &mut Problems<'_>) {
    match &config.default_profile {
        Some(default) if !config.profiles.contains_key(default) => problems.at(
            &["defaultProfile"],
            format!("defaultProfile {default:?} is not a profile (profiles: {})", names(config.profiles.keys())),
        ),
        None if !config.profiles.is_empty() => {
            problems.at(&["profiles"], "profiles are defined but defaultProfile is missing".into())
        }
        _ => {}
    }
    let prefix = match config.hub.prefix_server_ids {
        Some(true) => PrefixMode::Always,
        Some(false) => PrefixMode::Never,
        None => config.naming.prefix,
    };
    let unprefixed = prefix == PrefixMode::Never || (prefix == PrefixMode::Multiple && config.servers.len() < 2);
    for (profile_name, profile) in &config.profiles {
        let mut literal_tools: HashMap<&str, &str> = HashMap::new();
        for (server, filters) in &profile.servers {
            if !config.servers.contains_key(server) {
                problems.at(
                    &["profiles", profile_name, "servers", server],
                    format!(
                        "profile {profile_name:?} names server {server:?}, which is not configured (servers: {})",
                        names(config.servers.keys())
                    ),
                );
            }
            if !unprefixed {
                continue;
            }
            for tool in filters.tools.allow.iter().filter(|tool| is_literal(tool)) {
                if let Some(other) = literal_tools.insert(tool, server)
                    && other != server
                {
                    problems.at(
                        &["profiles", profile_name, "servers", server, "tools"],
                        format!(
                            "profile {profile_name:?}: tool {tool:?} is allowed on both {other:?} and {server:?}, but names are not prefixed (hub.prefixServerIDs / naming.prefix), so they would collide"
                        ),
                    );
                }
            }
        }
    }
}

fn names<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&str> = keys.map(String::as_str).collect();
    if all.is_empty() { "none".into() } else { all.join(", ") }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn problems(text: &str) -> Vec<String> {
        match crate::parse(Path::new("c.yaml"), text, &|_| None) {
            Err(crate::ConfigError::Invalid { problems, .. }) => problems,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn reports_every_problem() {
        let text = "servers:\n  'bad:name':\n    transport: {kind: stdio, command: ' '}\nnaming: {separator: '', maxLength: 8}\n";
        assert_eq!(problems(text).len(), 4, "{:?}", problems(text));
    }

    #[test]
    fn profile_problems_name_their_place() {
        let text = "\
servers:
  fs:
    transport: {kind: stdio, command: fs}
  web:
    transport: {kind: http, url: ftp://x}
defaultProfile: missing
hub: {prefixServerIDs: false}
profiles:
  safe:
    servers:
      fs:
        tools: {allow: [read_file]}
      web:
        tools: {allow: [read_file]}
      nowhere: {}
";
        let found = problems(text);
        assert_eq!(found.len(), 4, "{found:#?}");
        assert!(found[0].starts_with("line 5, column") && found[0].contains("http:// or https://"), "{}", found[0]);
        assert!(found[1].starts_with("line 6, column 1: defaultProfile \"missing\""), "{}", found[1]);
        assert!(found.iter().any(|p| p.contains("would collide")), "{found:?}");
        assert!(found.iter().any(|p| p.starts_with("line 15, column 7") && p.contains("\"nowhere\"")), "{found:?}");
    }

    #[test]
    fn profiles_need_a_default() {
        let text = "servers: {}\nprofiles:\n  dev: {}\n";
        assert_eq!(problems(text), ["line 2, column 1: profiles are defined but defaultProfile is missing"]);
    }
}
