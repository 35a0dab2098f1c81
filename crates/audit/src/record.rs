//! The JSON line written for each decision.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use warden_jsonrpc::canonical_text;
use warden_pipeline::{ApprovalStep, Outcome, Record, Verdict};

use crate::redact::{redact_text, redact_value};

/// One line of the audit log.
///
/// Fields serialise in declaration order, which is the order on disk (see
/// [`crate::chain`] for how `hash` is computed from it), with camelCase names:
///
/// ```json
/// {"time":"2026-05-01T09:30:12.345Z","seq":7,"session":"s1","server":"github","method":"tools/call",
///  "name":"create_issue","arguments":{"body":"key [REDACTED:api-key]"},
///  "decision":{"verdict":"deny","rule":"no-secrets","reason":"..."},"outcome":"refused",
///  "durationMs":0.412,"prevHash":"<64 hex>","hash":"<64 hex>"}
/// ```
/// (shown wrapped; on disk it is one line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// When the record was written: RFC 3339, UTC, milliseconds.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub time: String,
    /// 1 for the first record of a chain, then one more for each record,
    /// continuing across rotated files.
    #[serde(skip_serializing_if = "unsealed")]
    pub seq: u64,
    /// The client session.
    pub session: String,
    /// The client, as it named itself in `initialize` (`name/version`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client: Option<String>,
    /// Who the client authenticated as (its token's name on the HTTP front).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub principal: Option<String>,
    /// The client's network address (HTTP front; a proxy's, behind one).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client_address: Option<String>,
    /// The upstream server.
    pub server: String,
    /// The JSON-RPC method, as on the wire (`tools/call`).
    pub method: String,
    /// The tool or prompt name, or the resource URI (redacted).
    pub name: String,
    /// The request's arguments: the parsed JSON, redacted; `null` if there
    /// were none; a (redacted) string if the text was not valid JSON.
    pub arguments: Value,
    /// Hex SHA-256 of the complete arguments before redaction, in canonical
    /// form (see [`arguments_digest`]): what ran can always be proven, even
    /// where `arguments` masks a secret. Absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_digest: Option<String>,
    /// What was decided.
    pub decision: Decision,
    /// How the request ended.
    pub outcome: OutcomeKind,
    /// For `unreachable`, why (redacted). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_detail: Option<String>,
    /// What a `tools/call` was answered with (the `result` object, or the
    /// JSON-RPC `error` object), redacted. When its JSON text is longer
    /// than the limit (`resultMaxBytes`), a string: the start of that text,
    /// cut at a character boundary. Absent for other methods, for calls
    /// that got no answer, and when results are not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonText>,
    /// Hex SHA-256 of the complete result before redaction and cutting, in
    /// canonical form (as [`arguments_digest`]): what the tool answered can
    /// be proven even where `result` masks or cuts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_digest: Option<String>,
    /// The size in bytes of the result as the upstream sent it, present only
    /// when `result` was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_bytes: Option<u64>,
    /// From the request's arrival to its answer, in milliseconds
    /// (microsecond resolution).
    pub duration_ms: f64,
    /// For an escalated call, the step of its approval this record is
    /// (one record per state change). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRecord>,
    /// Hex SHA-256 of the previous line's exact bytes (without its newline),
    /// or 64 zeros for the first record of a chain.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub prev_hash: String,
    /// Hex SHA-256 of this line without its `hash` member (see
    /// [`crate::chain`]). `None` only while the record is being sealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// The decision part of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// `allow`, `deny` or `escalate`.
    pub verdict: VerdictKind,
    /// The rule that decided; absent for `allow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Why (redacted); absent for `allow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One step of an approval, as written:
/// `{"id":"…","state":"approved","argsDigest":"…","channel":"web","by":"web"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRecord {
    /// The approval's id.
    pub id: String,
    /// `pending`, `approved`, `denied`, `expired`, `withdrawn` or `executed`.
    pub state: String,
    /// Hex SHA-256 of the call's canonical arguments.
    pub args_digest: String,
    /// The channel that decided (`web`, `cli`, `elicitation`, `files`,
    /// `auto-approver`, `whitelist`, `timeout`, `client`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Who decided (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The approver's reason (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What the auto-approver said, when it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_approver: Option<AutoApproverRecord>,
}

/// The auto-approver's assessment of a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoApproverRecord {
    /// `approve` or `escalate`.
    pub decision: String,
    /// The model.
    pub model: String,
    /// How long it took, in milliseconds.
    pub latency_ms: f64,
    /// Why, in the model's words (redacted).
    pub reasoning: String,
    /// Hex SHA-256 of the prompt, when a request was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_sha256: Option<String>,
}

impl ApprovalRecord {
    fn new(step: &ApprovalStep<'_>) -> ApprovalRecord {
        let resolution = step.resolution;
        ApprovalRecord {
            id: step.id.to_owned(),
            state: step.state.to_owned(),
            args_digest: step.digest.to_owned(),
            channel: resolution.map(|r| r.channel.clone()),
            by: resolution.map(|r| r.by.clone()),
            note: resolution.and_then(|r| r.note.clone()),
            auto_approver: resolution.and_then(|r| r.assessed.as_ref()).map(|a| AutoApproverRecord {
                decision: a.decision.clone(),
                model: a.model.clone(),
                latency_ms: a.latency.as_micros() as f64 / 1000.0,
                reasoning: a.reasoning.clone(),
                prompt_sha256: a.prompt_sha256.clone(),
            }),
        }
    }

    fn redacted(mut self, text: impl Fn(String) -> String) -> ApprovalRecord {
        self.by = self.by.map(&text);
        self.note = self.note.map(&text);
        if let Some(auto) = &mut self.auto_approver {
            auto.reasoning = text(std::mem::take(&mut auto.reasoning));
        }
        self
    }
}

/// The verdict, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum VerdictKind {
    /// Forwarded.
    Allow,
    /// Refused.
    Deny,
    /// Needed a person's approval.
    Escalate,
}

/// How a request ended, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OutcomeKind {
    /// The upstream answered with a result.
    Result,
    /// The upstream answered with a tool result flagged `isError`.
    ToolError,
    /// The upstream answered with a JSON-RPC error.
    Error,
    /// Warden refused the request.
    Refused,
    /// The upstream could not be reached.
    Unreachable,
    /// Not an end: the call waits for (or has just got) approval.
    Pending,
}

/// What the gateway handed over, copied out of its borrows so it can move to
/// the writer thread. Redaction happens in [`Entry::into_record`].
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    session: String,
    client: Option<String>,
    principal: Option<String>,
    client_address: Option<String>,
    server: String,
    method: String,
    name: String,
    arguments: Option<String>,
    verdict: Verdict,
    outcome: Outcome,
    result: Option<String>,
    elapsed: Duration,
    approval: Option<ApprovalRecord>,
}

impl Entry {
    /// Copies `record`; its tool result only if `with_result`.
    pub(crate) fn new(record: &Record<'_>, with_result: bool) -> Self {
        Entry {
            session: record.call.session.to_owned(),
            client: record.client.map(str::to_owned),
            principal: record.principal.map(str::to_owned),
            client_address: record.client_address.map(|address| address.to_string()),
            server: record.call.server.to_owned(),
            method: record.call.method.as_str().to_owned(),
            name: record.call.name.to_owned(),
            arguments: record.call.arguments.map(str::to_owned),
            verdict: record.verdict.clone(),
            outcome: record.outcome.clone(),
            result: record.result.filter(|_| with_result).map(str::to_owned),
            elapsed: record.elapsed,
            approval: record.approval.as_ref().map(ApprovalRecord::new),
        }
    }

    /// The record for this entry, redacted if `redact`, its result cut to
    /// `result_max_bytes`. `time`, `seq` and `prevHash` are left empty for
    /// the writer to fill in.
    pub(crate) fn into_record(self, redact: bool, result_max_bytes: usize) -> AuditRecord {
        let text = |s: String| if redact { redact_text(&s).into_owned() } else { s };
        let (arguments, arguments_digest) = match self.arguments {
            None => (Value::Null, None),
            Some(raw) => {
                let (value, digest) = digested(raw, redact);
                (value, Some(digest))
            }
        };
        let (result, result_digest, result_bytes) = match self.result {
            None => (None, None, None),
            Some(raw) => {
                let answer = recorded_answer(&raw, redact, result_max_bytes);
                (Some(answer.text), Some(answer.digest), answer.sent_bytes)
            }
        };
        let decision = match self.verdict {
            Verdict::Allow => Decision { verdict: VerdictKind::Allow, rule: None, reason: None },
            Verdict::Deny { rule, reason } => {
                Decision { verdict: VerdictKind::Deny, rule: Some(rule), reason: Some(text(reason)) }
            }
            Verdict::Escalate { rule, reason, .. } => {
                Decision { verdict: VerdictKind::Escalate, rule: Some(rule), reason: Some(text(reason)) }
            }
        };
        let (outcome, outcome_detail) = match self.outcome {
            Outcome::Result => (OutcomeKind::Result, None),
            Outcome::ToolError => (OutcomeKind::ToolError, None),
            Outcome::Error => (OutcomeKind::Error, None),
            Outcome::Refused => (OutcomeKind::Refused, None),
            Outcome::Unreachable(message) => (OutcomeKind::Unreachable, Some(text(message))),
            Outcome::Pending => (OutcomeKind::Pending, None),
        };
        let approval = self.approval.map(|approval| approval.redacted(text));
        AuditRecord {
            time: String::new(),
            seq: 0,
            session: self.session,
            client: self.client.map(&text),
            principal: self.principal,
            client_address: self.client_address,
            server: self.server,
            method: self.method,
            name: text(self.name),
            arguments,
            arguments_digest,
            decision,
            outcome,
            outcome_detail,
            result,
            result_digest,
            result_bytes,
            duration_ms: self.elapsed.as_micros() as f64 / 1000.0,
            approval,
            prev_hash: String::new(),
            hash: None,
        }
    }
}

/// `raw` JSON text as a value, redacted if `redact`, with the hex SHA-256
/// of its canonical form before redaction. Text that is not JSON becomes a
/// (redacted) string, hashed as it is.
fn digested(raw: String, redact: bool) -> (Value, String) {
    match serde_json::from_str::<Value>(&raw) {
        Ok(mut value) => {
            let digest = crate::sha256_hex(canonical_text(&value).as_bytes());
            if redact {
                redact_value(&mut value);
            }
            (value, digest)
        }
        Err(_) => {
            let digest = crate::sha256_hex(raw.as_bytes());
            let text = if redact { redact_text(&raw).into_owned() } else { raw };
            (Value::String(text), digest)
        }
    }
}

/// JSON text kept as it was written: a tool's answer goes into its
/// record's line without being serialised again. Equal when the texts are.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The text as a value.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// A tool's answer as its record holds it.
#[doc(hidden)]
#[derive(Debug)]
pub struct RecordedAnswer {
    /// The answer, redacted; when its text is longer than the limit, a
    /// string: the start of that text, cut at a character boundary.
    pub text: JsonText,
    /// Hex SHA-256 of the canonical form of the whole answer, before
    /// redaction and cutting.
    pub digest: String,
    /// The size the upstream sent, when the answer was cut.
    pub sent_bytes: Option<u64>,
}

/// `raw` (the answer's JSON text) for the record: redacted if `redact`, cut
/// to `max` bytes of text. Serialised once: the canonical text that is
/// hashed is also compact JSON, and is what the line holds unless
/// redaction changed something. Text that is not JSON is kept as a
/// (redacted) string, hashed as it is. Public for the cost example.
#[doc(hidden)]
pub fn recorded_answer(raw: &str, redact: bool, max: usize) -> RecordedAnswer {
    let (text, digest) = match serde_json::from_str::<Value>(raw) {
        Ok(mut value) => {
            let canonical = canonical_text(&value);
            let digest = crate::sha256_hex(canonical.as_bytes());
            let text = if redact && redact_value(&mut value) { value.to_string() } else { canonical };
            (text, digest)
        }
        Err(_) => {
            let digest = crate::sha256_hex(raw.as_bytes());
            let text = if redact { redact_text(raw) } else { raw.into() };
            (Value::String(text.into_owned()).to_string(), digest)
        }
    };
    let (text, sent_bytes) = if text.len() <= max {
        (text, None)
    } else {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (Value::String(text[..end].to_owned()).to_string(), Some(raw.len() as u64))
    };
    // The text is JSON this function wrote; the check cannot fail.
    let text = RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned());
    RecordedAnswer { text: JsonText(text), digest, sent_bytes }
}

/// Whether `seq` is still unset: `time`, `seq` and `prevHash` are left out
/// until the writer fills them in (see [`crate::chain::Members`]).
fn unsealed(seq: &u64) -> bool {
    *seq == 0
}

/// `now` as RFC 3339 in UTC with milliseconds: `2026-05-01T09:30:12.345Z`.
pub(crate) fn timestamp(now: SystemTime) -> String {
    humantime::format_rfc3339_millis(now).to_string()
}

/// Hex SHA-256 of the canonical form of `arguments` (JSON text): object
/// keys sorted, no whitespace. Arguments that are not JSON are hashed as
/// they are; none hash as `null`. An approval's `argsDigest` and a record's
/// `argumentsDigest` are this.
pub fn arguments_digest(arguments: Option<&str>) -> String {
    let canonical = match arguments.map(serde_json::from_str::<Value>) {
        None => "null".to_owned(),
        Some(Ok(value)) => canonical_text(&value),
        Some(Err(_)) => arguments.unwrap_or_default().to_owned(),
    };
    crate::sha256_hex(canonical.as_bytes())
}
