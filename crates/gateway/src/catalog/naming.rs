//! How an upstream's tool and prompt names are shown to the client.

use sha2::{Digest, Sha256};
use warden_config::{Naming, PrefixMode};

/// Turns `(server, name)` into the name the client sees.
///
/// Deterministic: the same configuration always yields the same names, so a
/// client's cached names stay valid across restarts.
#[derive(Debug, Clone)]
pub struct Namer {
    separator: String,
    prefix: bool,
    max_length: usize,
}

impl Namer {
    /// A namer for `naming`, with `servers` servers configured.
    pub fn new(naming: &Naming, servers: usize) -> Self {
        let prefix = match naming.prefix {
            PrefixMode::Always => true,
            PrefixMode::Multiple => servers > 1,
            PrefixMode::Never => false,
        };
        Namer { separator: naming.separator.clone(), prefix, max_length: naming.max_length }
    }

    /// Whether client-facing names carry their server's prefix.
    pub fn prefixes(&self) -> bool {
        self.prefix
    }

    /// Whether `exposed` carries `server`'s prefix.
    pub fn has_prefix(&self, exposed: &str, server: &str) -> bool {
        self.prefix && exposed.strip_prefix(server).is_some_and(|rest| rest.starts_with(&self.separator))
    }

    /// The client-facing name of `name` on `server`.
    ///
    /// A name longer than the budget keeps its start and gets a short hash of
    /// the whole, so it stays recognisable and unique.
    pub fn expose(&self, server: &str, name: &str) -> String {
        let full = if self.prefix { format!("{server}{}{name}", self.separator) } else { name.to_owned() };
        if full.len() <= self.max_length {
            return full;
        }
        let hash = Sha256::digest(full.as_bytes());
        let suffix: String = hash[..4].iter().map(|byte| format!("{byte:02x}")).collect();
        let mut keep = self.max_length.saturating_sub(suffix.len() + 1);
        while !full.is_char_boundary(keep) {
            keep -= 1;
        }
        format!("{}_{suffix}", &full[..keep])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naming(prefix: PrefixMode) -> Naming {
        Naming { prefix, ..Naming::default() }
    }

    #[test]
    fn prefix_modes() {
        assert_eq!(Namer::new(&naming(PrefixMode::Always), 1).expose("fs", "read"), "fs__read");
        assert_eq!(Namer::new(&naming(PrefixMode::Multiple), 1).expose("fs", "read"), "read");
        assert_eq!(Namer::new(&naming(PrefixMode::Multiple), 2).expose("fs", "read"), "fs__read");
        assert_eq!(Namer::new(&naming(PrefixMode::Never), 2).expose("fs", "read"), "read");
        let dash = Naming { separator: "-".into(), ..Naming::default() };
        assert_eq!(Namer::new(&dash, 1).expose("fs", "read"), "fs-read");
    }

    #[test]
    fn long_names_are_shortened_deterministically_within_budget() {
        let namer = Namer::new(&naming(PrefixMode::Always), 1);
        let long = "a_tool_with_a_deliberately_very_long_name_that_exceeds_the_limits_xyz";
        let short = namer.expose("fixture", long);
        assert_eq!(short.len(), 64);
        assert!(short.starts_with("fixture__a_tool_with"));
        assert_eq!(short, namer.expose("fixture", long));
        assert_ne!(short, namer.expose("fixture", &format!("{long}2")));
        assert!(short.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        let unicode = namer.expose("s", &"é".repeat(40));
        assert!(unicode.len() <= 64);
    }
}
