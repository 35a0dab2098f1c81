//! Trace and span ids.
//!
//! Ids must be unique and hard to guess, not secret: each is a counter
//! mixed by SplitMix64 (a bijection, so two counters never give one id)
//! from a seed read once from the system's random source, without a
//! system call per id.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

static SEED: OnceLock<u64> = OnceLock::new();
static COUNTER: AtomicU64 = AtomicU64::new(1);

fn seed() -> u64 {
    *SEED.get_or_init(|| {
        let mut bytes = [0u8; 8];
        let read =
            std::fs::File::open("/dev/urandom").and_then(|mut file| std::io::Read::read_exact(&mut file, &mut bytes));
        match read {
            Ok(()) => u64::from_le_bytes(bytes),
            // Without it, the clock and the process id still tell processes apart.
            Err(_) => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                (now.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32)
            }
        }
    })
}

/// SplitMix64's output function: a bijection of `u64`.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A fresh non-zero 64-bit value.
fn next() -> u64 {
    loop {
        let value =
            mix(seed().wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        if value != 0 {
            return value;
        }
    }
}

/// A new span id.
pub(crate) fn span_id() -> [u8; 8] {
    next().to_be_bytes()
}

/// A new trace id.
pub(crate) fn trace_id() -> [u8; 16] {
    let mut id = [0; 16];
    id[..8].copy_from_slice(&next().to_be_bytes());
    id[8..].copy_from_slice(&next().to_be_bytes());
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ() {
        let ids: std::collections::HashSet<[u8; 8]> = (0..10_000).map(|_| span_id()).collect();
        assert_eq!(ids.len(), 10_000);
        assert_ne!(trace_id(), trace_id());
    }
}
