//! Where generated files go.

use std::path::Path;

use anyhow::Context;

/// Writes `text` to `path`, or to stdout when there is none.
pub fn write(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match path {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
