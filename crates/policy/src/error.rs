//! Why a policy could not be compiled, or its test cases not run.

/// A policy that cannot be used, or test cases that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The policy has problems; every one found is listed, each naming the
    /// rule (or section) it concerns.
    #[error("the policy has {} problem{}:\n  - {}", problems.len(), if problems.len() == 1 { "" } else { "s" }, problems.join("\n  - "))]
    Invalid {
        /// One sentence per problem.
        problems: Vec<String>,
    },
    /// The profile asked for (or `defaultProfile`) is not defined.
    #[error("profile {0:?} is not defined")]
    UnknownProfile(String),
    /// The test cases could not be read.
    #[error("policy test cases: {0}")]
    Cases(String),
}
