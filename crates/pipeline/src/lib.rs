//! The seams every client request passes, where profiles, policies, approval
//! and audit plug in.
//!
//! A request that names a component goes through, in order:
//! 1. **view** ([`View`]): is the component visible to this client? If not, it
//!    is answered as if it did not exist. The same view filters list results.
//! 2. **guard** ([`Guard`]): a pure decision, allow, deny or escalate, from
//!    the call alone (no I/O, so it can be tested in microseconds).
//! 3. **approval** ([`Approver`]): an escalated call waits, in its own task,
//!    until a person (or the auto-approver) decides or its time runs out.
//! 4. forwarding to the upstream.
//! 5. **audit** ([`Audit`]): one record per decision, written before the
//!    answer goes back to the client.
//!
//! When an upstream's tools are loaded, **pins** ([`Pins`]) may withhold
//! tools whose definitions changed since they were first seen.

#![warn(missing_docs)]

pub mod access;
mod approval;
mod audit;
mod guard;
mod item_kind;
mod observe;
mod pins;
mod serving;
mod view;

use std::sync::Arc;

pub use approval::{
    ApprovalStep, Approver, Ask, Assessed, Escalation, Identifier, Resolution, ResolutionFuture, Settled, Ticket,
    short_id,
};
pub use audit::{Audit, AuditFuture, Outcome, Record};
pub use guard::{AllowAll, Call, Guard, Guards, Verdict};
pub use item_kind::{InventoryItem, ItemKind};
pub use observe::{
    ApprovalWait, ErrorType, Front, Observer, Observers, Operation, SpanContext, SpanPlace, Target, Unobserved,
};
pub use pins::{Pins, Review, ToolDefinition};
pub use serving::{Serving, serving};
pub use view::{ShowAll, View};

/// The pluggable stages of the pipeline. Swapped as a whole on reload.
#[derive(Clone)]
pub struct Hooks {
    /// Which components a client may see.
    pub view: Arc<dyn View>,
    /// Whether a call may go ahead.
    pub guard: Arc<dyn Guard>,
    /// Where decisions are recorded, if anywhere.
    pub audit: Option<Arc<dyn Audit>>,
    /// Checks tool definitions against their pins, if pinning is on.
    pub pins: Option<Arc<dyn Pins>>,
    /// Where escalated calls wait for a decision (none: refused at once).
    pub approver: Option<Arc<dyn Approver>>,
    /// Who watches requests and sessions (metrics), if anyone.
    pub observer: Arc<dyn Observer>,
}

/// Builds the hooks for a profile: the HTTP front starts a session for each
/// client, with the profile that client chose.
pub trait HooksSource: Send + Sync + 'static {
    /// The hooks for `profile` (`None`: the default profile), or why not.
    fn hooks(&self, profile: Option<&str>) -> Result<Hooks, String>;
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            view: Arc::new(ShowAll),
            guard: Arc::new(AllowAll),
            audit: None,
            pins: None,
            approver: None,
            observer: Arc::new(Unobserved),
        }
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("audit", &self.audit.is_some())
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}
