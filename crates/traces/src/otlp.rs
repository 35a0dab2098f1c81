//! OTLP's protobuf encoding of spans (`ExportTraceServiceRequest`, from
//! opentelemetry-proto's `collector/trace/v1` and `trace/v1`).
//!
//! Written by hand: the five messages a trace export needs are a few
//! dozen lines of protobuf's wire format, where the OpenTelemetry SDK and
//! its exporter would add about 30 crates and 80 s to a clean build (see
//! the monitoring docs). Field numbers are the proto files'.

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH: u8 = 2;
const FIXED32: u8 = 5;

/// The body of a POST to `/v1/traces`: `spans` (`ScopeSpans.spans`
/// fields, each an encoded `Span`) of service `service`.
pub(crate) fn export_request(service: &str, spans: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + spans.len());
    // ExportTraceServiceRequest.resource_spans
    nested(&mut out, 1, |out| {
        // ResourceSpans.resource { attributes }
        nested(out, 1, |out| key_value(out, 1, "service.name", service));
        // ResourceSpans.scope_spans
        nested(out, 2, |out| {
            nested(out, 1, |out| {
                string(out, 1, "warden");
                string(out, 2, env!("CARGO_PKG_VERSION"));
            });
            out.extend_from_slice(spans);
        });
    });
    out
}

/// A `KeyValue` with a string value, as field `field`.
pub(crate) fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &str) {
    nested(out, field, |out| {
        string(out, 1, key);
        // KeyValue.value: AnyValue.string_value
        nested(out, 2, |out| string(out, 1, value));
    });
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
    tag(out, field, LENGTH);
    let at = out.len();
    out.push(0);
    body(out);
    let length = out.len() - at - 1;
    if length < 0x80 {
        out[at] = length as u8;
    } else {
        let (prefix, used) = varint_bytes(length as u64);
        out.splice(at..at + 1, prefix[..used].iter().copied());
    }
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn varint(out: &mut Vec<u8>, value: u64) {
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

pub(crate) fn bytes(out: &mut Vec<u8>, field: u32, value: &[u8]) {
    tag(out, field, LENGTH);
    varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

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
    fn a_key_value_is_nested_as_the_proto_says() {
        let mut out = Vec::new();
        key_value(&mut out, 9, "k", "v");
        // field 9 (len) { field 1 "k", field 2 (len) { field 1 "v" } }
        assert_eq!(out, [0x4a, 8, 0x0a, 1, b'k', 0x12, 3, 0x0a, 1, b'v']);
    }
}
