//! Each client request's operation as the observer sees it: its method,
//! what it named, the server it went to, how it ended, how long it took,
//! and its span when it is traced.
//!
//! A request is handled by several functions (routing, the pipeline, error
//! answers along the way), and only some of them know its tool or its
//! error. Rather than thread a record through all of them, the request's
//! task carries it ([`scope`]): the pipeline records the operation it ran
//! ([`record`]) and reads the span to place what it forwards ([`span`]),
//! an error answer notes its code ([`failed`]), and whatever nobody
//! recorded is recorded when the request's handling ends.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use warden_jsonrpc::{IdText, Method};

use crate::pipeline::{ApprovalWait, ErrorType, Observer, Operation, SpanPlace, Target};

/// What the request's task has noted so far.
struct Noted {
    arrived: Instant,
    /// The request's id (JSON text).
    id: Option<IdText>,
    span: Option<SpanPlace>,
    error: Option<ErrorType>,
    /// How its approval ended (outcome, channel), and when.
    approval: Option<(&'static str, Box<str>, Instant)>,
    recorded: bool,
}

// Set (as a pointer to the record inside the request's [`Scoped`]) only
// while the request's handling is polled: entering costs a pointer, where
// a Tokio task-local would swap the whole record in and out at each poll.
scoped_tls::scoped_thread_local!(static NOTED: RefCell<Noted>);

/// Handles a client request (`handling`, with id `id`) as one observed
/// operation, in `span` when it is traced.
///
/// A plain function returning [`Scoped`], not an `async fn`: an `async fn`
/// keeps its arguments in its state beside what it awaits, and the request's
/// future would be held there twice (and once more by an `async` block
/// around it), which the runtime then copies whole when it boxes the task.
pub(crate) fn scope<'m, F: Future<Output = ()>>(
    observer: Arc<dyn Observer>,
    method: &'m Method,
    id: Option<&str>,
    span: Option<SpanPlace>,
    handling: F,
) -> Scoped<'m, F> {
    let arrived = Instant::now();
    let noted = Noted { arrived, id: id.map(IdText::from), span, error: None, approval: None, recorded: false };
    Scoped { handling, noted: RefCell::new(noted), observer, method, arrived }
}

pin_project_lite::pin_project! {
    /// A request's handling with its record in scope (see [`scope`]): when
    /// it ends, what nobody recorded is recorded.
    pub(crate) struct Scoped<'m, F: Future<Output = ()>> {
        #[pin]
        handling: F,
        noted: RefCell<Noted>,
        observer: Arc<dyn Observer>,
        method: &'m Method,
        arrived: Instant,
    }
}

impl<F: Future<Output = ()>> Future for Scoped<'_, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        let handling = this.handling;
        if NOTED.set(this.noted, || handling.poll(cx)).is_pending() {
            return Poll::Pending;
        }
        let mut noted = this.noted.borrow_mut();
        if !std::mem::replace(&mut noted.recorded, true) {
            let operation = Operation {
                error: noted.error,
                span: noted.span.as_ref(),
                request_id: noted.id.as_deref(),
                ..Operation::new(this.method, this.arrived.elapsed())
            };
            this.observer.served(&operation);
        }
        Poll::Ready(())
    }
}

/// Notes that the request was answered with a JSON-RPC error with `code`.
pub(crate) fn failed(code: i64) {
    with_noted(|noted| noted.borrow_mut().error = Some(ErrorType::Code(code)));
}

/// Notes how the request's approval ended: `outcome` by `channel`, now.
pub(crate) fn approval(outcome: &'static str, channel: &str) {
    with_noted(|noted| noted.borrow_mut().approval = Some((outcome, channel.into(), Instant::now())));
}

/// The request's span, when it is traced.
pub(crate) fn span() -> Option<SpanPlace> {
    with_noted(|noted| noted.borrow().span.clone()).flatten()
}

/// Records the request as the pipeline ran it: to `server`, naming
/// `target`, stopped or escalated by `decision` (decision, rule), ended by
/// `error`. Outside a request's task (no [`scope`]), records nothing.
pub(crate) fn record(
    observer: &dyn Observer,
    method: &Method,
    server: &str,
    target: Option<Target<'_>>,
    decision: Option<(&str, &str)>,
    error: Option<ErrorType>,
) {
    with_noted(|noted| {
        let mut noted = noted.borrow_mut();
        let approval = noted.approval.as_ref().map(|(outcome, channel, at)| ApprovalWait {
            outcome,
            channel,
            settled_after: at.saturating_duration_since(noted.arrived),
        });
        let operation = Operation {
            target,
            server: Some(server),
            error,
            span: noted.span.as_ref(),
            request_id: noted.id.as_deref(),
            decision,
            approval,
            ..Operation::new(method, noted.arrived.elapsed())
        };
        observer.served(&operation);
        noted.recorded = true;
    });
}

/// Runs `f` on the record of the request being polled; `None` outside one.
fn with_noted<T>(f: impl FnOnce(&RefCell<Noted>) -> T) -> Option<T> {
    NOTED.is_set().then(|| NOTED.with(f))
}
