//! Writing a Warden config as YAML, and checking it with Warden's own loader.
//!
//! Sections equal to their defaults are left out (the config's own
//! serialisation skips them), so the file shows only what the import decided.

use std::path::Path;

use warden_config::{Condition, Config, ConfigError, Policy};

use crate::error::ImportError;

/// Writes `config` as YAML that [`warden_config::parse`] reads back to the
/// same config (`${VAR}` references are written as they are, to be expanded
/// when Warden loads the file). There is no header, so callers can put their
/// own first; [`crate::Imported::to_yaml`] adds one saying where the config
/// came from.
pub fn to_yaml(config: &Config) -> Result<String, ImportError> {
    serde_saphyr::to_string(config).map_err(|err| ImportError::Write { message: err.to_string() })
}

/// `# ` before every line of `text`.
pub(crate) fn comment(text: &str) -> String {
    text.lines().map(|line| if line.is_empty() { "#\n".to_owned() } else { format!("# {line}\n") }).collect()
}

/// Loads the YAML of `config` with Warden's loader, so the import is refused
/// exactly when Warden would refuse the file, and checks what the policy
/// engine needs beyond it (every regex compiles, every `inList` names a
/// list, every rule has a name). `${VAR}` references stand for themselves
/// here: the variables need not be set at import time.
pub(crate) fn check(config: &Config, origin: &str) -> Result<(), ImportError> {
    let text = to_yaml(config)?;
    let lookup = |name: &str| Some(format!("${{{name}}}"));
    let rejected = |problems| ImportError::Rejected { origin: origin.to_owned(), problems };
    match warden_config::parse(Path::new("imported.yaml"), &text, &lookup) {
        Ok(loaded) => {
            let problems = policy_problems(&loaded.policy);
            if problems.is_empty() { Ok(()) } else { Err(rejected(problems)) }
        }
        Err(ConfigError::Invalid { problems, .. }) => {
            // Positions refer to the generated text, not the user's file.
            Err(rejected(problems.iter().map(|problem| without_position(problem).to_owned()).collect()))
        }
        Err(other) => Err(rejected(vec![other.to_string()])),
    }
}

/// What the policy engine would refuse in `policy`, one sentence each.
fn policy_problems(policy: &Policy) -> Vec<String> {
    let mut problems = Vec::new();
    for (index, rule) in policy.rules.iter().enumerate() {
        let place = format!("policy.rules[{index}] ({:?})", rule.name);
        if rule.name.trim().is_empty() {
            problems.push(format!("policy.rules[{index}] has no name"));
        }
        if let Some(args) = &rule.when.args {
            condition_problems(args, policy, &place, &mut problems);
        }
    }
    for (server, tools) in &policy.annotations {
        for (tool, annotation) in tools {
            for (index, conditional) in annotation.conditional.iter().enumerate() {
                let place = format!("policy.annotations.{server}.{tool}.conditional[{index}]");
                condition_problems(&conditional.when, policy, &place, &mut problems);
            }
        }
    }
    problems
}

fn condition_problems(condition: &Condition, policy: &Policy, place: &str, problems: &mut Vec<String>) {
    for inner in condition.all.iter().chain(&condition.any).flatten().chain(condition.not.as_deref()) {
        condition_problems(inner, policy, place, problems);
    }
    if let Some(pattern) = &condition.regex
        && let Err(err) = regex::RegexBuilder::new(pattern).case_insensitive(condition.ignore_case).build()
    {
        let why = err.to_string();
        let why = why.lines().last().unwrap_or_default().trim_start_matches("error: ").to_owned();
        problems.push(format!("{place}: invalid regex {pattern:?}: {why}"));
    }
    if let Some(list) = &condition.in_list
        && !policy.lists.contains_key(list)
    {
        problems.push(format!("{place}: inList names {list:?}, which is not in policy.lists"));
    }
}

/// `problem` without a leading `line N, column M: `.
fn without_position(problem: &str) -> &str {
    match problem.split_once(": ") {
        Some((place, rest)) if place.starts_with("line ") && place.contains(", column ") => rest,
        _ => problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_out_defaults() {
        let yaml = to_yaml(&Config::default()).unwrap();
        assert_eq!(yaml.trim(), "servers: {}");
        assert_eq!(without_position("line 3, column 5: servers.a: bad"), "servers.a: bad");
        assert_eq!(without_position("servers.a: bad"), "servers.a: bad");
        assert_eq!(comment("a\n\nb"), "# a\n#\n# b\n");
    }

    #[test]
    fn policies_need_valid_regexes_and_known_lists() {
        let mut config = Config::default();
        let bad = |with: fn(&mut Condition)| {
            let mut condition = Condition { arg: Some("q".into()), ..Condition::default() };
            with(&mut condition);
            condition
        };
        let args = Condition {
            any: Some(vec![bad(|c| c.regex = Some("(".into())), bad(|c| c.in_list = Some("nope".into()))]),
            ..Condition::default()
        };
        config.policy.rules.push(warden_config::Rule {
            name: "r".into(),
            description: String::new(),
            when: warden_config::RuleMatch { args: Some(args), ..Default::default() },
            action: warden_config::Action::Deny,
            reason: String::new(),
            timeout_secs: None,
            auto_approve: false,
        });
        let Err(ImportError::Rejected { problems, .. }) = check(&config, "test") else { panic!("accepted") };
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("policy.rules[0] (\"r\"): invalid regex \"(\""), "{}", problems[0]);
        assert_eq!(problems[1], "policy.rules[0] (\"r\"): inList names \"nope\", which is not in policy.lists");
    }
}
