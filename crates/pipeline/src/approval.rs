//! The seam where an escalated call waits for a decision.
//!
//! The guard stays pure: it only says a call needs approval (with its rule's
//! [`Escalation`] settings). The [`Approver`] opens a pending approval for the
//! call and hands back a future that settles once, when a person (or the
//! auto-approver, or the timeout) decides. The gateway awaits it in the
//! request's own task, so nothing else in the session waits.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::guard::Call;

/// What a rule says about waiting for approval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Escalation {
    /// How long the call may wait (the approver's default when `None`).
    pub timeout: Option<Duration>,
    /// The auto-approver may approve it before a person does.
    pub auto_approve: bool,
    /// The resources the call names (the values of its path and URL roles):
    /// all the auto-approver may see of it, and what a session whitelist
    /// entry covers.
    pub identifiers: Vec<Identifier>,
}

/// A resource a call names, by the kind of the argument's role.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Identifier {
    /// A file system path, as given.
    Path(String),
    /// A URL or git remote, as given.
    Url(String),
}

/// A call that needs approval, as the approval stage hands it over.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// The call (its arguments are exactly what will be forwarded).
    pub call: Call<'a>,
    /// The client, as it named itself in `initialize`.
    pub client: Option<&'a str>,
    /// Who the front let in (an HTTP token's name), if anyone.
    pub principal: Option<&'a str>,
    /// The rule that escalated.
    pub rule: &'a str,
    /// Why.
    pub reason: &'a str,
    /// The rule's settings.
    pub escalation: &'a Escalation,
}

/// A pending approval, as the gateway tracks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    /// The approval's id (unguessable).
    pub id: String,
    /// Hex SHA-256 of the call's canonical arguments.
    pub digest: String,
    /// Where a person can decide, in words (`at http://127.0.0.1:8211/` or
    /// `with warden approvals approve <id>`), for progress messages.
    pub hint: String,
    /// How long it waits before it expires.
    pub timeout: Duration,
    /// The call in a line (server, tool, redacted arguments, cut short),
    /// for channels with little room such as elicitation.
    pub summary: String,
}

/// How a pending approval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Approved: the call goes ahead.
    Approved,
    /// Denied by a person (or a declined elicitation).
    Denied,
    /// Nobody decided in time.
    Expired,
    /// The client cancelled the call, or went away.
    Withdrawn,
}

impl Settled {
    /// The state's name in records: `approved`, `denied`, `expired`, `withdrawn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Settled::Approved => "approved",
            Settled::Denied => "denied",
            Settled::Expired => "expired",
            Settled::Withdrawn => "withdrawn",
        }
    }
}

/// What the auto-approver said about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessed {
    /// `approve` or `escalate`.
    pub decision: String,
    /// The model.
    pub model: String,
    /// How long it took.
    pub latency: Duration,
    /// Why, in the model's words.
    pub reasoning: String,
    /// Hex SHA-256 of the prompt, when a request was made.
    pub prompt_sha256: Option<String>,
}

/// The decision on a pending approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// How it ended.
    pub settled: Settled,
    /// Which channel decided: `web`, `cli`, `elicitation`, `files`,
    /// `auto-approver`, `whitelist`, `timeout`, `client`.
    pub channel: String,
    /// Who decided (the channel's notion of a person, e.g. `web`, a user name).
    pub by: String,
    /// The approver's reason, if given.
    pub note: Option<String>,
    /// The auto-approver's assessment, if it was asked.
    pub assessed: Option<Assessed>,
}

/// The future of a [`Resolution`].
pub type ResolutionFuture = Pin<Box<dyn Future<Output = Resolution> + Send + 'static>>;

/// One step in an approval's life, as the audit records it.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalStep<'a> {
    /// The approval's id.
    pub id: &'a str,
    /// `pending`, `approved`, `denied`, `expired`, `withdrawn` or `executed`.
    pub state: &'a str,
    /// Hex SHA-256 of the call's canonical arguments.
    pub digest: &'a str,
    /// The decision, for every state after `pending`.
    pub resolution: Option<&'a Resolution>,
}

/// Opens pending approvals and settles them.
pub trait Approver: Send + Sync {
    /// Opens a pending approval for `ask`. The future settles exactly once
    /// (at the latest when the timeout expires). It is driven only by being
    /// polled: dropping it withdraws nothing, call [`Approver::withdraw`].
    fn open(&self, ask: &Ask<'_>) -> (Ticket, ResolutionFuture);

    /// The client cancelled the call, or went away: the approval is
    /// withdrawn unless already decided.
    fn withdraw(&self, id: &str);

    /// The approved call was forwarded (an approval is used once).
    fn executed(&self, id: &str);

    /// Whether to ask the client too, by elicitation, when it can show forms.
    fn elicits(&self) -> bool {
        false
    }

    /// A decision that arrived through the gateway (an elicitation's
    /// answer). Returns whether it was the first.
    fn decide(&self, id: &str, approve: bool, channel: &str, by: &str, note: Option<String>) -> bool;
}

/// The first eight characters of an approval id, as people quote it.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}
