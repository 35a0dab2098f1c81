//! What a modern request gets back, and what dropping it undoes.

use tokio::sync::mpsc;

use super::lane::DropCancel;
use crate::work::Work;

/// One message of a modern request's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyMessage {
    /// A notification about the request (progress, a log message, a change
    /// on a listen stream).
    Note(String),
    /// The final message: the answer, or `input_required`.
    Last(String),
}

/// What a modern request gets back: notifications, then one final message
/// (a listen stream: notifications until it is dropped). Dropping it before
/// the final message cancels the request.
///
/// It carries the request's [`Work`]: awaiting the reply runs it, in the
/// caller's task (no task spawned for a call answered at once); dropped
/// unfinished, it goes on in a task of its own.
pub struct Reply {
    pub(super) pieces: mpsc::UnboundedReceiver<ReplyMessage>,
    pub(super) work: Option<Work>,
    /// Dropped with the reply: undoes what an unfinished request leaves
    /// behind.
    pub(super) _undo: Option<DropCancel>,
}

impl Reply {
    /// A reply on `pieces`, with the request's `work` and what undoes it
    /// when dropped unfinished.
    pub(super) fn new(
        pieces: mpsc::UnboundedReceiver<ReplyMessage>,
        work: Option<Work>,
        undo: Option<DropCancel>,
    ) -> Reply {
        Reply { pieces, work, _undo: undo }
    }

    /// The next message; `None` once the answer was given.
    pub async fn next(&mut self) -> Option<ReplyMessage> {
        let Reply { pieces, work, .. } = self;
        if let Some(running) = work {
            tokio::select! {
                biased;
                piece = pieces.recv() => return piece,
                () = running => *work = None,
            }
        }
        pieces.recv().await
    }

    /// A reply that is only `text`.
    pub(super) fn done(text: String) -> Reply {
        let (to_client, pieces) = mpsc::unbounded_channel();
        let _ = to_client.send(ReplyMessage::Last(text));
        Reply::new(pieces, None, None)
    }
}
