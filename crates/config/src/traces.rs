//! The `tracing:` section: OpenTelemetry traces, exported as OTLP.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `tracing:` section. Traces are on when it names a collector
/// (`otlp`) or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` variables do;
/// what it leaves out, the `OTEL_*` variables may set.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TracingConfig {
    /// The collector's OTLP/HTTP URL: a base (`http://127.0.0.1:4318`, to
    /// which `/v1/traces` is added) or the traces endpoint itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub otlp: Option<String>,
    /// Headers sent with each export (`${VAR}` expanded), such as an API key.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The share of new traces recorded, 0 to 1 (default 1, or
    /// `OTEL_TRACES_SAMPLER_ARG`); a client's sampled flag decides for the
    /// traces it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_ratio: Option<f64>,
    /// `service.name` (default `OTEL_SERVICE_NAME`, else `warden`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
}
