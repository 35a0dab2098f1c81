//! The label sets of Warden's metrics, named as Prometheus renders
//! OpenTelemetry's attributes (`mcp.method.name` → `mcp_method_name`).

use std::fmt;
use std::sync::Arc;

use prometheus_client::encoding::{EncodeLabel, EncodeLabelSet, LabelSetEncoder};
use warden_pipeline::ErrorType;

/// What an MCP operation is labelled with: its method, the tool or prompt
/// it names, the server it went to, and how it failed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct OperationLabels {
    /// `mcp_method_name`: a method MCP defines, or `other`.
    pub method: &'static str,
    /// `gen_ai_tool_name` or `gen_ai_prompt_name`.
    pub target: Option<(TargetKind, Arc<str>)>,
    /// `server`: the config's name for it.
    pub server: Option<Arc<str>>,
    /// `error_type`.
    pub error: Option<ErrorLabel>,
}

/// [`OperationLabels`] with borrowed names, as an observation has them:
/// it finds the series of equal labels without interning a name. Hashed
/// as the labels are (the same fields, in the same order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OperationKey<'a> {
    /// `mcp_method_name`.
    pub method: &'static str,
    /// `gen_ai_tool_name` or `gen_ai_prompt_name`.
    pub target: Option<(TargetKind, &'a str)>,
    /// `server`.
    pub server: Option<&'a str>,
    /// `error_type`.
    pub error: Option<ErrorLabel>,
}

impl hashbrown::Equivalent<OperationLabels> for OperationKey<'_> {
    fn equivalent(&self, labels: &OperationLabels) -> bool {
        self.method == labels.method
            && self.target == labels.target.as_ref().map(|(kind, name)| (*kind, &**name))
            && self.server == labels.server.as_deref()
            && self.error == labels.error
    }
}

/// Whether an operation names a tool or a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TargetKind {
    Tool,
    Prompt,
}

/// `error_type` as the conventions write it: the JSON-RPC code, or
/// `tool_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ErrorLabel(pub ErrorType);

impl fmt::Display for ErrorLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ErrorType::Code(code) => write!(f, "{code}"),
            ErrorType::ToolError => f.write_str("tool_error"),
        }
    }
}

/// A label set of named values, rendered in order; values that are `None`
/// are left out rather than rendered empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Labels<const N: usize>(pub [(&'static str, Option<Value>); N]);

/// A label's value: a word of Warden's own, or an interned name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    /// Such as a decision (`deny`) or a front (`http`).
    Word(&'static str),
    /// A server's, a rule's, a channel's name (see [`crate::names`]).
    Name(Arc<str>),
}

impl Value {
    fn as_str(&self) -> &str {
        match self {
            Value::Word(word) => word,
            Value::Name(name) => name,
        }
    }
}

impl<const N: usize> EncodeLabelSet for Labels<N> {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), fmt::Error> {
        for (key, value) in &self.0 {
            if let Some(value) = value {
                (*key, value.as_str()).encode(encoder.encode_label())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod key_tests {
    use std::hash::BuildHasher;

    use hashbrown::Equivalent;
    use rustc_hash::FxBuildHasher;

    use super::*;

    /// A borrowed key must hash as the labels it stands for, or every
    /// observation would miss its series and take the interning path.
    #[test]
    fn a_key_hashes_and_compares_as_its_labels() {
        let labels = OperationLabels {
            method: "tools/call",
            target: Some((TargetKind::Tool, Arc::from("query"))),
            server: Some(Arc::from("db")),
            error: Some(ErrorLabel(ErrorType::ToolError)),
        };
        let key = OperationKey {
            method: "tools/call",
            target: Some((TargetKind::Tool, "query")),
            server: Some("db"),
            error: Some(ErrorLabel(ErrorType::ToolError)),
        };
        assert_eq!(FxBuildHasher.hash_one(key), FxBuildHasher.hash_one(&labels));
        assert!(key.equivalent(&labels));
        let other = OperationKey { target: Some((TargetKind::Prompt, "query")), ..key };
        assert!(!other.equivalent(&labels));
        assert_ne!(FxBuildHasher.hash_one(other), FxBuildHasher.hash_one(&labels));
    }
}
