//! The MCP methods Warden routes by name.

/// An MCP method, as far as routing needs to tell them apart.
///
/// Anything not listed is [`Method::Other`] and is forwarded untouched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Method {
    /// `initialize`
    Initialize,
    /// `ping`
    Ping,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `resources/list`
    ResourcesList,
    /// `resources/templates/list`
    ResourceTemplatesList,
    /// `resources/read`
    ResourcesRead,
    /// `resources/subscribe`
    ResourcesSubscribe,
    /// `resources/unsubscribe`
    ResourcesUnsubscribe,
    /// `completion/complete`
    Complete,
    /// `logging/setLevel`
    SetLevel,
    /// `tasks/get`
    TasksGet,
    /// `tasks/result`
    TasksResult,
    /// `tasks/cancel`
    TasksCancel,
    /// `tasks/list`
    TasksList,
    /// `notifications/initialized`
    Initialized,
    /// `notifications/cancelled`
    Cancelled,
    /// `notifications/progress`
    Progress,
    /// `notifications/tools/list_changed`
    ToolsListChanged,
    /// `notifications/prompts/list_changed`
    PromptsListChanged,
    /// `notifications/resources/list_changed`
    ResourcesListChanged,
    /// `notifications/resources/updated`
    ResourceUpdated,
    /// `notifications/roots/list_changed`
    RootsListChanged,
    /// `notifications/tasks/status`
    TaskStatus,
    /// Any other method, forwarded as it is.
    Other(Box<str>),
}

impl Method {
    /// Classifies a method name.
    pub fn parse(name: &str) -> Method {
        match name {
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "resources/subscribe" => Method::ResourcesSubscribe,
            "resources/unsubscribe" => Method::ResourcesUnsubscribe,
            "completion/complete" => Method::Complete,
            "logging/setLevel" => Method::SetLevel,
            "tasks/get" => Method::TasksGet,
            "tasks/result" => Method::TasksResult,
            "tasks/cancel" => Method::TasksCancel,
            "tasks/list" => Method::TasksList,
            "notifications/initialized" => Method::Initialized,
            "notifications/cancelled" => Method::Cancelled,
            "notifications/progress" => Method::Progress,
            "notifications/tools/list_changed" => Method::ToolsListChanged,
            "notifications/prompts/list_changed" => Method::PromptsListChanged,
            "notifications/resources/list_changed" => Method::ResourcesListChanged,
            "notifications/resources/updated" => Method::ResourceUpdated,
            "notifications/roots/list_changed" => Method::RootsListChanged,
            "notifications/tasks/status" => Method::TaskStatus,
            other => Method::Other(other.into()),
        }
    }

    /// The method's name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Other(name) => name,
            known => known.known_name().unwrap_or_default(),
        }
    }

    /// The name of a method this crate knows; `None` for [`Method::Other`]
    /// (a bounded set of names, for metric labels).
    pub fn known_name(&self) -> Option<&'static str> {
        Some(match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::Complete => "completion/complete",
            Method::SetLevel => "logging/setLevel",
            Method::TasksGet => "tasks/get",
            Method::TasksResult => "tasks/result",
            Method::TasksCancel => "tasks/cancel",
            Method::TasksList => "tasks/list",
            Method::Initialized => "notifications/initialized",
            Method::Cancelled => "notifications/cancelled",
            Method::Progress => "notifications/progress",
            Method::ToolsListChanged => "notifications/tools/list_changed",
            Method::PromptsListChanged => "notifications/prompts/list_changed",
            Method::ResourcesListChanged => "notifications/resources/list_changed",
            Method::ResourceUpdated => "notifications/resources/updated",
            Method::RootsListChanged => "notifications/roots/list_changed",
            Method::TaskStatus => "notifications/tasks/status",
            Method::Other(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Method;

    #[test]
    fn names_round_trip() {
        for name in
            ["initialize", "tools/call", "resources/templates/list", "notifications/tasks/status", "vendor/custom"]
        {
            assert_eq!(Method::parse(name).as_str(), name);
        }
        assert_eq!(Method::parse("vendor/custom"), Method::Other("vendor/custom".into()));
    }
}
