//! Rules the schema alone cannot express. Every problem is reported, with the
//! line and column of the key it concerns when it can be found.

use std::collections::HashMap;

use crate::locate::locate;
use crate::schema::{Config, PrefixMode, Transport};
use crate::watch::Watch;

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
        if let Some(watch) = &server.watch {
            validate_watch(name, watch, &mut problems);
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
    if sup.list_wait_ms == 0 {
        problems.at(&["supervision", "listWaitMs"], "supervision.listWaitMs must be positive".into());
    }
    validate_profiles(config, &mut problems);
    validate_token_limits(config, &mut problems);
    validate_auth(config, &mut problems);
    validate_approval(config, &mut problems);
    validate_metrics(config, &mut problems);
    validate_tracing(config, &mut problems);
    problems.list
}

fn validate_watch(name: &str, watch: &Watch, problems: &mut Problems<'_>) {
    let at = ["servers", name, "watch"];
    if watch.paths.is_empty() || watch.paths.iter().any(|path| path.trim().is_empty()) {
        problems.at(&at, format!("servers.{name}.watch.paths must name at least one file, directory or glob"));
    }
    for pattern in watch.paths.iter().chain(&watch.ignore) {
        if let Err(err) = globset::Glob::new(pattern) {
            problems.at(&at, format!("servers.{name}.watch: {pattern:?} is not a valid glob: {err}"));
        }
    }
    if watch.debounce_ms == 0 {
        problems.at(&at, format!("servers.{name}.watch.debounceMs must be positive"));
    }
}

/// Approval settings that only make sense together.
fn validate_approval(config: &Config, problems: &mut Problems<'_>) {
    use crate::policy::Action;
    let auto_approver = config.approval.as_ref().is_some_and(|approval| approval.auto_approver.is_some());
    for (index, rule) in config.policy.rules.iter().enumerate() {
        let at = format!("policy.rules[{index}] ({:?})", rule.name);
        if rule.action != Action::Escalate && (rule.timeout_secs.is_some() || rule.auto_approve) {
            problems
                .at(&["rules", &rule.name], format!("{at}: timeoutSecs and autoApprove apply to escalate rules only"));
        }
        if rule.timeout_secs == Some(0) {
            problems.at(&["rules", &rule.name], format!("{at}: timeoutSecs must be at least 1"));
        }
        if rule.auto_approve && !auto_approver {
            problems.at(
                &["rules", &rule.name],
                format!("{at}: autoApprove needs approval.autoApprover (the model that may approve)"),
            );
        }
    }
    if let Some(approval) = &config.approval {
        if approval.timeout_secs == 0 {
            problems.at(&["approval", "timeoutSecs"], "approval.timeoutSecs must be at least 1".into());
        }
        if approval.token.as_ref().is_some_and(|token| token.len() < 16) {
            problems.at(&["approval", "token"], "approval.token must have at least 16 characters".into());
        }
        if approval.auto_approver.as_ref().is_some_and(|auto| auto.model().is_none()) {
            problems.at(
                &["approval", "autoApprover"],
                "approval.autoApprover.model is needed with api: openai (an OpenAI-compatible server has no default model)"
                    .into(),
            );
        }
    }
}

fn validate_metrics(config: &Config, problems: &mut Problems<'_>) {
    let Some(metrics) = &config.metrics else { return };
    match &metrics.token {
        Some(token) if token.len() < 16 => {
            problems.at(&["metrics", "token"], "metrics.token must have at least 16 characters".into())
        }
        None if !metrics.open => problems.at(
            &["metrics"],
            "metrics needs a token (metrics.token: ${WARDEN_METRICS_TOKEN}) or `open: true` to be served without one"
                .into(),
        ),
        _ => {}
    }
    if let Some(listen) = &metrics.listen
        && listen.parse::<u16>().is_err()
        && listen.parse::<std::net::SocketAddr>().is_err()
    {
        problems.at(&["metrics", "listen"], format!("metrics.listen {listen:?}: expected PORT or IP:PORT"));
    }
}

fn validate_tracing(config: &Config, problems: &mut Problems<'_>) {
    let tracing = &config.tracing;
    if let Some(url) = &tracing.otlp
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        problems.at(&["tracing", "otlp"], format!("tracing.otlp {url:?}: expected an http:// or https:// URL"));
    }
    if tracing.sample_ratio.is_some_and(|ratio| !(0.0..=1.0).contains(&ratio)) {
        problems.at(&["tracing", "sampleRatio"], "tracing.sampleRatio must be between 0 and 1".into());
    }
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
    let http = &config.http;
    let positive = [
        http.session_idle_secs,
        http.session_idle_no_stream_secs,
        http.keep_alive_secs,
        http.max_sessions as u64,
        http.process_budget as u64,
        http.header_timeout_secs,
        http.body_timeout_secs,
        http.request_state_secs,
    ];
    if positive.contains(&0) {
        let names = "sessionIdleSecs, sessionIdleNoStreamSecs, keepAliveSecs, maxSessions, processBudget, \
                     headerTimeoutSecs, bodyTimeoutSecs and requestStateSecs";
        problems.at(&["http"], format!("http: {names} must be positive"));
    }
}

/// Every token limit that is set must let the token do something.
fn validate_token_limits(config: &Config, problems: &mut Problems<'_>) {
    let zero = |limits: &crate::TokenLimits| {
        [limits.sessions, limits.processes, limits.streams, limits.calls].contains(&Some(0))
    };
    if zero(&config.http.token_limits) {
        problems.at(
            &["http", "tokenLimits"],
            "http.tokenLimits: limits must be positive (leave one out for its default)".to_owned(),
        );
    }
    for token in &config.auth.tokens {
        if zero(&token.limits) {
            problems.at(
                &["auth", "tokens"],
                format!("auth.tokens {:?}: limits must be positive (leave one out for its default)", token.name),
            );
        }
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
    fn approval_settings_belong_to_escalate_rules_and_need_their_model() {
        let text = "\
policy:
  rules:
    - {name: a, then: allow, timeoutSecs: 5}
    - {name: b, then: escalate, autoApprove: true}
    - {name: c, then: escalate, timeoutSecs: 0}
approval: {timeoutSecs: 0, token: short}
";
        let found = problems(text);
        assert_eq!(found.len(), 5, "{found:#?}");
        assert!(found[0].contains("\"a\"): timeoutSecs and autoApprove apply to escalate rules only"), "{}", found[0]);
        assert!(found[1].contains("\"b\"): autoApprove needs approval.autoApprover"), "{}", found[1]);
        assert!(found[2].contains("\"c\"): timeoutSecs must be at least 1"), "{}", found[2]);
        assert!(found[3].contains("approval.timeoutSecs must be at least 1"), "{}", found[3]);
        assert!(found[4].contains("approval.token must have at least 16 characters"), "{}", found[4]);
    }

    #[test]
    fn the_auto_approver_defaults_to_anthropic_and_its_small_model() {
        let parse = |text: &str| crate::parse(Path::new("c.yaml"), text, &|_| None);
        let config = parse("approval: {autoApprover: {}}\n").expect("no field is needed");
        let auto = config.approval.and_then(|approval| approval.auto_approver).expect("autoApprover");
        assert_eq!(auto.model(), Some(crate::DEFAULT_ANTHROPIC_MODEL));
        let found = problems("approval: {autoApprover: {api: openai}}\n");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].contains("autoApprover.model is needed with api: openai"), "{}", found[0]);
        assert!(parse("approval: {autoApprover: {api: openai, model: llama3}}\n").is_ok());
    }

    #[test]
    fn profiles_need_a_default() {
        let text = "servers: {}\nprofiles:\n  dev: {}\n";
        assert_eq!(problems(text), ["line 2, column 1: profiles are defined but defaultProfile is missing"]);
    }

    #[test]
    fn watch_settings_are_checked() {
        let text = "servers:\n  py:\n    transport: {kind: stdio, command: python3}\n    watch: {paths: [], ignore: ['[z'], debounceMs: 0}\n";
        let found = problems(text);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found.iter().all(|p| p.starts_with("line 4, column 5: servers.py.watch")), "{found:#?}");
        let fine = "servers:\n  py:\n    transport: {kind: stdio, command: python3}\n    watch: {paths: ['src/**/*.py'], extensions: [py]}\n";
        let config = crate::parse(Path::new("c.yaml"), fine, &|_| None).expect("a valid watch");
        let watch = config.servers["py"].watch.as_ref().expect("watch");
        assert_eq!(watch.debounce_ms, 300);
        assert!(watch.ignored().any(|glob| glob == "node_modules"));
    }
}
