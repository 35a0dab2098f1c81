//! What the auto-approver talks to and how long it may take.

use std::fmt;
use std::time::Duration;

/// Which wire protocol the model's endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// The Anthropic Messages API: `POST {base}/v1/messages`.
    Anthropic,
    /// The OpenAI-compatible chat completions API: `POST {base}/v1/chat/completions`
    /// (OpenAI, LiteLLM, vLLM, Ollama and the like).
    OpenAi,
}

impl Api {
    /// The endpoint's path below the API version segment.
    pub(crate) fn route(self) -> &'static str {
        match self {
            Api::Anthropic => "messages",
            Api::OpenAi => "chat/completions",
        }
    }
}

/// The key for the model's API. It is sent only in its header (marked
/// sensitive), never printed: `Debug` shows `<redacted>`, and there is no
/// `Display`. An empty key sends no credential at all (a local Ollama).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("<redacted>")
    }
}

/// Everything the auto-approver needs: the endpoint, the model, the key and
/// its limits.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The wire protocol.
    pub api: Api,
    /// The API's base URL, `http` or `https`, e.g. `https://api.anthropic.com`.
    /// A trailing `/v1` is optional: `https://api.openai.com` and
    /// `https://api.openai.com/v1` name the same endpoint; any other path is
    /// kept as a prefix (`http://proxy/llm` → `http://proxy/llm/v1/messages`).
    pub base_url: String,
    /// The model's name, as the API knows it.
    pub model: String,
    /// The API key.
    pub api_key: ApiKey,
    /// The most one assessment may take in total: waiting for a free slot,
    /// connecting, a retry, and reading the answer. Default 15 s.
    pub deadline: Duration,
    /// The most connecting to the endpoint may take. Default 5 s.
    pub connect_timeout: Duration,
    /// How many requests may be in flight to the model at once; further
    /// assessments wait (within their deadline). Default 4.
    pub max_concurrent: usize,
    /// The oldest user intent still trusted; an older one means escalation
    /// without asking the model. Default 120 s.
    pub intent_max_age: Duration,
    /// When true (the default), a call without any resource identifier is
    /// escalated without asking the model: nothing the model could approve
    /// could be checked against the user's words.
    pub require_identifiers: bool,
}

impl Settings {
    /// Settings for `model` at `base_url`, with the default limits.
    pub fn new(api: Api, base_url: impl Into<String>, model: impl Into<String>, api_key: ApiKey) -> Settings {
        Settings {
            api,
            base_url: base_url.into(),
            model: model.into(),
            api_key,
            deadline: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(5),
            max_concurrent: 4,
            intent_max_age: Duration::from_secs(120),
            require_identifiers: true,
        }
    }
}
