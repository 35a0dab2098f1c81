//! Each client request's operation as the observer sees it: its method,
//! what it named, the server it went to, how it ended, how long it took.
//!
//! A request is handled by several functions (routing, the pipeline, error
//! answers along the way), and only some of them know its tool or its
//! error. Rather than thread a record through all of them, the request's
//! task carries it ([`scope`]): the pipeline records the operation it ran
//! ([`record`]), an error answer notes its code ([`failed`]), and whatever
//! nobody recorded is recorded when the request's handling ends.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use warden_jsonrpc::Method;

use crate::pipeline::{ErrorType, Observer, Operation, Target};

/// What the request's task has noted so far.
#[derive(Clone, Copy)]
struct Noted {
    arrived: Instant,
    error: Option<ErrorType>,
    recorded: bool,
}

tokio::task_local! {
    static NOTED: Cell<Noted>;
}

/// Handles a client request (`handling`) as one observed operation.
pub(crate) async fn scope(observer: Arc<dyn Observer>, method: &Method, handling: impl Future<Output = ()>) {
    let arrived = Instant::now();
    let noted = Cell::new(Noted { arrived, error: None, recorded: false });
    let (_, noted) = NOTED.scope(noted, async { (handling.await, NOTED.with(Cell::get)) }).await;
    if !noted.recorded {
        let operation =
            Operation { method, target: None, server: None, error: noted.error, elapsed: arrived.elapsed() };
        observer.served(&operation);
    }
}

/// Notes that the request was answered with a JSON-RPC error with `code`.
pub(crate) fn failed(code: i64) {
    let _ = NOTED.try_with(|noted| {
        let mut now = noted.get();
        now.error = Some(ErrorType::Code(code));
        noted.set(now);
    });
}

/// Records the request as the pipeline ran it: to `server`, naming
/// `target`, ended by `error`. Outside a request's task (no [`scope`]),
/// records nothing.
pub(crate) fn record(
    observer: &dyn Observer,
    method: &Method,
    server: &str,
    target: Option<Target<'_>>,
    error: Option<ErrorType>,
) {
    let _ = NOTED.try_with(|noted| {
        let mut now = noted.get();
        let operation = Operation { method, target, server: Some(server), error, elapsed: now.arrived.elapsed() };
        observer.served(&operation);
        now.recorded = true;
        noted.set(now);
    });
}
