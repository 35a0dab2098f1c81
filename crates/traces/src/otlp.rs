//! OTLP's protobuf encoding of spans (`ExportTraceServiceRequest`, from
//! opentelemetry-proto's `collector/trace/v1` and `trace/v1`).
//!
//! Written by hand: the five messages a trace export needs are a few
//! dozen lines of protobuf's wire format, where the OpenTelemetry SDK and
//! its exporter would add about 30 crates and 80 s to a clean build (see
//! the monitoring docs). Field numbers are the proto files'.

use bytes::Bytes;

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH: u8 = 2;
const FIXED32: u8 = 5;

/// Bytes kept before a batch's spans, where [`export_request`] writes the
/// request's header (about 40 bytes and the service's name).
pub(crate) const HEADROOM: usize = 128;

/// The body of a POST to `/v1/traces`: the spans of `batch` (after its
/// first [`HEADROOM`] bytes, `ScopeSpans.spans` fields) of service
/// `service`. The header goes in the room before them, so the spans are
/// not copied (unless a very long service name needs more room).
pub(crate) fn export_request(service: &str, mut batch: Vec<u8>) -> Bytes {
    let spans = batch.len().saturating_sub(HEADROOM);
    // ResourceSpans.resource { attributes }
    let mut resource = Vec::with_capacity(32 + service.len());
    nested(&mut resource, 1, |out| key_value(out, 1, "service.name", service));
    // ScopeSpans.scope
    let mut scope = Vec::with_capacity(32);
    nested(&mut scope, 1, |out| {
        string(out, 1, "warden");
        string(out, 2, env!("CARGO_PKG_VERSION"));
    });
    let scope_spans = scope.len() + spans;
    let resource_spans = resource.len() + field_len(scope_spans);
    let mut header = Vec::with_capacity(HEADROOM);
    // ExportTraceServiceRequest.resource_spans
    tag(&mut header, 1, LENGTH);
    varint(&mut header, resource_spans as u64);
    header.extend_from_slice(&resource);
    // ResourceSpans.scope_spans
    tag(&mut header, 2, LENGTH);
    varint(&mut header, scope_spans as u64);
    header.extend_from_slice(&scope);
    if header.len() <= HEADROOM && batch.len() >= HEADROOM {
        let start = HEADROOM - header.len();
        batch[start..HEADROOM].copy_from_slice(&header);
        Bytes::from(batch).slice(start..)
    } else {
        header.extend_from_slice(batch.get(HEADROOM..).unwrap_or_default());
        Bytes::from(header)
    }
}

/// A `KeyValue` with a string value, as field `field`. Every length is
/// known before a byte is written, so nothing is moved to widen one.
#[inline]
pub(crate) fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &str) {
    // KeyValue.value: AnyValue { string_value (1) }
    let any = field_len(value.len());
    let pair = field_len(key.len()) + field_len(any);
    out.reserve(8 + pair);
    tag(out, field, LENGTH);
    varint(out, pair as u64);
    string(out, 1, key);
    tag(out, 2, LENGTH);
    varint(out, any as u64);
    string(out, 1, value);
}

/// A `KeyValue` with an integer value, as field `field`.
pub(crate) fn key_int(out: &mut Vec<u8>, field: u32, key: &str, value: i64) {
    nested(out, field, |out| {
        string(out, 1, key);
        // KeyValue.value: AnyValue.int_value, two's complement as a 64-bit varint.
        nested(out, 2, |out| {
            tag(out, 3, VARINT);
            varint(out, value as u64);
        });
    });
}

/// A fixed 64-bit field.
pub(crate) fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&value.to_le_bytes());
}

/// A fixed 32-bit field.
pub(crate) fn fixed32(out: &mut Vec<u8>, field: u32, value: u32) {
    tag(out, field, FIXED32);
    out.extend_from_slice(&value.to_le_bytes());
}

/// A varint field.
pub(crate) fn uint(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, VARINT);
    varint(out, value);
}

/// A length-delimited field `field` whose content `body` writes in place:
/// one byte is kept for the length, and widened (the content moved) only
/// when the content is 128 bytes or more. No message gets a buffer of its
/// own.
pub(crate) fn nested(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    nested_in(out, field, 1, body);
}

/// [`nested`] for a message that is usually 128 to 16,383 bytes long (a
/// span): two bytes are kept for its length, so it is not moved.
pub(crate) fn nested_long(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    nested_in(out, field, 2, body);
}

/// A length-delimited field with `kept` bytes kept for its length; the
/// content is moved only when its length needs another width.
fn nested_in(out: &mut Vec<u8>, field: u32, kept: usize, body: impl FnOnce(&mut Vec<u8>)) {
    tag(out, field, LENGTH);
    let at = out.len();
    out.resize(at + kept, 0);
    body(out);
    let length = out.len() - at - kept;
    let (prefix, used) = varint_bytes(length as u64);
    if used != kept {
        let end = out.len();
        if used > kept {
            out.resize(end + used - kept, 0);
        }
        out.copy_within(at + kept..end, at + used);
        out.truncate(end + used - kept);
    }
    out[at..at + used].copy_from_slice(&prefix[..used]);
}

/// The length of a length-delimited field (numbered below 16) holding
/// `content` bytes: its tag, its length's varint, the bytes.
#[inline]
fn field_len(content: usize) -> usize {
    1 + varint_len(content as u64) + content
}

/// How many bytes `value` takes as a varint.
#[inline]
fn varint_len(value: u64) -> usize {
    // Seven bits a byte; 0 still takes one.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline(always)]
fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

/// `value` as a varint. Inlined: a span writes about fifteen, nearly all
/// of them tags and lengths of one byte.
#[inline(always)]
fn varint(out: &mut Vec<u8>, value: u64) {
    if value < 0x80 {
        out.push(value as u8);
    } else {
        long_varint(out, value);
    }
}

#[inline(never)]
fn long_varint(out: &mut Vec<u8>, value: u64) {
    let (bytes, used) = varint_bytes(value);
    out.extend_from_slice(&bytes[..used]);
}

/// `value` as a varint, on the stack (at most 10 bytes), and its length.
fn varint_bytes(mut value: u64) -> ([u8; 10], usize) {
    let (mut bytes, mut used) = ([0u8; 10], 0);
    while value >= 0x80 {
        bytes[used] = (value as u8) | 0x80;
        value >>= 7;
        used += 1;
    }
    bytes[used] = value as u8;
    (bytes, used + 1)
}

#[inline]
pub(crate) fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    tag(out, field, LENGTH);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

#[inline]
pub(crate) fn string(out: &mut Vec<u8>, field: u32, value: &str) {
    bytes(out, field, value.as_bytes());
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
    fn a_long_message_gets_a_wider_length() {
        let mut out = Vec::new();
        nested(&mut out, 1, |out| out.extend_from_slice(&[7; 200]));
        assert_eq!(&out[..3], [0x0a, 0xc8, 0x01], "200 as a two-byte varint");
        assert_eq!(out.len(), 203);
        out.clear();
        nested(&mut out, 1, |out| out.extend_from_slice(&[7; 20_000]));
        assert_eq!(&out[..4], [0x0a, 0xa0, 0x9c, 0x01], "20,000 as a three-byte varint");
        assert_eq!((out.len(), out[4], out[out.len() - 1]), (20_004, 7, 7));
    }

    #[test]
    fn a_long_messages_length_takes_the_width_it_needs() {
        for (content, prefix) in
            [(5, vec![0x0a, 5]), (200, vec![0x0a, 0xc8, 0x01]), (20_000, vec![0x0a, 0xa0, 0x9c, 0x01])]
        {
            let mut out = vec![0xff];
            nested_long(&mut out, 1, |out| out.extend((0..content).map(|i| i as u8)));
            assert_eq!(&out[1..1 + prefix.len()], prefix, "{content} bytes");
            let body = &out[1 + prefix.len()..];
            assert_eq!(body.len(), content);
            assert!(body.iter().enumerate().all(|(i, &b)| b == i as u8), "{content} bytes kept in order");
        }
    }

    #[test]
    fn varint_lengths_match_the_encoding() {
        for value in [0, 1, 127, 128, 16_383, 16_384, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            varint(&mut out, value);
            assert_eq!(varint_len(value), out.len(), "{value}");
        }
    }

    #[test]
    fn a_request_is_its_header_before_the_batchs_spans() {
        let spans: Vec<u8> = (0..300).map(|i| i as u8).collect();
        for service in ["warden", &"s".repeat(200)] {
            let mut reference = Vec::new();
            nested(&mut reference, 1, |out| {
                nested(out, 1, |out| key_value(out, 1, "service.name", service));
                nested(out, 2, |out| {
                    nested(out, 1, |out| {
                        string(out, 1, "warden");
                        string(out, 2, env!("CARGO_PKG_VERSION"));
                    });
                    out.extend_from_slice(&spans);
                });
            });
            let mut batch = vec![0; HEADROOM];
            batch.extend_from_slice(&spans);
            assert_eq!(export_request(service, batch), reference, "service of {} bytes", service.len());
        }
    }

    #[test]
    fn a_key_value_is_nested_as_the_proto_says() {
        let mut out = Vec::new();
        key_value(&mut out, 9, "k", "v");
        // field 9 (len) { field 1 "k", field 2 (len) { field 1 "v" } }
        assert_eq!(out, [0x4a, 8, 0x0a, 1, b'k', 0x12, 3, 0x0a, 1, b'v']);
        // A value of 200 bytes: every length is two bytes wide where it must be.
        let value = "v".repeat(200);
        let mut long = Vec::new();
        key_value(&mut long, 9, "k", &value);
        let mut reference = Vec::new();
        nested(&mut reference, 9, |out| {
            string(out, 1, "k");
            nested(out, 2, |out| string(out, 1, &value));
        });
        assert_eq!(long, reference);
    }
}
