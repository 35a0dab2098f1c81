//! A parsed YAML or JSON document that keeps its keys in file order, and
//! typed reads whose errors name the key path and, when it can be found, the
//! line.

use std::fmt;
use std::path::Path;

use indexmap::IndexMap;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::ImportError;

/// A YAML or JSON value. Numbers keep their text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Number(String),
    Text(String),
    List(Vec<Node>),
    Map(IndexMap<String, Node>),
}

impl Node {
    /// What kind of value this is, for messages ("expected a list, found text").
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "nothing (null)",
            Node::Bool(_) => "true/false",
            Node::Number(_) => "a number",
            Node::Text(_) => "text",
            Node::List(_) => "a list",
            Node::Map(_) => "a mapping",
        }
    }

    /// The map, when this is one.
    pub(crate) fn as_map(&self) -> Option<&IndexMap<String, Node>> {
        match self {
            Node::Map(map) => Some(map),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML or JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Node, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Node, E> {
        Ok(Node::Number(value.to_string()))
    }

    fn visit_str<E>(self, value: &str) -> Result<Node, E> {
        Ok(Node::Text(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Node, E> {
        Ok(Node::Text(value))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Node, A::Error> {
        let mut map = IndexMap::new();
        while let Some(key) = access.next_key::<Node>()? {
            let key = match key {
                Node::Text(text) | Node::Number(text) => text,
                Node::Bool(value) => value.to_string(),
                Node::Null => "null".to_owned(),
                other => return Err(de::Error::custom(format!("a key must be text, not {}", other.kind()))),
            };
            let value = access.next_value()?;
            map.insert(key, value);
        }
        Ok(Node::Map(map))
    }
}

/// Where a value sits: keys and list positions from the document's root.
#[derive(Debug, Clone, Default)]
pub(crate) struct At(Vec<Step>);

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

impl At {
    /// The document's root.
    pub(crate) fn root() -> At {
        At(Vec::new())
    }

    /// The value under `key`.
    pub(crate) fn key(&self, key: &str) -> At {
        let mut steps = self.0.clone();
        steps.push(Step::Key(key.to_owned()));
        At(steps)
    }

    /// The item at `index`.
    pub(crate) fn index(&self, index: usize) -> At {
        let mut steps = self.0.clone();
        steps.push(Step::Index(index));
        At(steps)
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .iter()
            .filter_map(|step| match step {
                Step::Key(key) => Some(key.as_str()),
                Step::Index(_) => None,
            })
            .collect()
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(key) if position == 0 => write!(f, "{key}")?,
                Step::Key(key) => write!(f, ".{key}")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// One input file: its name (for messages) and its text (for line numbers).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Doc<'a> {
    pub(crate) path: &'a Path,
    pub(crate) text: &'a str,
}

impl<'a> Doc<'a> {
    pub(crate) fn new(path: &'a Path, text: &'a str) -> Doc<'a> {
        Doc { path, text }
    }

    /// Parses the file as YAML (which also reads most JSON).
    pub(crate) fn parse_yaml(&self) -> Result<Node, ImportError> {
        serde_saphyr::from_str::<Node>(self.text).map_err(|err| ImportError::Parse {
            path: self.path.into(),
            message: format!("not valid YAML: {}", err.without_snippet()),
        })
    }

    /// Parses the file as JSON.
    pub(crate) fn parse_json(&self) -> Result<Node, ImportError> {
        serde_json::from_str::<Node>(self.text)
            .map_err(|err| ImportError::Parse { path: self.path.into(), message: format!("not valid JSON: {err}") })
    }

    /// An error about the value at `at`, with the line of the nearest key
    /// that can be found in the text.
    pub(crate) fn error(&self, at: &At, message: impl fmt::Display) -> ImportError {
        let keys = at.keys();
        let place = (1..=keys.len()).rev().find_map(|len| warden_config::locate(self.text, &keys[..len]));
        let message = match (place, at.0.is_empty()) {
            (Some((line, column)), _) => format!("line {line}, column {column}: {at}: {message}"),
            (None, false) => format!("{at}: {message}"),
            (None, true) => message.to_string(),
        };
        ImportError::Invalid { path: self.path.into(), message }
    }

    /// The mapping at `at`; null counts as empty.
    pub(crate) fn map<'n>(&self, node: &'n Node, at: &At) -> Result<Option<&'n IndexMap<String, Node>>, ImportError> {
        match node {
            Node::Null => Ok(None),
            Node::Map(map) => Ok(Some(map)),
            other => Err(self.error(at, format!("expected a mapping, found {}", other.kind()))),
        }
    }

    /// Text at `at`; numbers and true/false are read as their text, null as
    /// absent.
    pub(crate) fn text(&self, node: &Node, at: &At) -> Result<Option<String>, ImportError> {
        match node {
            Node::Null => Ok(None),
            Node::Text(text) | Node::Number(text) => Ok(Some(text.clone())),
            Node::Bool(value) => Ok(Some(value.to_string())),
            other => Err(self.error(at, format!("expected text, found {}", other.kind()))),
        }
    }

    /// A list of texts at `at`; null counts as empty.
    pub(crate) fn texts(&self, node: &Node, at: &At) -> Result<Vec<String>, ImportError> {
        match node {
            Node::Null => Ok(Vec::new()),
            Node::List(items) => items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let at = at.index(index);
                    self.text(item, &at)?.ok_or_else(|| self.error(&at, "expected text, found nothing (null)"))
                })
                .collect(),
            other => Err(self.error(at, format!("expected a list, found {}", other.kind()))),
        }
    }

    /// A mapping of texts at `at` (environment variables, headers); null
    /// counts as empty.
    pub(crate) fn text_map(&self, node: &Node, at: &At) -> Result<IndexMap<String, String>, ImportError> {
        let Some(map) = self.map(node, at)? else { return Ok(IndexMap::new()) };
        map.iter()
            .map(|(key, value)| {
                let at = at.key(key);
                let text = self.text(value, &at)?.ok_or_else(|| self.error(&at, "has no value"))?;
                Ok((key.clone(), text))
            })
            .collect()
    }

    /// True or false at `at`; null counts as absent.
    pub(crate) fn bool(&self, node: &Node, at: &At) -> Result<Option<bool>, ImportError> {
        match node {
            Node::Null => Ok(None),
            Node::Bool(value) => Ok(Some(*value)),
            other => Err(self.error(at, format!("expected true or false, found {}", other.kind()))),
        }
    }
}

/// The keys of `map` not in `known`, for "ignored" warnings.
pub(crate) fn unknown_keys<'m>(map: &'m IndexMap<String, Node>, known: &[&str]) -> Vec<&'m str> {
    map.keys().map(String::as_str).filter(|key| !known.contains(key)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_and_number_text() {
        let node: Node = serde_saphyr::from_str("b: 1\na: [x, 2.5, true, null]\n").unwrap();
        let map = node.as_map().unwrap();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(
            map["a"],
            Node::List(vec![Node::Text("x".into()), Node::Number("2.5".into()), Node::Bool(true), Node::Null])
        );
        let json: Node = serde_json::from_str(r#"{"z": {"y": 1}, "a": []}"#).unwrap();
        assert_eq!(json.as_map().unwrap().keys().collect::<Vec<_>>(), ["z", "a"]);
    }

    #[test]
    fn errors_point_at_the_nearest_key() {
        let text = "servers:\n  fs:\n    args: {a: 1}\n";
        let doc = Doc::new(Path::new("c.yaml"), text);
        let at = At::root().key("servers").key("fs").key("args").index(2);
        assert_eq!(doc.error(&at, "bad").to_string(), "c.yaml: line 3, column 5: servers.fs.args[2]: bad");
        let at = At::root().key("servers").key("fs").key("args").key("a");
        assert!(doc.error(&at, "bad").to_string().starts_with("c.yaml: line 3, column 5: servers.fs.args.a:"));
    }
}
