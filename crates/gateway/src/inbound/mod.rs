//! Client → upstream: what happens to each message the client sends.
//!
//! Requests are dispatched by method to a handler that resolves which
//! upstream serves them ([`named`], [`resources`], [`lists`]), runs the
//! pipeline and forwards them ([`forward`]). Notifications and the client's
//! answers to upstream requests are handled in [`notify`].

mod approval;
mod elicit;
mod forward;
mod initialize;
mod lists;
mod named;
mod notify;
mod resources;
mod rounds;
mod tasks;

pub(crate) use initialize::SUPPORTED_VERSIONS;
pub(crate) use lists::level_of;

use warden_jsonrpc::{ErrorCode, Frame, Method, error_response, result_response};

use crate::session::Shared;

impl Shared {
    /// Serves one client request, in its own task.
    pub(crate) async fn request(self: &std::sync::Arc<Self>, frame: Frame) {
        let Some(method) = frame.method().cloned() else { return };
        let _serving = crate::pipeline::Serving::start();
        let id = frame.id().unwrap_or("null");
        if !matches!(method, Method::Initialize | Method::Ping) && self.client.get().is_none() {
            let message = format!("'{}' received before initialize: send initialize first", method.as_str());
            self.respond(&frame, error_response(Some(id), ErrorCode::InvalidRequest, &message, None));
            return;
        }
        match method {
            Method::Initialize => self.initialize(&frame),
            Method::Ping => self.respond(&frame, result_response(id, "{}")),
            Method::ToolsList | Method::PromptsList | Method::ResourcesList | Method::ResourceTemplatesList => {
                self.list(&frame, &method).await
            }
            Method::ToolsCall | Method::PromptsGet => self.call_named(&frame, &method).await,
            Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                self.call_resource(&frame, &method).await
            }
            Method::Complete => self.complete(&frame).await,
            Method::SetLevel => self.set_level(&frame).await,
            Method::TasksGet | Method::TasksResult | Method::TasksCancel => self.call_task(&frame, &method).await,
            Method::TasksList => self.list_tasks(&frame).await,
            _ => self.call_unrouted(&frame, &method).await,
        }
    }

    /// Answers `id` with an error.
    pub(crate) fn fail(&self, frame: &Frame, code: ErrorCode, message: &str) {
        self.respond(frame, error_response(frame.id(), code, message, None));
    }
}
