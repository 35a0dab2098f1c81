//! Server names: Warden's must be `[A-Za-z0-9_-]+`, because they prefix tool
//! names and clients accept nothing else there.

use indexmap::IndexMap;

use crate::error::ImportError;
use crate::node::{At, Doc};

/// `name` with every character Warden does not accept replaced by `_`.
pub(crate) fn sanitise(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// Gives each source name a valid Warden name, remembering the renames so
/// that references (profiles) follow them.
#[derive(Debug, Default)]
pub(crate) struct Renames {
    /// Source name → Warden name.
    names: IndexMap<String, String>,
}

impl Renames {
    /// The Warden name for `original`. `Ok(None)` when it is valid as it is;
    /// `Ok(Some(name))` when it had to change (the caller warns); `Err` with
    /// the other source name when two names end up the same.
    pub(crate) fn add(&mut self, original: &str) -> Result<Option<String>, String> {
        let name = if original.is_empty() { "_".to_owned() } else { sanitise(original) };
        if let Some((other, _)) = self.names.iter().find(|(other, taken)| **taken == name && *other != original) {
            return Err(other.clone());
        }
        self.names.insert(original.to_owned(), name.clone());
        Ok((name != original).then_some(name))
    }

    /// The Warden name for server `original` of `doc` (at `at`): a rename is
    /// added to `warnings`, a clash is an error naming both servers.
    pub(crate) fn server(
        &mut self,
        doc: &Doc<'_>,
        at: &At,
        original: &str,
        warnings: &mut Vec<String>,
    ) -> Result<String, ImportError> {
        match self.add(original) {
            Ok(None) => Ok(original.to_owned()),
            Ok(Some(name)) => {
                warnings.push(renamed_warning(original, &name));
                Ok(name)
            }
            Err(other) => {
                Err(doc.error(at, format!("servers {other:?} and {original:?} would get the same Warden name")))
            }
        }
    }

    /// The Warden name given to `original`, or `original` when it was never
    /// added (validation then reports the unknown server).
    pub(crate) fn get(&self, original: &str) -> String {
        self.names.get(original).cloned().unwrap_or_else(|| original.to_owned())
    }
}

/// The warning for a renamed server.
pub(crate) fn renamed_warning(original: &str, name: &str) -> String {
    format!(
        "server {original:?} is named {name:?}: Warden server names may only use letters, digits, '_' and '-' (they prefix tool names)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_invalid_names_and_catches_clashes() {
        let mut renames = Renames::default();
        assert_eq!(renames.add("files"), Ok(None));
        assert_eq!(renames.add("my.server"), Ok(Some("my_server".into())));
        assert_eq!(renames.add("my server"), Err("my.server".into()));
        assert_eq!(renames.get("my.server"), "my_server");
        assert_eq!(renames.get("unknown"), "unknown");
        assert_eq!(sanitise("a-b_C9:x/é"), "a-b_C9_x__");
    }
}
