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
    // Where the parse found the envelope's members side by side (as
    // clients write them), they are cut out where they are: nothing read
    // again, nothing copied.
    let meta = match frame.noted_protocol_keys() {
        Some((_, ProtocolKeys::None)) => return,
        Some((meta, ProtocolKeys::Together(cut))) => {
            if !splice.touches(&meta) {
                let cut = meta.start + cut.start as usize..meta.start + cut.end as usize;
                splice.replace(cut, String::new());
            }
            return;
        }
        Some((meta, ProtocolKeys::Apart)) => meta,
        None => match frame.param_members().and_then(|members| members.meta) {
            Some(meta) => frame.span_of(meta),
            None => return,
        },
    };
    if splice.touches(&meta) {
        return;
    }
    if let Some(without) = frame.text().get(meta.clone()).and_then(meta_without_envelope) {
        splice.replace(meta, without);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request as a 2025-era upstream gets it, from the splice alone
    /// (the connection's own pass would hide a cut that went wrong).
    fn sent(text: &str, splice: &mut Splice) -> String {
        let frame = Frame::parse(text).expect("a request");
        take_envelope_off(&frame, splice);
        splice.apply(frame.text())
    }

    #[test]
    fn the_envelope_is_cut_out_wherever_it_is_and_every_other_byte_kept() {
        const ENVELOPE: &str =
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
        let request = |meta: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{meta},"arguments":{{}}}}}}"#
            )
        };
        for (meta, without) in [
            (format!("{{{ENVELOPE}}}"), "{}"),
            (format!(r#"{{{ENVELOPE},"x/keep":1.50}}"#), r#"{"x/keep":1.50}"#),
            (format!(r#"{{"x/keep":1.50, {ENVELOPE}}}"#), r#"{"x/keep":1.50}"#),
            (format!(r#"{{"a":1,{ENVELOPE},"b":[2]}}"#), r#"{"a":1,"b":[2]}"#),
            // Apart: `_meta` is read again.
            (
                r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","a":1,"io.modelcontextprotocol/clientCapabilities":{}}"#.to_owned(),
                r#"{"a":1}"#,
            ),
            // An escaped key: the parse leaves `_meta` to this pass.
            (r#"{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28","a":1}"#.to_owned(), r#"{"a":1}"#),
        ] {
            assert_eq!(sent(&request(&meta), &mut Splice::new()), request(without), "{meta}");
            // As the lane submits it: under an id of another length, every
            // place noted moved.
            let lane = Frame::parse(request(&meta)).expect("a request").with_id_frame(r#""wm12345""#);
            let mut splice = Splice::new();
            take_envelope_off(&lane, &mut splice);
            assert_eq!(splice.apply(lane.text()), request(without).replacen("1", r#""wm12345""#, 1), "{meta}");
        }
        // Nothing to take off: nothing spliced.
        let plain = request(r#"{"progressToken":7}"#);
        assert_eq!(sent(&plain, &mut Splice::new()), plain);
        let bare = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        assert_eq!(sent(bare, &mut Splice::new()), bare);
    }

    #[test]
    fn an_edit_inside_meta_leaves_the_envelope_to_the_connection() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p"}}}"#;
        let token = text.find(r#""p""#).expect("the token");
        let mut splice = Splice::new();
        splice.replace(token..token + 3, r#""w1""#);
        assert_eq!(sent(text, &mut splice), text.replace(r#""p""#, r#""w1""#));
    }
}
