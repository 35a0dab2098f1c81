//! Why a profile could not be compiled.

use std::fmt;

/// Why [`ProfileView::compile`](crate::ProfileView::compile) failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The profile asked for (or `defaultProfile`) does not exist.
    #[error("unknown profile {name:?} ({})", available_list(available))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The profiles the configuration defines, in file order.
        available: Vec<String>,
    },
    /// Profiles are defined, but none was asked for and there is no
    /// `defaultProfile`. Showing everything would defeat the profiles.
    #[error("no profile chosen and no defaultProfile set ({})", available_list(available))]
    NoneChosen {
        /// The profiles the configuration defines, in file order.
        available: Vec<String>,
    },
    /// Some globs of the profile are not valid; every one is listed.
    #[error("{}", invalid_list(.0))]
    InvalidPatterns(Vec<PatternError>),
}

/// One glob of a profile that is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// The profile.
    pub profile: String,
    /// The server whose filters hold the pattern.
    pub server: String,
    /// `"tools"`, `"prompts"` or `"resources"`.
    pub kind: &'static str,
    /// `"allow"` or `"deny"`.
    pub list: &'static str,
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "profile {:?}, server {:?}: {} {} pattern {:?}: {}",
            self.profile, self.server, self.kind, self.list, self.pattern, self.reason
        )
    }
}

fn available_list(available: &[String]) -> String {
    if available.is_empty() { "no profiles are defined".into() } else { format!("profiles: {}", available.join(", ")) }
}

fn invalid_list(problems: &[PatternError]) -> String {
    let plural = if problems.len() == 1 { "" } else { "s" };
    let listed: Vec<String> = problems.iter().map(PatternError::to_string).collect();
    format!("{} invalid pattern{plural}: {}", problems.len(), listed.join("; "))
}
