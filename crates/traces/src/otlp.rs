//! OTLP's protobuf encoding of spans (`ExportTraceServiceRequest`, from
//! opentelemetry-proto's `collector/trace/v1` and `trace/v1`).
//!
//! Written by hand: the five messages a trace export needs are a few
//! dozen lines of protobuf's wire format, where the OpenTelemetry SDK and
//! its exporter would add about 30 crates and 80 s to a clean build (see
//! the monitoring docs). Field numbers are the proto files'.

use crate::span::{Event, SpanData, Value};

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH: u8 = 2;
const FIXED32: u8 = 5;

/// The body of a POST to `/v1/traces`: `spans` of service `service`.
pub(crate) fn export_request(service: &str, spans: &[SpanData]) -> Vec<u8> {
    let mut resource = Vec::new();
    key_value(&mut resource, 1, "service.name", &Value::Str(service.to_owned()));
    let mut scope = Vec::new();
    string(&mut scope, 1, "warden");
    string(&mut scope, 2, env!("CARGO_PKG_VERSION"));
    let mut scope_spans = Vec::new();
    message(&mut scope_spans, 1, &scope);
    for span in spans {
        message(&mut scope_spans, 2, &encode_span(span));
    }
    let mut resource_spans = Vec::new();
    message(&mut resource_spans, 1, &resource);
    message(&mut resource_spans, 2, &scope_spans);
    let mut request = Vec::new();
    message(&mut request, 1, &resource_spans);
    request
}

fn encode_span(span: &SpanData) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    bytes(&mut out, 1, &span.trace_id);
    bytes(&mut out, 2, &span.span_id);
    if let Some(state) = &span.trace_state {
        string(&mut out, 3, state);
    }
    if let Some(parent) = &span.parent_span_id {
        bytes(&mut out, 4, parent);
    }
    string(&mut out, 5, &span.name);
    tag(&mut out, 6, VARINT);
    varint(&mut out, span.kind as u64);
    tag(&mut out, 7, FIXED64);
    out.extend_from_slice(&span.start_unix_nanos.to_le_bytes());
    tag(&mut out, 8, FIXED64);
    out.extend_from_slice(&span.end_unix_nanos.to_le_bytes());
    for (key, value) in &span.attributes {
        key_value(&mut out, 9, key, value);
    }
    for event in &span.events {
        message(&mut out, 11, &encode_event(event));
    }
    // Status: ERROR (2) with its message, or UNSET (no field).
    if let Some(message_text) = &span.error {
        let mut status = Vec::new();
        string(&mut status, 2, message_text);
        tag(&mut status, 3, VARINT);
        varint(&mut status, 2);
        message(&mut out, 15, &status);
    }
    // Flags: the sampled bit, as the W3C context carries it.
    tag(&mut out, 16, FIXED32);
    out.extend_from_slice(&1u32.to_le_bytes());
    out
}

fn encode_event(event: &Event) -> Vec<u8> {
    let mut out = Vec::new();
    tag(&mut out, 1, FIXED64);
    out.extend_from_slice(&event.time_unix_nanos.to_le_bytes());
    string(&mut out, 2, event.name);
    for (key, value) in &event.attributes {
        key_value(&mut out, 3, key, value);
    }
    out
}

/// A `KeyValue` as field `field`.
fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &Value) {
    let mut any = Vec::new();
    match value {
        Value::Str(text) => string(&mut any, 1, text),
        Value::Int(number) => {
            tag(&mut any, 3, VARINT);
            // int64: two's complement as a 64-bit varint.
            varint(&mut any, *number as u64);
        }
    }
    let mut pair = Vec::new();
    string(&mut pair, 1, key);
    message(&mut pair, 2, &any);
    message(out, field, &pair);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    tag(out, field, LENGTH);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn string(out: &mut Vec<u8>, field: u32, value: &str) {
    bytes(out, field, value.as_bytes());
}

fn message(out: &mut Vec<u8>, field: u32, encoded: &[u8]) {
    bytes(out, field, encoded);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_groups_of_seven() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        out.clear();
        varint(&mut out, (-1i64) as u64);
        assert_eq!(out.len(), 10, "a negative int64 takes ten bytes");
    }

    #[test]
    fn a_key_value_is_nested_as_the_proto_says() {
        let mut out = Vec::new();
        key_value(&mut out, 9, "k", &Value::Str("v".into()));
        // field 9 (len) { field 1 "k", field 2 (len) { field 1 "v" } }
        assert_eq!(out, [0x4a, 8, 0x0a, 1, b'k', 0x12, 3, 0x0a, 1, b'v']);
    }
}
