//! Which tool definitions carry valid `x-mcp-header` annotations (MCP
//! 2026-07-28, SEP-2243: "Custom Headers from Tool Parameters" in the
//! Streamable HTTP transport, and "x-mcp-header" under Tools).
//!
//! A client on Streamable HTTP must exclude from `tools/list` every tool
//! whose `inputSchema` annotates a property with an invalid `x-mcp-header`,
//! and should log a warning naming the tool and the reason (Warden warns
//! once per upstream, tool and reason, not on every refresh of the list;
//! again after the upstream restarts). Warden is that
//! client for its upstreams, and it serves what it lists over HTTP itself,
//! so it applies the rule to every upstream, whatever its transport and era,
//! and for every client, whatever its era: one catalog for all, where an
//! excluded tool is unknown (listed to no one, refused as an unknown tool
//! when called). Valid tools are untouched, byte for byte.
//!
//! The rules (`Schema Extension` in the transport's specification):
//!
//! - the value is a non-empty string of HTTP token characters (`1*tchar`,
//!   RFC 9110 section 5.1), which excludes spaces, `:`, control characters
//!   (CR, LF, tab) and anything not ASCII;
//! - values are unique in the `inputSchema`, compared case-insensitively;
//! - the annotated property's `type` is `string`, `integer` or `boolean`
//!   (not `number`, `object`, `array` or `null`, and not absent); a list of
//!   types may add `null` to one or more of those, since a null argument
//!   simply gets no header;
//! - the property is statically reachable: every step from the schema's
//!   root is a `properties` key. An annotation on the root, or under `items`,
//!   `prefixItems`, `allOf`/`anyOf`/`oneOf`/`not`, `if`/`then`/`else`, `$defs`
//!   (what a `$ref` reaches) or any other subschema keyword, is invalid.
//!
//! Values of non-schema keywords (`const`, `default`, `enum`, `examples`,
//! unknown ones) are data, not schemas: an `x-mcp-header` member there is
//! not an annotation. That integer arguments stay within ±(2^53−1) is a
//! rule on call values, not on definitions, so it is not checked here.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::Item;

/// The annotation keyword.
const KEYWORD: &str = "x-mcp-header";

/// Keywords whose value is a schema, or an array of schemas.
const SUBSCHEMAS: [&str; 16] = [
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value maps names to schemas (besides `properties`).
const SCHEMA_MAPS: [&str; 5] = ["patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

/// Why a tool's `x-mcp-header` annotations are invalid. Paths are JSON
/// Pointers into the tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidAnnotation {
    /// The value is not a string.
    #[error("the x-mcp-header at {path} is not a string")]
    NotText {
        /// Where the annotation is.
        path: String,
    },
    /// The value is the empty string.
    #[error("the x-mcp-header at {path} is empty")]
    Empty {
        /// Where the annotation is.
        path: String,
    },
    /// The value has a character an HTTP field name cannot have.
    #[error("the x-mcp-header {value:?} at {path} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~ only)")]
    NotToken {
        /// Where the annotation is.
        path: String,
        /// The value.
        value: String,
    },
    /// Two annotations name the same header, ignoring case.
    #[error("the x-mcp-header {value:?} at {path} repeats the one at {first} (header names ignore case)")]
    Duplicate {
        /// Where the later annotation is.
        path: String,
        /// Its value.
        value: String,
        /// Where the first one is.
        first: String,
    },
    /// The annotated property's type is not string, integer or boolean.
    #[error("the x-mcp-header at {path} is on a property of type {found}: only string, integer and boolean may be")]
    NotPrimitive {
        /// Where the annotation is.
        path: String,
        /// The property's `type`, as JSON (`none` when absent).
        found: String,
    },
    /// The annotation is not on a property reached through `properties` alone.
    #[error("the x-mcp-header at {path} is not on a property reached from the root through `properties` alone")]
    Unreachable {
        /// Where the annotation is.
        path: String,
    },
}

/// Checks the `x-mcp-header` annotations of one tool definition (JSON
/// text). A tool without any, or whose definition cannot be read, passes:
/// other checks are not this module's.
pub fn check(tool: &str) -> Result<(), InvalidAnnotation> {
    // A definition that never spells the keyword, even escaped, has none.
    if !tool.contains(KEYWORD) && !tool.contains('\\') {
        return Ok(());
    }
    #[derive(Deserialize)]
    struct Tool {
        #[serde(rename = "inputSchema", default)]
        input_schema: Option<Value>,
    }
    let Ok(Tool { input_schema: Some(schema) }) = serde_json::from_str::<Tool>(tool) else { return Ok(()) };
    Walk::default().visit(&schema, String::new(), Position::Root)
}

/// Drops the tools of `items` (one upstream's `tools/list`) whose
/// annotations are invalid; returns their names and why, to warn about.
pub fn retain_valid(items: &mut Vec<Item>) -> Vec<(String, InvalidAnnotation)> {
    let mut left_out = Vec::new();
    items.retain(|item| match check(item.raw.get()) {
        Ok(()) => true,
        Err(reason) => {
            left_out.push((item.key.clone(), reason));
            false
        }
    });
    left_out
}

/// Where a schema sits relative to the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// The `inputSchema` itself.
    Root,
    /// A property reached from the root through `properties` keys alone.
    Property,
    /// Anywhere else.
    Elsewhere,
}

/// The annotations seen so far: lowercased value, then where.
#[derive(Default)]
struct Walk {
    seen: Vec<(String, String)>,
}

impl Walk {
    fn visit(&mut self, schema: &Value, path: String, position: Position) -> Result<(), InvalidAnnotation> {
        let Value::Object(schema) = schema else { return Ok(()) };
        if let Some(value) = schema.get(KEYWORD) {
            if position != Position::Property {
                return Err(InvalidAnnotation::Unreachable { path });
            }
            self.annotation(schema, value, &path)?;
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            let inner = if position == Position::Elsewhere { Position::Elsewhere } else { Position::Property };
            self.members(properties, &format!("{path}/properties"), inner)?;
        }
        for keyword in SCHEMA_MAPS {
            if let Some(Value::Object(map)) = schema.get(keyword) {
                self.members(map, &format!("{path}/{}", escape(keyword)), Position::Elsewhere)?;
            }
        }
        for keyword in SUBSCHEMAS {
            let at = format!("{path}/{keyword}");
            match schema.get(keyword) {
                Some(Value::Array(schemas)) => {
                    for (index, schema) in schemas.iter().enumerate() {
                        self.visit(schema, format!("{at}/{index}"), Position::Elsewhere)?;
                    }
                }
                Some(schema) => self.visit(schema, at, Position::Elsewhere)?,
                None => {}
            }
        }
        Ok(())
    }

    fn members(&mut self, map: &Map<String, Value>, path: &str, position: Position) -> Result<(), InvalidAnnotation> {
        for (name, schema) in map {
            self.visit(schema, format!("{path}/{}", escape(name)), position)?;
        }
        Ok(())
    }

    /// One annotation on a statically reachable property.
    fn annotation(
        &mut self,
        property: &Map<String, Value>,
        value: &Value,
        path: &str,
    ) -> Result<(), InvalidAnnotation> {
        let path = path.to_owned();
        let Value::String(value) = value else { return Err(InvalidAnnotation::NotText { path }) };
        if value.is_empty() {
            return Err(InvalidAnnotation::Empty { path });
        }
        if !value.bytes().all(is_tchar) {
            return Err(InvalidAnnotation::NotToken { path, value: value.clone() });
        }
        if !primitive(property.get("type")) {
            let found = property.get("type").map_or_else(|| "none".to_owned(), Value::to_string);
            return Err(InvalidAnnotation::NotPrimitive { path, found });
        }
        let key = value.to_ascii_lowercase();
        if let Some((_, first)) = self.seen.iter().find(|(seen, _)| *seen == key) {
            return Err(InvalidAnnotation::Duplicate { path, value: value.clone(), first: first.clone() });
        }
        self.seen.push((key, path));
        Ok(())
    }
}

/// Whether a property's `type` is one a header can carry: `string`,
/// `integer` or `boolean`, or a list of those (`null` allowed beside them).
fn primitive(kind: Option<&Value>) -> bool {
    let carried = |name: &str| matches!(name, "string" | "integer" | "boolean");
    match kind {
        Some(Value::String(name)) => carried(name),
        Some(Value::Array(names)) => {
            let names: Option<Vec<&str>> = names.iter().map(Value::as_str).collect();
            names.is_some_and(|names| {
                names.iter().any(|name| carried(name)) && names.iter().all(|name| carried(name) || *name == "null")
            })
        }
        _ => false,
    }
}

/// `tchar` of RFC 9110 section 5.1.
fn is_tchar(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// A name as one JSON Pointer step (RFC 6901).
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(schema: &str) -> String {
        format!(r#"{{"name":"t","inputSchema":{schema}}}"#)
    }

    fn reason(schema: &str) -> Option<InvalidAnnotation> {
        check(&tool(schema)).err()
    }

    #[test]
    fn valid_annotations_pass() {
        assert_eq!(check(r#"{"name":"plain","inputSchema":{"type":"object"}}"#), Ok(()));
        assert_eq!(check(r#"{"name":"no schema"}"#), Ok(()));
        let valid = [
            r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
            r#"{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}"#,
            // Nested objects, every step a `properties` key.
            r#"{"type":"object","properties":{"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}"#,
            // "Method" is allowed: it makes Mcp-Param-Method, not Mcp-Method.
            r#"{"type":"object","properties":{"m":{"type":"string","x-mcp-header":"Method"}}}"#,
            r#"{"type":"object","properties":{"t":{"type":"string","x-mcp-header":"!#$%&'*+-.^_`|~09azAZ"}}}"#,
            r#"{"type":"object","properties":{"o":{"type":["string","null"],"x-mcp-header":"Opt"}}}"#,
            // Data, not schemas: an x-mcp-header member there is no annotation.
            r#"{"type":"object","default":{"x-mcp-header":""},"properties":{"p":{"type":"object","const":{"x-mcp-header":1}}}}"#,
            // A property that is itself named x-mcp-header.
            r#"{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}"#,
        ];
        for schema in valid {
            assert_eq!(reason(schema), None, "{schema}");
        }
    }

    #[test]
    fn the_conformance_suites_invalid_tools_are_rejected() {
        // http-invalid-tool-headers (conformance 0.2.0-alpha.12), one per tool.
        let property = |schema: &str| format!(r#"{{"type":"object","properties":{{"p":{schema}}}}}"#);
        let cases = [
            (property(r#"{"type":"string","x-mcp-header":""}"#), "is empty"),
            (property(r#"{"type":"object","x-mcp-header":"Data"}"#), "of type \"object\""),
            (property(r#"{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}"#), "of type \"array\""),
            (property(r#"{"type":"null","x-mcp-header":"Nil"}"#), "of type \"null\""),
            (property(r#"{"type":"number","x-mcp-header":"Score"}"#), "of type \"number\""),
            (property(r#"{"type":"string","x-mcp-header":"My Region"}"#), "not an HTTP token"),
            (property(r#"{"type":"string","x-mcp-header":"Region:Primary"}"#), "not an HTTP token"),
            (property(r#"{"type":"string","x-mcp-header":"Région"}"#), "not an HTTP token"),
            (property(r#"{"type":"string","x-mcp-header":"Region\t1"}"#), "not an HTTP token"),
            (property(r#"{"type":"string","x-mcp-header":"Region\r\nX-Injected: 1"}"#), "not an HTTP token"),
            (
                r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}"#.to_owned(),
                "repeats the one at /properties/a",
            ),
            (
                r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}"#.to_owned(),
                "repeats",
            ),
        ];
        for (schema, expected) in cases {
            let reason = reason(&schema).unwrap_or_else(|| panic!("accepted: {schema}"));
            assert!(reason.to_string().contains(expected), "{schema}: {reason}");
        }
    }

    #[test]
    fn types_must_be_declared_primitives() {
        let schema = |kind: &str| format!(r#"{{"type":"object","properties":{{"p":{{{kind}"x-mcp-header":"P"}}}}}}"#);
        assert_eq!(
            reason(&schema("")),
            Some(InvalidAnnotation::NotPrimitive { path: "/properties/p".into(), found: "none".into() })
        );
        assert!(reason(&schema(r#""type":["null"],"#)).is_some(), "null alone");
        assert!(reason(&schema(r#""type":["string","number"],"#)).is_some(), "number beside");
        assert!(reason(&schema(r#""type":["string",1],"#)).is_some(), "not a name");
        assert_eq!(reason(&schema(r#""type":["integer","boolean"],"#)), None);
        assert_eq!(
            reason(r#"{"type":"object","properties":{"p":{"type":"string","x-mcp-header":7}}}"#),
            Some(InvalidAnnotation::NotText { path: "/properties/p".into() })
        );
    }

    #[test]
    fn annotations_off_the_properties_chain_are_rejected() {
        let unreachable = [
            (r#"{"type":"object","x-mcp-header":"Root"}"#, ""),
            (
                r#"{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}"#,
                "/properties/list/items",
            ),
            (
                r#"{"type":"object","properties":{"list":{"type":"array","prefixItems":[{"type":"string","x-mcp-header":"First"}]}}}"#,
                "/properties/list/prefixItems/0",
            ),
            (
                r#"{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#,
                "/oneOf/0/properties/a",
            ),
            (
                r#"{"type":"object","anyOf":[{"type":"object"},{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#,
                "/anyOf/1/properties/a",
            ),
            (
                r#"{"type":"object","allOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#,
                "/allOf/0/properties/a",
            ),
            (
                r#"{"type":"object","not":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}"#,
                "/not/properties/a",
            ),
            (
                r#"{"type":"object","if":{"properties":{"a":{"const":"x"}}},"then":{"properties":{"b":{"type":"string","x-mcp-header":"B"}}}}"#,
                "/then/properties/b",
            ),
            (
                r##"{"type":"object","$defs":{"r":{"type":"string","x-mcp-header":"R"}},"properties":{"a":{"$ref":"#/$defs/r"}}}"##,
                "/$defs/r",
            ),
            (
                r#"{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"Extra"}}"#,
                "/additionalProperties",
            ),
            (
                r#"{"type":"object","patternProperties":{"^a/b~":{"type":"string","x-mcp-header":"P"}}}"#,
                "/patternProperties/^a~1b~0",
            ),
        ];
        for (schema, path) in unreachable {
            assert_eq!(reason(schema), Some(InvalidAnnotation::Unreachable { path: path.into() }), "{schema}");
        }
    }

    #[test]
    fn an_escaped_keyword_is_still_read() {
        let escaped = r#"{"name":"t","inputSchema":{"type":"object","properties":{"p":{"type":"object","x\u002dmcp-header":"P"}}}}"#;
        assert!(matches!(check(escaped), Err(InvalidAnnotation::NotPrimitive { .. })));
    }

    #[test]
    fn invalid_tools_are_dropped_and_valid_ones_kept_byte_for_byte() {
        let list = r#"{"tools":[
            {"name":"ok","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region", "n":1.50}}}},
            {"name":"bad","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"My Region"}}}},
            {"name":"plain"}]}"#;
        let mut items = super::super::Page::parse(super::super::ItemKind::Tool, list).unwrap().items;
        let before = items[0].raw.get().to_owned();
        let left_out = retain_valid(&mut items);
        assert_eq!(left_out.len(), 1);
        assert_eq!(left_out[0].0, "bad");
        assert!(matches!(left_out[0].1, InvalidAnnotation::NotToken { .. }));
        let names: Vec<&str> = items.iter().map(|item| item.key.as_str()).collect();
        assert_eq!(names, ["ok", "plain"]);
        assert_eq!(items[0].raw.get(), before);
    }
}
