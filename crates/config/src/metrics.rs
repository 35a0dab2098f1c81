//! The `metrics:` section: Prometheus metrics, and who may scrape them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `metrics:` section. Present means Warden counts what it does and
/// serves it at `/metrics`: on the HTTP front's port (`serve --http`), and
/// on `listen` when set (the way to scrape `wrap` and `serve` over stdio).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// A listener of its own for `/metrics` (`127.0.0.1:9464`; a bare port
    /// means loopback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// The bearer token a scrape must present (`${VAR}` expanded; at least
    /// 16 characters). Required unless `open`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Serve the metrics to anyone who reaches them, without a token.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
}

impl MetricsConfig {
    /// The token a scrape must present, `None` when open.
    pub fn required_token(&self) -> Option<&str> {
        if self.open { None } else { self.token.as_deref() }
    }
}
