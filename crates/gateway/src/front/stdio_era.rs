//! Which revision a stdio client speaks, and serving it.
//!
//! One client holds the connection, so the era is chosen once, by how the
//! client opens: `initialize` pins the 2025 era (the session serves the
//! client as before); an enveloped request pins 2026-07-28, and a lane takes
//! the session over. `server/discover` is answered either way without
//! pinning: a dual-era client may probe with it and still fall back to
//! `initialize`.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::task::JoinHandle;
use warden_jsonrpc::{ErrorCode, Frame, Kind, Members, error_response};

use super::stdio_output::ClientOutput;
use crate::modern::{self, Envelope, Lane, LaneOutlet, ReplyMessage, Sealer};
use crate::session::Session;
use crate::work::Work;

/// The era of the stdio client, once known.
pub(super) struct StdioEra {
    session: Session,
    outlet: LaneOutlet,
    to_client: ClientOutput,
    era: Era,
}

enum Era {
    Undecided,
    Mcp2025,
    Modern { lane: Lane, running: HashMap<String, JoinHandle<()>> },
}

impl StdioEra {
    /// A client not yet heard from, served by `session`, whose outlet is
    /// `outlet` (falling back to `to_client`, stdout).
    pub fn new(session: Session, outlet: LaneOutlet, to_client: ClientOutput) -> StdioEra {
        StdioEra { session, outlet, to_client, era: Era::Undecided }
    }

    /// Takes one message from the client. A 2025-era request's work is
    /// handed back, for the front to run (see [`Work`]); everything else is
    /// handled here.
    pub fn handle(&mut self, text: String) -> Option<Work> {
        let frame = match Frame::parse(text) {
            Ok(frame) => frame,
            // The session answers what cannot be parsed, in either era.
            Err(err) => {
                self.session.reject_invalid(&err);
                return None;
            }
        };
        let enveloped = frame.kind() == Kind::Request && modern::is_modern(&frame);
        let discover = frame.method().is_some_and(|method| method.as_str() == "server/discover");
        match &mut self.era {
            Era::Undecided if discover && !enveloped => {
                self.refuse(&frame, modern::envelope::Envelope::read(&frame).err())
            }
            Era::Undecided if enveloped => {
                if discover {
                    self.discover(&frame);
                    return None;
                }
                let sealer = Arc::new(Sealer::new());
                let info = modern::envelope::client_info(&frame);
                let parked_for = self.session.request_state_lifetime();
                let lane = Lane::over(self.session.clone(), &self.outlet, sealer, info.as_deref(), parked_for);
                tracing::info!(session = self.session.id(), "the client speaks MCP 2026-07-28");
                self.era = Era::Modern { lane, running: HashMap::new() };
                self.handle_modern(frame);
            }
            Era::Undecided => {
                if frame.kind() == Kind::Request {
                    tracing::info!(session = self.session.id(), "the client speaks MCP 2025-11-25 or earlier");
                    self.era = Era::Mcp2025;
                }
                return self.session.take_frame(frame);
            }
            Era::Mcp2025 if enveloped => {
                let message = "this connection was opened with initialize (MCP 2025-11-25 or earlier): requests carry no 2026-07-28 envelope here";
                let _ = self.to_client.send(error_response(frame.id(), ErrorCode::InvalidRequest, message, None));
            }
            Era::Mcp2025 => return self.session.take_frame(frame),
            Era::Modern { .. } => self.handle_modern(frame),
        }
        None
    }

    /// `server/discover` before the era is known.
    fn discover(&self, frame: &Frame) {
        match Envelope::read(frame).and_then(|envelope| envelope.check_version()) {
            Ok(()) => {
                let _ = self.to_client.send(modern::discover::answer(frame.id().unwrap_or("null")));
            }
            Err(err) => self.refuse(frame, Some(err)),
        }
    }

    fn refuse(&self, frame: &Frame, err: Option<modern::EnvelopeError>) {
        if let Some(err) = err {
            let _ = self.to_client.send(err.response(frame.id()));
        }
    }

    /// A message on a modern connection.
    fn handle_modern(&mut self, frame: Frame) {
        let Era::Modern { lane, running } = &mut self.era else { return };
        running.retain(|_, task| !task.is_finished());
        match frame.kind() {
            Kind::Request => {}
            // Cancelling a request (or a listen stream) drops its reply.
            Kind::Notification if frame.method().is_some_and(|m| *m == warden_jsonrpc::Method::Cancelled) => {
                let id = frame
                    .params()
                    .and_then(|params| Members::parse(params).ok())
                    .and_then(|params| params.get("requestId").map(str::to_owned));
                if let Some(task) = id.and_then(|id| running.remove(&id)) {
                    task.abort();
                }
                return;
            }
            _ => return,
        }
        let id = frame.id().unwrap_or("null").to_owned();
        let envelope = if modern::is_modern(&frame) {
            Envelope::read(&frame).and_then(|envelope| envelope.check_version().map(|()| envelope))
        } else if frame.method().is_some_and(|method| *method == warden_jsonrpc::Method::Initialize) {
            let message = "this connection speaks MCP 2026-07-28 (its first request carried the envelope): initialize is not part of it";
            let _ = self.to_client.send(error_response(Some(&id), ErrorCode::MethodNotFound, message, None));
            return;
        } else {
            Envelope::read(&frame)
        };
        let envelope = match envelope {
            Ok(envelope) => envelope,
            Err(err) => {
                let _ = self.to_client.send(err.response(Some(&id)));
                return;
            }
        };
        let (lane, to_client) = (lane.clone(), self.to_client.clone());
        let task = tokio::spawn(async move {
            let mut reply = lane.serve(&frame, &envelope).await;
            while let Some(piece) = reply.next().await {
                let (ReplyMessage::Note(text) | ReplyMessage::Last(text)) = piece;
                if to_client.send(text).is_err() {
                    return;
                }
            }
        });
        running.insert(id, task);
    }
}
