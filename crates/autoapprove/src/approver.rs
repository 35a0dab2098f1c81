//! The auto-approver: from a call and the user's intent to approve or
//! escalate, never failing.

use std::fmt;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::{Client, Url};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::assessment::{Assessment, Decision};
use crate::check::first_unnamed;
use crate::endpoint::{endpoint, headers};
use crate::error::Error;
use crate::prompt::{MAX_VALUE_CHARS, SYSTEM_PROMPT, cap, strip_controls, user_content};
use crate::request::{Identifier, Request, untrusted_intent};
use crate::settings::{Api, ApiKey, Settings};
use crate::{exchange, wire};

/// Asks a model whether the user's stated intent covers an escalated call.
///
/// It answers approve or escalate, never deny, and never fails: a missing or
/// stale intent, a call without identifiers, an error, a timeout or a
/// malformed answer all mean escalate, with the reason in the assessment.
/// After the model approves, the user's message must still name every
/// identifier of the call (see the crate docs), or the call is escalated.
pub struct AutoApprover {
    api: Api,
    endpoint: Url,
    model: String,
    key: ApiKey,
    headers: HeaderMap,
    client: Client,
    slots: Semaphore,
    max_concurrent: usize,
    deadline: Duration,
    intent_max_age: Duration,
    require_identifiers: bool,
}

impl AutoApprover {
    /// Checks `settings` and sets up the HTTP client (connect timeout, no
    /// redirects: a redirect must not carry the key elsewhere).
    pub fn new(settings: Settings) -> Result<AutoApprover, Error> {
        if settings.model.trim().is_empty() {
            return Err(Error::EmptyModel);
        }
        for (name, value) in [("deadline", settings.deadline), ("connect_timeout", settings.connect_timeout)] {
            if value.is_zero() {
                return Err(Error::Zero(name));
            }
        }
        if settings.max_concurrent == 0 {
            return Err(Error::Zero("max_concurrent"));
        }
        let endpoint = endpoint(&settings.base_url, settings.api)?;
        let headers = headers(settings.api, &settings.api_key)?;
        static PROVIDER: Once = Once::new();
        PROVIDER.call_once(|| {
            // Another part of the program may have installed one already: fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let client = Client::builder()
            .connect_timeout(settings.connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| Error::Client(err.to_string()))?;
        Ok(AutoApprover {
            api: settings.api,
            endpoint,
            model: settings.model,
            key: settings.api_key,
            headers,
            client,
            slots: Semaphore::new(settings.max_concurrent.min(Semaphore::MAX_PERMITS)),
            max_concurrent: settings.max_concurrent,
            deadline: settings.deadline,
            intent_max_age: settings.intent_max_age,
            require_identifiers: settings.require_identifiers,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Assesses one escalated call; see [`AutoApprover`].
    pub async fn assess(&self, request: &Request<'_>) -> Assessment {
        let started = Instant::now();
        let unasked = |reasoning: String| Assessment {
            decision: Decision::Escalate,
            reasoning: format!("{reasoning}; escalated without asking the model"),
            model: self.model.clone(),
            latency: started.elapsed(),
            prompt_sha256: None,
            requested: false,
        };
        if let Some(why) = untrusted_intent(request.intent, SystemTime::now(), self.intent_max_age) {
            return unasked(why);
        }
        if self.require_identifiers && request.identifiers.is_empty() {
            return unasked("the call has no resource identifier the user's words could be checked against".into());
        }

        let body = wire::body(self.api, &self.model, SYSTEM_PROMPT, &user_content(request)).to_string().into_bytes();
        let prompt_sha256 = Sha256::digest(&body).iter().map(|byte| format!("{byte:02x}")).collect();
        let sent = AtomicBool::new(false);
        let exchange = async {
            let _slot = self.slots.acquire().await.map_err(|_| "the auto-approver is shutting down".to_owned())?;
            sent.store(true, Ordering::Relaxed);
            exchange::post(&self.client, &self.endpoint, &self.headers, body).await
        };
        let outcome = tokio::time::timeout(self.deadline, exchange).await;
        let sent = sent.load(Ordering::Relaxed);
        let (decision, reasoning) = match outcome {
            Err(_) if !sent => (
                Decision::Escalate,
                format!(
                    "no free slot to ask the model within {:?} (max_concurrent {} reached)",
                    self.deadline, self.max_concurrent
                ),
            ),
            Err(_) => (Decision::Escalate, format!("the model did not answer within {:?}", self.deadline)),
            Ok(Err(reason)) => (Decision::Escalate, reason),
            Ok(Ok(answer)) => conclude(self.api, &answer, request),
        };
        Assessment {
            decision,
            reasoning: self.scrubbed(reasoning),
            model: self.model.clone(),
            latency: started.elapsed(),
            prompt_sha256: sent.then_some(prompt_sha256),
            requested: sent,
        }
    }

    /// `text` with the key blotted out, should an endpoint have echoed it.
    fn scrubbed(&self, text: String) -> String {
        let key = self.key.expose();
        if key.len() < 4 || !text.contains(key) { text } else { text.replace(key, "<redacted>") }
    }
}

impl fmt::Debug for AutoApprover {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("AutoApprover")
            .field("api", &self.api)
            .field("endpoint", &self.endpoint.as_str())
            .field("model", &self.model)
            .field("key", &self.key)
            .field("deadline", &self.deadline)
            .field("intent_max_age", &self.intent_max_age)
            .field("require_identifiers", &self.require_identifiers)
            .finish_non_exhaustive()
    }
}

/// What the model's answer comes to: its decision, unless the answer is
/// malformed or it approves a call whose identifiers the user did not name.
fn conclude(api: Api, answer: &[u8], request: &Request<'_>) -> (Decision, String) {
    match wire::parse(api, answer) {
        Err(reason) => (Decision::Escalate, format!("malformed answer from the model: {reason}")),
        Ok(verdict) if verdict.decision == Decision::Escalate => {
            (Decision::Escalate, format!("the model escalated: {}", verdict.reasoning))
        }
        Ok(verdict) => {
            let message = request.intent.map(|intent| intent.message.as_str()).unwrap_or_default();
            match first_unnamed(request.identifiers, message) {
                Some(identifier) => (Decision::Escalate, unnamed(identifier, &verdict.reasoning)),
                None => (Decision::Approve, verdict.reasoning),
            }
        }
    }
}

/// Why an approve of the model's was overruled.
fn unnamed(identifier: &Identifier, reasoning: &str) -> String {
    let subject = cap(&strip_controls(&identifier.subject(), false), MAX_VALUE_CHARS);
    format!(
        "the model approved ({reasoning}), but the user's message does not name the {} {subject:?}",
        identifier.kind()
    )
}
