use super::*;

fn response(id: &str, text: &str) -> Outbound {
    Outbound { text: text.to_owned(), request: Some(id.into()), is_response: true, result: None, alone: false }
}

fn related(id: &str, text: &str) -> Outbound {
    Outbound { text: text.to_owned(), request: Some(id.into()), is_response: false, result: None, alone: false }
}

fn unrelated(text: &str) -> Outbound {
    Outbound { text: text.to_owned(), request: None, is_response: false, result: None, alone: false }
}

fn stream(answer: &mut oneshot::Receiver<Answer>) -> mpsc::UnboundedReceiver<SseEvent> {
    match answer.try_recv() {
        Ok(Answer::Stream(events)) => events,
        other => panic!("expected a stream, got {other:?}"),
    }
}

fn drain(events: &mut mpsc::UnboundedReceiver<SseEvent>) -> Vec<(String, String)> {
    let mut all = Vec::new();
    while let Ok(event) = events.try_recv() {
        all.push((event.id, event.data.to_string()));
    }
    all
}

#[test]
fn a_lone_response_is_a_json_body() {
    let streams = Streams::new(16, false);
    let mut answer = streams.expect("1", true).unwrap();
    streams.deliver(response("1", "R1"));
    assert!(matches!(answer.try_recv(), Ok(Answer::Json(text)) if text == "R1"));
}

#[test]
fn progress_first_turns_the_answer_into_a_stream_that_ends_with_the_response() {
    let streams = Streams::new(16, false);
    let mut answer = streams.expect("7", true).unwrap();
    streams.deliver(related("7", "P1"));
    let mut events = stream(&mut answer);
    streams.deliver(related("7", "P2"));
    streams.deliver(response("7", "R7"));
    let got = drain(&mut events);
    assert_eq!(got.iter().map(|(_, data)| data.as_str()).collect::<Vec<_>>(), ["P1", "P2", "R7"]);
    assert_eq!(got[0].0, "1-1");
    // The stream is over: its sender is gone.
    assert!(events.try_recv().is_err() && events.is_closed());
}

#[test]
fn a_client_that_takes_only_json_gets_the_rest_on_the_get_stream() {
    let streams = Streams::new(16, false);
    let mut answer = streams.expect("1", false).unwrap();
    streams.deliver(related("1", "P"));
    streams.deliver(response("1", "R"));
    assert!(matches!(answer.try_recv(), Ok(Answer::Json(text)) if text == "R"));
    let mut get = streams.attach(None).unwrap();
    assert_eq!(drain(&mut get), [("0-1".to_owned(), "P".to_owned())]);
}

#[test]
fn unrelated_messages_wait_for_the_get_stream() {
    let streams = Streams::new(16, false);
    streams.deliver(unrelated("N1"));
    streams.deliver(unrelated("N2"));
    let mut get = streams.attach(None).unwrap();
    assert_eq!(drain(&mut get).len(), 2);
    streams.deliver(unrelated("N3"));
    assert_eq!(drain(&mut get), [("0-3".to_owned(), "N3".to_owned())]);
}

#[test]
fn a_dropped_stream_resumes_after_the_last_event_seen() {
    let streams = Streams::new(16, false);
    let mut answer = streams.expect("5", true).unwrap();
    streams.deliver(related("5", "P1"));
    let events = stream(&mut answer);
    drop(events);
    streams.deliver(related("5", "P2"));
    streams.deliver(response("5", "R5"));
    let mut resumed = streams.attach(Some("1-1")).unwrap();
    let got = drain(&mut resumed);
    assert_eq!(got, [("1-2".to_owned(), "P2".to_owned()), ("1-3".to_owned(), "R5".to_owned())]);
    // Replayed to the end: the stream is gone.
    assert_eq!(streams.attach(Some("1-3")).unwrap_err(), OpenError::UnknownEvent);
}

#[test]
fn duplicate_ids_are_refused_and_the_sse_transport_sends_everything_on_one_stream() {
    let streams = Streams::new(16, false);
    let _answer = streams.expect("1", true).unwrap();
    assert_eq!(streams.expect("1", true).unwrap_err(), OpenError::DuplicateId);

    let sse_transport = Streams::new(16, true);
    let mut events = sse_transport.attach(None).unwrap();
    sse_transport.deliver(related("1", "P"));
    sse_transport.deliver(response("1", "R"));
    assert_eq!(drain(&mut events).len(), 2);
}

#[test]
fn the_backlog_is_bounded_and_carriage_returns_are_dropped() {
    let streams = Streams::new(2, false);
    for n in 0..5 {
        streams.deliver(unrelated(&format!("{{\r\n\"n\":{n}}}")));
    }
    let mut get = streams.attach(None).unwrap();
    let got = drain(&mut get);
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].1, "{\n\"n\":4}");
}
