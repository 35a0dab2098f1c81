//! Rules the schema alone cannot express.

use crate::schema::{Config, Transport};

/// Characters every major client accepts in a tool name.
fn is_client_safe(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Returns every problem found, one sentence each.
pub(crate) fn validate(config: &Config) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, server) in &config.servers {
        if !is_client_safe(name) {
            problems.push(format!(
                "server name {name:?} must use only letters, digits, '_' and '-' (it prefixes tool names)"
            ));
        }
        let Transport::Stdio { command, .. } = &server.transport;
        if command.trim().is_empty() {
            problems.push(format!("servers.{name}.transport.command must not be empty"));
        }
    }
    let naming = &config.naming;
    if naming.separator.is_empty() {
        problems.push("naming.separator must not be empty".into());
    }
    if naming.max_length < 16 {
        problems.push(format!("naming.maxLength must be at least 16, not {}", naming.max_length));
    }
    if config.limits.max_message_bytes < 1024 {
        problems.push("limits.maxMessageBytes must be at least 1024".into());
    }
    if config.supervision.backoff_initial_ms == 0
        || config.supervision.backoff_max_ms < config.supervision.backoff_initial_ms
    {
        problems.push("supervision: backoffInitialMs must be positive and at most backoffMaxMs".into());
    }
    problems
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn reports_every_problem() {
        let text = "servers:\n  'bad:name':\n    transport: {kind: stdio, command: ' '}\nnaming: {separator: '', maxLength: 8}\n";
        let err = crate::parse(Path::new("c.yaml"), text, &|_| None).unwrap_err();
        let crate::ConfigError::Invalid { problems, .. } = err else { panic!("{err}") };
        assert_eq!(problems.len(), 4, "{problems:?}");
    }
}
