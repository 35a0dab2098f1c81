//! The auto-approver against a scripted fake model API, over real HTTP, for
//! both wire formats.

mod decisions;
mod failures;
mod fake_model;
mod intents;
mod requests;

use std::time::{Duration, SystemTime};

use warden_autoapprove::{Api, ApiKey, Assessment, AutoApprover, Identifier, Intent, Request, Settings};

/// The key the tests configure; no output may ever contain it.
pub const KEY: &str = "sk-test-SECRET-5f1d2c7a9e";

/// Both APIs, for the cases that apply to both.
pub const APIS: [Api; 2] = [Api::Anthropic, Api::OpenAi];

/// The path each API's requests must go to.
pub fn route(api: Api) -> &'static str {
    match api {
        Api::Anthropic => "/v1/messages",
        Api::OpenAi => "/v1/chat/completions",
    }
}

/// Settings for the fake at `base_url`, with a generous deadline.
pub fn settings(api: Api, base_url: &str) -> Settings {
    let mut settings = Settings::new(api, base_url, "test-model", ApiKey::new(KEY));
    settings.deadline = Duration::from_secs(30);
    settings
}

/// An auto-approver for the fake at `base_url`.
pub fn approver(api: Api, base_url: &str) -> AutoApprover {
    AutoApprover::new(settings(api, base_url)).expect("valid settings")
}

/// An intent set just now.
pub fn intent(message: &str) -> Intent {
    Intent { message: message.into(), source: "test".into(), at: SystemTime::now() }
}

/// The call most tests assess: a config file read, and a page fetched.
pub fn identifiers() -> Vec<Identifier> {
    vec![Identifier::Path("/srv/app/config.yaml".into()), Identifier::Url("https://docs.example.org/guide?x=1".into())]
}

/// A user intent that names both of [`identifiers`].
pub fn naming_intent() -> Intent {
    intent("Read /srv/app/config.yaml and compare it with the guide on docs.example.org.")
}

/// Assesses a call of `fs/read_file` with `identifiers` under `intent`.
pub async fn assess(approver: &AutoApprover, identifiers: &[Identifier], intent: Option<&Intent>) -> Assessment {
    let request = Request { server: "fs", tool: "read_file", reason: "reads outside the sandbox", identifiers, intent };
    approver.assess(&request).await
}
