//! The `approval:` section: how escalated calls reach a person (or the
//! auto-approver) and how long they wait.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `approval:` section. Present means escalated calls wait for a
/// decision; absent means they are refused at once, as before.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ApprovalConfig {
    /// How long an escalated call waits when its rule says nothing
    /// (`timeoutSecs` on the rule), in seconds. No decision in time means
    /// denied.
    pub timeout_secs: u64,
    /// The control socket of `warden approvals` and `warden context set`
    /// (created with mode 0600). Default: `approvals.sock` in the state
    /// directory (`$XDG_STATE_HOME/warden` or `~/.local/state/warden`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    /// Where the approval page listens (`127.0.0.1:8211`; a bare port means
    /// loopback). No page when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// The page's login token (`${VAR}` expanded; at least 128 bits, e.g.
    /// 22 random letters and digits). When absent (and no `tokens`), a
    /// random one is printed at start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Named login tokens (`{alice: ${ALICE_TOKEN}}`), each at least 128
    /// bits: a decision is recorded as made by the name.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tokens: std::collections::BTreeMap<String, String>,
    /// `Host` values the page accepts besides loopback names and its own
    /// address (for a page reached through a proxy).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<String>,
    /// Ask the client through `elicitation/create` too, when it declared the
    /// capability (a convenience: clients that auto-decline make this a
    /// denial, so turn it off for clients that do).
    pub elicitation: bool,
    /// An IronCurtain-compatible exchange directory (`request-<id>.json`,
    /// `response-<id>.json`; created with mode 0700).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exchange_dir: Option<String>,
    /// The LLM that may approve calls of rules with `autoApprove: true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_approver: Option<AutoApproverConfig>,
}

impl Default for ApprovalConfig {
    fn default() -> Self {
        ApprovalConfig {
            timeout_secs: 300,
            socket: None,
            listen: None,
            token: None,
            tokens: std::collections::BTreeMap::new(),
            allowed_hosts: Vec::new(),
            elicitation: false,
            exchange_dir: None,
            auto_approver: None,
        }
    }
}

/// Which API the auto-approver's model speaks.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ModelApi {
    /// The Anthropic Messages API (`/v1/messages`), the default.
    #[default]
    Anthropic,
    /// OpenAI-compatible chat completions (`/v1/chat/completions`): OpenAI,
    /// LiteLLM, vLLM, Ollama.
    Openai,
}

/// The auto-approver: an LLM that reads the user's stated intent and a call
/// and may only approve it or leave it to a person.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AutoApproverConfig {
    /// The API (default `anthropic`).
    #[serde(default)]
    pub api: ModelApi,
    /// The API's base URL (default: the vendor's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model (default, for `anthropic`: [`DEFAULT_ANTHROPIC_MODEL`];
    /// an OpenAI-compatible server has no model every such server offers,
    /// so there it must be named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The environment variable holding the API key (default
    /// `ANTHROPIC_API_KEY` or `OPENAI_API_KEY`). The key is never logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// The total time the model gets per call, in seconds (default 15);
    /// later means the call goes to a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_secs: Option<u64>,
    /// How old the user's stated intent may be, in seconds (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_max_age_secs: Option<u64>,
}

/// The auto-approver's model when none is named: IronCurtain's default, a
/// small model (the question is narrow: does the user's message name this
/// call?), quick enough that a call waits a second or two, not ten.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-haiku-4-5";

impl AutoApproverConfig {
    /// The model to ask: the one named, else the API's default (none for
    /// OpenAI-compatible servers).
    pub fn model(&self) -> Option<&str> {
        match (&self.model, self.api) {
            (Some(model), _) => Some(model),
            (None, ModelApi::Anthropic) => Some(DEFAULT_ANTHROPIC_MODEL),
            (None, ModelApi::Openai) => None,
        }
    }
}
