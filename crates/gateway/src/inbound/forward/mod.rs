//! Forwarding one request to one upstream: Warden's id and progress token
//! in place of the client's, and the rounds a modern upstream asks for
//! input in ([`rounds`]).

mod rounds;

use std::ops::Range;

use warden_jsonrpc::{Frame, IdText, ProtocolKeys, Splice};
use warden_upstream::UpstreamError;
use warden_upstream::era::meta_without_envelope;

use crate::parts::SessionParts;
use crate::parts::{InFlight, TokenTarget};
use rounds::{INPUT_REQUIRED, complete_rounds};
use warden_sync::lock;

/// How a forwarded request ended.
pub(super) enum Forwarded {
    /// The upstream answered.
    Answer(Frame),
    /// It could not be reached, or went away.
    Failed(UpstreamError),
    /// The client cancelled it; nothing is sent back.
    Cancelled,
}

/// Sends `frame` to upstream `upstream` with Warden's id (and progress
/// token) in place of the client's, and waits for the answer; it is in
/// flight under `serial`.
pub(super) async fn forward(
    session: &SessionParts,
    frame: &Frame,
    serial: u64,
    upstream: usize,
    mut splice: Splice,
    token: Option<Range<usize>>,
) -> Forwarded {
    let connection = match session.connection(upstream).await {
        Ok(connection) => connection,
        Err(err) => return Forwarded::Failed(err),
    };
    let client_id = IdText::from(frame.id().unwrap_or("null"));
    let token = token.map(|span| {
        let issued = format!("\"w{}\"", session.next());
        let original = frame.text()[span.clone()].to_owned();
        let target = TokenTarget::Client { token: original, request: client_id.to_string() };
        lock(&session.maps.tokens).insert(issued.clone(), target);
        splice.replace(span, issued.clone());
        issued
    });
    let release = |token: &Option<String>| {
        if let Some(token) = token {
            lock(&session.maps.tokens).remove(token);
        }
    };
    if connection.is_2025_era() {
        take_envelope_off(frame, &mut splice);
    }
    let id_span = frame.id_span();
    if connection.is_modern()
        && let Some(level) = session.log_level_for(&connection)
    {
        // The level rides each request; the connection may be newer
        // than the client's logging/setLevel.
        connection.set_log_level(level);
    }
    let sent = connection.send_request(|id| splice.apply_with(frame.text(), id_span.map(|span| (span, id))));
    // A modern upstream may answer input_required: the request is sent
    // again, so its renames are kept.
    let base = connection.is_modern().then_some(splice);
    let (upstream_id, response) = match sent {
        Ok(sent) => sent,
        Err(err) => {
            release(&token);
            return Forwarded::Failed(err);
        }
    };
    let entry = InFlight { upstream, connection: connection.clone(), upstream_id, token: token.clone(), serial };
    lock(&session.maps.in_flight).insert(client_id.clone(), entry);
    let mut answer = response.await;
    if let (Some(base), Ok(first)) = (&base, &answer)
        && first.payload().is_some_and(|payload| INPUT_REQUIRED.is_in(payload))
        && session.maps.still_in_flight(&client_id, serial)
    {
        let rounds = complete_rounds(session, frame, (&client_id, serial), &connection, base, first.clone());
        answer = match Box::pin(rounds).await {
            Forwarded::Answer(frame) => Ok(frame),
            Forwarded::Failed(err) => Err(err),
            Forwarded::Cancelled => {
                session.maps.take_in_flight(&client_id, serial);
                release(&token);
                return Forwarded::Cancelled;
            }
        };
    }
    let entry = session.maps.take_in_flight(&client_id, serial);
    release(&token);
    match (entry, answer) {
        (None, _) => Forwarded::Cancelled,
        (Some(_), Ok(frame)) => Forwarded::Answer(frame),
        (Some(_), Err(err)) => Forwarded::Failed(err),
    }
}

/// Takes a 2026-07-28 client's envelope off `_meta`, for a 2025-era
/// upstream, in the splice applied anyway: the parse found `_meta`, and the
/// connection need not read the request again to find it. Where something
/// else is spliced inside `_meta` (a progress token, a trace parent), the
/// connection takes it off instead.
fn take_envelope_off(frame: &Frame, splice: &mut Splice) {
    let Some(meta) = frame.param_members().and_then(|members| members.meta) else { return };
    let span = frame.span_of(meta);
    if splice.touches(&span) {
        return;
    }
    // Where the parse found the envelope's members side by side (as
    // clients write them), they are cut out without reading `_meta` again.
    let without = match frame.meta_members() {
        Some(members) => match members.protocol_keys {
            ProtocolKeys::None => return,
            ProtocolKeys::Together(_) => members.without_protocol_keys(),
            ProtocolKeys::Apart => meta_without_envelope(meta),
        },
        None => meta_without_envelope(meta),
    };
    if let Some(without) = without {
        splice.replace(span, without);
    }
}
