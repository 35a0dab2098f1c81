//! The gateway's approver: one approval per escalated call, channels asked,
//! expiry enforced.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use warden_pipeline::{Approver, Ask, Resolution, ResolutionFuture, Settled, Ticket};

use crate::channels::auto::{AutoChannel, Call as AutoCall};
use crate::digest::args_digest;
use crate::record::{Approval, Decided, millis};
use crate::state::{ApprovalState, Event};
use crate::store::{Approvals, DecideError};
use crate::whitelist::Whitelist;

/// How the service behaves.
#[derive(Debug, Clone)]
pub struct ServiceSettings {
    /// How long a call waits when its rule says nothing.
    pub default_timeout: Duration,
    /// Where a person can decide, for progress messages and refusals; `{id}`
    /// is replaced by the short id (`at http://127.0.0.1:8211/`, or
    /// ``with `warden approvals approve {id}` ``).
    pub hint: String,
    /// A short digest of the policy in force.
    pub policy_version: String,
    /// Mark secret-like spans in the arguments shown (the page and the CLI
    /// draw them as markers with a kind and a length; nothing is removed).
    pub redact: bool,
    /// Ask clients that can show forms, by elicitation.
    pub elicitation: bool,
    /// Print a line on stderr for each call that waits: what, where to
    /// decide, and how long is left (clients under stdio keep stderr in
    /// their MCP log, where a person can find it).
    pub announce: bool,
}

/// Opens approvals in a store and waits for their decisions.
pub struct Service {
    store: Arc<dyn Approvals>,
    whitelist: Arc<Whitelist>,
    settings: ServiceSettings,
    auto: Option<Arc<AutoChannel>>,
}

impl Service {
    /// A service over `store`; calls `whitelist` covers are approved at
    /// once; `auto` asks the auto-approver about calls whose rule allows it.
    pub fn new(
        store: Arc<dyn Approvals>,
        whitelist: Arc<Whitelist>,
        settings: ServiceSettings,
        auto: Option<AutoChannel>,
    ) -> Service {
        Service { store, whitelist, settings, auto: auto.map(Arc::new) }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Approvals> {
        &self.store
    }

    /// The record for `ask`, pending.
    fn record(&self, ask: &Ask<'_>, timeout: Duration) -> Approval {
        let arguments = match ask.call.arguments.map(serde_json::from_str::<Value>) {
            None => Value::Null,
            Some(Ok(value)) => value,
            Some(Err(_)) => Value::String(ask.call.arguments.unwrap_or_default().to_owned()),
        };
        let masked = if self.settings.redact { crate::display::masks(&arguments) } else { Vec::new() };
        let now = SystemTime::now();
        Approval {
            id: crate::record::random_id(),
            server: ask.call.server.to_owned(),
            tool: ask.call.name.to_owned(),
            arguments,
            masked,
            args_digest: args_digest(ask.call.arguments),
            identifiers: ask.escalation.identifiers.clone(),
            rule: ask.rule.to_owned(),
            reason: ask.reason.to_owned(),
            policy_version: self.settings.policy_version.clone(),
            session: ask.call.session.to_owned(),
            client: ask.client.map(str::to_owned),
            principal: ask.principal.map(str::to_owned),
            created_ms: millis(now),
            expires_ms: millis(now + timeout),
            state: ApprovalState::Pending,
            decided: None,
        }
    }
}

impl Approver for Service {
    fn open(&self, ask: &Ask<'_>) -> (Ticket, ResolutionFuture) {
        let timeout = ask.escalation.timeout.unwrap_or(self.settings.default_timeout);
        let approval = self.record(ask, timeout);
        let id = approval.id.clone();
        let ticket = Ticket {
            id: id.clone(),
            digest: approval.args_digest.clone(),
            hint: self.settings.hint.replace("{id}", approval.short_id()),
            timeout,
            summary: summary(&approval),
        };
        let auto = self.auto.clone().filter(|_| ask.escalation.auto_approve);
        let call = auto.as_ref().map(|_| AutoCall {
            id: id.clone(),
            server: approval.server.clone(),
            tool: approval.tool.clone(),
            reason: approval.reason.clone(),
            identifiers: ask.escalation.identifiers.clone(),
        });
        let covering = self.whitelist.covering(&crate::whitelist::Covered {
            session: &approval.session,
            server: &approval.server,
            tool: &approval.tool,
            rule: &approval.rule,
            identifiers: &approval.identifiers,
            arguments: &approval.arguments,
        });
        if self.settings.announce && covering.is_none() {
            eprintln!(
                "warden: approval {short} waits: {what} (rule {rule}); decide {hint} within {secs} s",
                short = approval.short_id(),
                what = crate::display::terminal_safe(&format!("{}/{}", approval.server, approval.tool), false),
                rule = crate::display::terminal_safe(&approval.rule, false),
                hint = ticket.hint,
                secs = timeout.as_secs(),
            );
        }
        self.store.create(approval);
        if let Some(grant) = covering {
            let note = format!("whitelist entry {}: {}", grant.id, grant.scope());
            let _ = self.store.decide(&id, Event::Approve, Decided::now("whitelist", &grant.by, Some(note)));
        }
        let decision = self.store.wait(&id);
        if let (Some(auto), Some(call)) = (&auto, call) {
            auto.ask(call, self.store.clone());
        }
        let store = self.store.clone();
        let future = async move {
            let approval = match tokio::time::timeout(timeout, decision).await {
                Ok(decided) => decided,
                Err(_) => match store.decide(&id, Event::Expire, Decided::now("timeout", "warden", None)) {
                    Ok(approval) => Some(approval),
                    Err(DecideError::AlreadyDecided { approval }) => Some(*approval),
                    Err(_) => None,
                },
            };
            let mut resolution = resolution_of(approval);
            resolution.assessed = auto.and_then(|auto| auto.take(&id));
            resolution
        };
        (ticket, Box::pin(future))
    }

    fn withdraw(&self, id: &str) {
        let _ = self.store.decide(id, Event::Withdraw, Decided::now("client", "client", None));
    }

    fn executed(&self, id: &str) {
        let _ = self.store.decide(id, Event::Execute, Decided::now("gateway", "warden", None));
    }

    fn elicits(&self) -> bool {
        self.settings.elicitation
    }

    fn decide(&self, id: &str, approve: bool, channel: &str, by: &str, note: Option<String>) -> bool {
        let event = if approve { Event::Approve } else { Event::Deny };
        self.store.decide(id, event, Decided::now(channel, by, note)).is_ok()
    }
}

/// The longest argument summary, in characters.
const SUMMARY_CHARS: usize = 400;

/// `server/tool {arguments}` (secrets as markers, terminal-safe), cut to
/// [`SUMMARY_CHARS`] characters.
fn summary(approval: &Approval) -> String {
    let arguments = crate::display::for_terminal(&approval.arguments, &approval.masked).to_string();
    let mut text = format!("{}/{} {arguments}", approval.server, approval.tool);
    if let Some((cut, _)) = text.char_indices().nth(SUMMARY_CHARS) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// The gateway's view of a decided approval.
fn resolution_of(approval: Option<Approval>) -> Resolution {
    let Some(approval) = approval else {
        return Resolution {
            settled: Settled::Withdrawn,
            channel: "warden".into(),
            by: "warden".into(),
            note: Some("the approval is gone".into()),
            assessed: None,
        };
    };
    let settled = match approval.state {
        ApprovalState::Approved => Settled::Approved,
        ApprovalState::Expired => Settled::Expired,
        ApprovalState::Withdrawn => Settled::Withdrawn,
        // Pending cannot be here; executed means it was used already.
        ApprovalState::Denied | ApprovalState::Pending | ApprovalState::Executed => Settled::Denied,
    };
    let decided = approval.decided.unwrap_or_else(|| Decided::now("warden", "warden", None));
    Resolution { settled, channel: decided.channel, by: decided.by, note: decided.note, assessed: None }
}
