//! The record written for every decision.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::approval::ApprovalStep;
use super::guard::{Call, Verdict};

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The upstream answered with a result.
    Result,
    /// The upstream answered with a tool result flagged `isError`.
    ToolError,
    /// The upstream answered with a JSON-RPC error.
    Error,
    /// The upstream could not be reached or went away.
    Unreachable(String),
    /// Warden refused the request (the verdict says why).
    Refused,
    /// The call waits for approval (a step of its approval, not its end).
    Pending,
}

/// One decision and its outcome.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The request.
    pub call: Call<'a>,
    /// The client, as it named itself in `initialize` (`name/version`).
    pub client: Option<&'a str>,
    /// Who the client authenticated as: its token's name on the HTTP front
    /// (what it calls itself, `client`, proves nothing).
    pub principal: Option<&'a str>,
    /// The client's network address (HTTP front).
    pub client_address: Option<std::net::IpAddr>,
    /// The decision.
    pub verdict: &'a Verdict,
    /// How it ended.
    pub outcome: &'a Outcome,
    /// What a `tools/call` was answered with, as the upstream sent it: the
    /// `result` (or JSON-RPC `error`) object's JSON text. `None` for other
    /// methods and for calls that got no answer.
    pub result: Option<&'a str>,
    /// From the request's arrival to its answer.
    pub elapsed: Duration,
    /// For an escalated call: the step of its approval this record is.
    pub approval: Option<ApprovalStep<'a>>,
}

/// The future an [`Audit`] returns.
pub type AuditFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Records decisions. The answer goes back to the client only after the
/// record is written; if it cannot be written, the client gets an error
/// instead of the result (fail closed).
pub trait Audit: Send + Sync {
    /// Writes `record`.
    fn record<'a>(&'a self, record: Record<'a>) -> AuditFuture<'a>;
}
