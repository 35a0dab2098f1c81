//! What one upstream offers: its tools, prompts, resources and templates.

use serde::Deserialize;
use serde_json::value::RawValue;

pub use warden_pipeline::ItemKind;

/// One listed item: its key (name, URI or URI template) and its JSON as the
/// upstream sent it.
#[derive(Debug, Clone)]
pub struct Item {
    /// `name` of a tool or prompt, `uri` of a resource, `uriTemplate` of a template.
    pub key: String,
    /// The item's JSON text, unchanged.
    pub raw: Box<RawValue>,
}

/// One page of a list result.
#[derive(Debug)]
pub struct Page {
    /// The page's items.
    pub items: Vec<Item>,
    /// The cursor of the next page, if any.
    pub next_cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPage<'a> {
    #[serde(default)]
    next_cursor: Option<String>,
    #[serde(default, borrow)]
    tools: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    prompts: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    resources: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    resource_templates: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Keys {
    name: Option<String>,
    uri: Option<String>,
    uri_template: Option<String>,
}

impl Page {
    /// Reads a list result of `kind`. Items without their key are dropped with
    /// a reason, since nothing could route to them.
    pub fn parse(kind: ItemKind, result: &str) -> Result<Page, String> {
        let page: RawPage =
            serde_json::from_str(result).map_err(|err| format!("invalid {} result: {err}", kind.list_method()))?;
        let raws = match kind {
            ItemKind::Tool => page.tools,
            ItemKind::Prompt => page.prompts,
            ItemKind::Resource => page.resources,
            ItemKind::Template => page.resource_templates,
        }
        .ok_or_else(|| format!("{} result has no \"{}\"", kind.list_method(), kind.field()))?;
        let mut items = Vec::with_capacity(raws.len());
        for raw in raws {
            let keys: Keys =
                serde_json::from_str(raw.get()).map_err(|err| format!("invalid item in {}: {err}", kind.field()))?;
            let key = match kind {
                ItemKind::Tool | ItemKind::Prompt => keys.name,
                ItemKind::Resource => keys.uri,
                ItemKind::Template => keys.uri_template,
            };
            match key {
                Some(key) => items.push(Item { key, raw: raw.to_owned() }),
                None => tracing::warn!(kind = kind.field(), "dropped a listed item without its name or uri"),
            }
        }
        Ok(Page { items, next_cursor: page.next_cursor })
    }
}

/// Everything one upstream listed, per kind.
#[derive(Debug, Clone, Default)]
pub struct Surface {
    /// Tools.
    pub tools: Vec<Item>,
    /// Prompts.
    pub prompts: Vec<Item>,
    /// Resources.
    pub resources: Vec<Item>,
    /// Resource templates.
    pub templates: Vec<Item>,
}

impl Surface {
    /// The items of `kind`.
    pub fn items(&self, kind: ItemKind) -> &[Item] {
        match kind {
            ItemKind::Tool => &self.tools,
            ItemKind::Prompt => &self.prompts,
            ItemKind::Resource => &self.resources,
            ItemKind::Template => &self.templates,
        }
    }

    /// The items of `kind`, to replace.
    pub fn items_mut(&mut self, kind: ItemKind) -> &mut Vec<Item> {
        match kind {
            ItemKind::Tool => &mut self.tools,
            ItemKind::Prompt => &mut self.prompts,
            ItemKind::Resource => &mut self.resources,
            ItemKind::Template => &mut self.templates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pages_and_keeps_raw_items() {
        let page = Page::parse(
            ItemKind::Tool,
            r#"{"tools":[{"name":"a","x-extra":[1.50]},{"description":"no name"}],"nextCursor":"c2","_meta":{}}"#,
        )
        .unwrap();
        assert_eq!(page.items.len(), 1);
        assert_eq!(page.items[0].raw.get(), r#"{"name":"a","x-extra":[1.50]}"#);
        assert_eq!(page.next_cursor.as_deref(), Some("c2"));
        let templates =
            Page::parse(ItemKind::Template, r#"{"resourceTemplates":[{"uriTemplate":"x://{id}","name":"x"}]}"#);
        assert_eq!(templates.unwrap().items[0].key, "x://{id}");
        assert!(Page::parse(ItemKind::Prompt, r#"{"tools":[]}"#).is_err());
    }
}
