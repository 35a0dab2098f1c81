//! What an assessment concludes, with what the audit needs to know about it.

use std::time::Duration;

/// The only two answers the auto-approver can give. There is no deny: the
/// worst a fooled model can do is approve, and refusing is left to people
/// and to the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The user's intent covers the call: it may run without a person.
    Approve,
    /// Not clearly covered, or something went wrong: a person decides.
    Escalate,
}

/// The outcome of one assessment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// Approve or escalate.
    pub decision: Decision,
    /// Why, in one or two sentences: the model's reasoning, or what made the
    /// auto-approver escalate on its own (no intent, a timeout, an HTTP
    /// error, a malformed answer, the identifier check).
    pub reasoning: String,
    /// The configured model.
    pub model: String,
    /// How long the assessment took, waiting for a free slot included.
    pub latency: Duration,
    /// The hex SHA-256 of the request body sent to the model (the prompts,
    /// the model name and the decision schema; the key travels in a header),
    /// or `None` when no request was made.
    pub prompt_sha256: Option<String>,
    /// Whether the model was asked at all: false when the intent was
    /// missing, empty or stale, the call had no identifier to check, or no
    /// slot came free within the deadline.
    pub requested: bool,
}
