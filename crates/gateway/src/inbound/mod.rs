//! Client → upstream: what happens to each message the client sends.
//!
//! Requests are dispatched by method to a handler that resolves which
//! upstream serves them ([`named`], [`resources`], [`tasks`], [`lists`]).
//! A request for one upstream then runs the pipeline ([`dispatch`]): the
//! guard decides (off the serving thread when it reads the filesystem:
//! [`decide`]), an escalated call waits for [`approval`], the request is
//! forwarded ([`forward`]), its outcome is recorded ([`record`]) and the
//! client answered. Notifications and the client's answers to upstream
//! requests are handled in [`notify`].

mod approval;
mod decide;
mod dispatch;
mod elicit;
mod forward;
mod initialize;
mod lists;
mod named;
mod notify;
mod record;
mod resources;
mod tasks;
mod trace_context;

pub(crate) use initialize::SUPPORTED_VERSIONS;
use initialize::initialize;
pub(crate) use named::await_unloaded;
pub(crate) use notify::{client_response, notification};

use std::sync::Arc;
use std::time::Instant;

use warden_jsonrpc::{ErrorCode, Frame, Method, result_response};

use crate::parts::SessionParts;
use crate::pipeline::{Observer, Operation, SpanContext, SpanPlace};

/// Serves one client request, in its own task, as one observed operation
/// (see [`crate::served`]).
pub(crate) async fn request(session: &Arc<SessionParts>, frame: Frame) {
    let Some(method) = frame.method().cloned() else { return };
    let _serving = session.link.serving();
    let observer = session.surface.hooks.load().observer.clone();
    if observer.is_watching() {
        let span = begin(&*observer, &frame);
        let id = frame.id();
        // Pinned where it is built: the scope holds a reference, and the
        // handling's future (kilobytes) is not copied into it.
        let handling = std::pin::pin!(serve(session, &frame, &method));
        crate::served::scope(observer, &method, id, span, handling).await;
    } else {
        serve(session, &frame, &method).await;
    }
}

/// Answers `initialize` at once (see `Session::handle_frame`), as one
/// observed operation.
pub(crate) fn initialize_now(session: &SessionParts, frame: &Frame) {
    let observer = session.surface.hooks.load().observer.clone();
    if !observer.is_watching() {
        return initialize(session, frame);
    }
    let span = begin(&*observer, frame);
    let arrived = Instant::now();
    initialize(session, frame);
    let operation = Operation {
        span: span.as_ref(),
        request_id: frame.id(),
        ..Operation::new(&Method::Initialize, arrived.elapsed())
    };
    observer.served(&operation);
}

/// The span of a client request, when the observer traces it: under the
/// client's own span if its `_meta` names one.
fn begin(observer: &dyn Observer, frame: &Frame) -> Option<SpanPlace> {
    if !observer.traces() {
        return None;
    }
    let (parent, state) = trace_context::read(frame);
    if parent.is_some() {
        return observer.begin(parent, state.as_deref());
    }
    // Else the HTTP request's own headers, when they name one.
    let headers = crate::origin::trace_headers();
    let parent = headers.as_deref().and_then(|(parent, _)| SpanContext::parse(parent));
    let state = parent.and(headers.as_deref().and_then(|(_, state)| state.as_deref()));
    observer.begin(parent, state)
}

async fn serve(session: &Arc<SessionParts>, frame: &Frame, method: &Method) {
    let _serving = crate::pipeline::Serving::start();
    let id = frame.id().unwrap_or("null");
    if !matches!(method, Method::Initialize | Method::Ping) && session.link.init.get().is_none() {
        let message = format!("'{}' received before initialize: send initialize first", method.as_str());
        return session.link.fail(frame, ErrorCode::InvalidRequest, &message);
    }
    // MCP names every parameter. Params by position would be read by
    // position (serde's derived readers take an array for a struct), and a
    // server behind Warden could read them otherwise: refused for every
    // method Warden reads; a method it does not know is forwarded as it is.
    if !matches!(method, Method::Other(_)) && frame.params().is_some_and(|params| !params.starts_with('{')) {
        let message = format!("params must be an object: MCP names the parameters of '{}'", method.as_str());
        return session.link.fail(frame, ErrorCode::InvalidParams, &message);
    }
    match method {
        Method::Initialize => initialize(session, frame),
        Method::Ping => session.link.respond(frame, result_response(id, "{}")),
        Method::ToolsList | Method::PromptsList | Method::ResourcesList | Method::ResourceTemplatesList => {
            lists::list(session, frame, method).await
        }
        Method::ToolsCall | Method::PromptsGet => named::call_named(session, frame, method).await,
        Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
            resources::call_resource(session, frame, method).await
        }
        Method::Complete => resources::complete(session, frame).await,
        Method::SetLevel => lists::set_level(session, frame).await,
        Method::TasksGet | Method::TasksResult | Method::TasksCancel => tasks::call_task(session, frame, method).await,
        Method::TasksList => tasks::list_tasks(session, frame).await,
        _ => named::call_unrouted(session, frame, method).await,
    }
}
