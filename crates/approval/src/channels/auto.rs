//! The auto-approver as a channel: for rules with `autoApprove: true`, the
//! model reads the user's latest intent and the call's resource
//! identifiers; its approve decides, its escalate leaves the approval to a
//! person. It can never deny.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use warden_autoapprove::{AutoApprover, Decision, Identifier, Request};
use warden_pipeline::{self as pipeline, Assessed};

use crate::intent::IntentBoard;
use crate::record::Decided;
use crate::state::Event;
use crate::store::Approvals;

/// The auto-approver, the intents it reads, and what it said per approval.
pub struct AutoChannel {
    approver: Arc<AutoApprover>,
    intents: Arc<IntentBoard>,
    /// Approval id → the assessment, until the approval settles.
    assessed: Mutex<HashMap<String, Assessed>>,
}

/// What the auto-approver needs to know of a call.
pub struct Call {
    /// The approval's id.
    pub id: String,
    /// The upstream server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// The policy's reason.
    pub reason: String,
    /// The call's resource identifiers.
    pub identifiers: Vec<pipeline::Identifier>,
}

impl AutoChannel {
    /// The channel around `approver`, reading intents from `intents`.
    pub fn new(approver: AutoApprover, intents: Arc<IntentBoard>) -> AutoChannel {
        AutoChannel { approver: Arc::new(approver), intents, assessed: Mutex::default() }
    }

    /// Asks the model about `call` in the background; an approve decides.
    pub fn ask(self: &Arc<Self>, call: Call, store: Arc<dyn Approvals>) {
        let channel = self.clone();
        tokio::spawn(async move {
            let identifiers: Vec<Identifier> = call
                .identifiers
                .iter()
                .map(|identifier| match identifier {
                    pipeline::Identifier::Path(path) => Identifier::Path(path.clone()),
                    pipeline::Identifier::Url(url) => Identifier::Url(url.clone()),
                })
                .collect();
            // `latest` may read the context file: off the runtime's threads.
            let intents = channel.intents.clone();
            let intent = tokio::task::spawn_blocking(move || intents.latest()).await.ok().flatten();
            let request = Request {
                server: &call.server,
                tool: &call.tool,
                reason: &call.reason,
                identifiers: &identifiers,
                intent: intent.as_ref(),
            };
            let assessment = channel.approver.assess(&request).await;
            let approve = assessment.decision == Decision::Approve;
            let source = intent.as_ref().map(|intent| intent.source.as_str()).unwrap_or("none");
            let assessed = Assessed {
                decision: if approve { "approve" } else { "escalate" }.into(),
                model: assessment.model.clone(),
                latency: assessment.latency,
                reasoning: assessment.reasoning.clone(),
                prompt_sha256: assessment.prompt_sha256.clone(),
            };
            // Kept for the audit record of the decision, unless a person
            // decided already (then nobody would take it).
            if store.get(&call.id).is_ok_and(|approval| approval.state.is_pending()) {
                channel.lock().insert(call.id.clone(), assessed);
            }
            if approve {
                let decided = Decided::now("auto-approver", &assessment.model, Some(assessment.reasoning.clone()));
                // A person may have decided first: theirs stands.
                let _ = store.decide(&call.id, Event::Approve, decided);
            }
            // Logged once recorded (tests wait for this line).
            tracing::info!(
                approval = %call.id,
                model = %assessment.model,
                latency_ms = assessment.latency.as_millis() as u64,
                requested = assessment.requested,
                intent_source = source,
                "auto-approver: {}",
                if approve { "approve" } else { "escalate to a person" }
            );
        });
    }

    /// What the model said about approval `id`, once (forgotten after).
    pub fn take(&self, id: &str) -> Option<Assessed> {
        self.lock().remove(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Assessed>> {
        warden_sync::lock(&self.assessed)
    }
}
