//! `dynamic-lists.json`: resolved lists that rules name as `@name`.

use indexmap::IndexMap;

use crate::error::ImportError;
use crate::node::{At, Doc, Node};

/// Each list's effective values, as IronCurtain computes them when it loads
/// the policy: `(values + manualAdditions) - manualRemovals`, without
/// duplicates, in order.
pub(super) fn read(doc: &Doc<'_>) -> Result<IndexMap<String, Vec<String>>, ImportError> {
    let is_json = doc.path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let root = if is_json { doc.parse_json()? } else { doc.parse_yaml()? };
    let Some(top) = root.as_map() else {
        return Err(doc.error(&At::root(), format!("expected the dynamic lists object, found {}", root.kind())));
    };
    let lists_at = At::root().key("lists");
    let Some(lists) = doc.map(top.get("lists").unwrap_or(&Node::Null), &lists_at)? else {
        return Err(doc.error(&At::root(), "has no lists"));
    };
    let mut effective = IndexMap::new();
    for (name, list) in lists {
        let at = lists_at.key(name);
        let Some(fields) = doc.map(list, &at)? else { return Err(doc.error(&at, "is empty")) };
        let get = |key: &str| doc.texts(fields.get(key).unwrap_or(&Node::Null), &at.key(key));
        let removals = get("manualRemovals")?;
        let mut values: Vec<String> = Vec::new();
        for value in get("values")?.into_iter().chain(get("manualAdditions")?) {
            if !values.contains(&value) && !removals.contains(&value) {
                values.push(value);
            }
        }
        effective.insert(name.clone(), values);
    }
    Ok(effective)
}
