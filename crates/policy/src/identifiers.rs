//! The resources a call names: the values of its path and URL roles, for
//! the auto-approver (which sees nothing else of the arguments).

use serde_json::Value;
use warden_pipeline::Identifier;

use crate::PolicyEngine;
use crate::roles::extract;
use crate::scan::Memo;
use warden_config::RoleCategory;

/// The values of the path and URL roles of a call to `server`/`tool`
/// (after conditional roles), each once, in the order met. Empty when the
/// tool has no annotation or its arguments are not readable.
pub(crate) fn identifiers(engine: &PolicyEngine, server: &str, tool: &str, arguments: Option<&str>) -> Vec<Identifier> {
    let Some(annotation) = engine.annotations.get(server).and_then(|tools| tools.get(tool)) else {
        return Vec::new();
    };
    let Some(args) = arguments.and_then(|text| serde_json::from_str::<Value>(text).ok()) else {
        return Vec::new();
    };
    let mut memo = Memo::new(&engine.scans);
    let assigned = annotation.assign(&args, &mut memo, &mut Vec::new());
    let Ok(roles) = extract(&assigned, &args, &engine.role_table) else { return Vec::new() };
    let mut identifiers = Vec::new();
    for role in &roles {
        for value in &role.values {
            let identifier = match role.kind {
                RoleCategory::Path => Identifier::Path(value.text.to_owned()),
                RoleCategory::Url => Identifier::Url(value.text.to_owned()),
                RoleCategory::Identifier | RoleCategory::Opaque => continue,
            };
            if !identifiers.contains(&identifier) {
                identifiers.push(identifier);
            }
        }
    }
    identifiers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_and_url_roles_are_listed_once_and_other_roles_not_at_all() {
        let config = warden_config::parse(
            std::path::Path::new("w.yaml"),
            r#"
policy:
  annotations:
    fs:
      copy: {args: {from: [read-path], to: [write-path], note: [commit-message]}}
      fetch: {args: {url: [fetch-url]}}
"#,
            &|_| None,
        )
        .expect("config");
        let engine = PolicyEngine::compile(&config, None).expect("policy");
        let copy = identifiers(&engine, "fs", "copy", Some(r#"{"from": ["/a", "/b"], "to": "/a", "note": "x"}"#));
        assert_eq!(copy, [Identifier::Path("/a".into()), Identifier::Path("/b".into())]);
        let fetch = identifiers(&engine, "fs", "fetch", Some(r#"{"url": "https://example.com/x"}"#));
        assert_eq!(fetch, [Identifier::Url("https://example.com/x".into())]);
        assert!(identifiers(&engine, "fs", "unknown", Some("{}")).is_empty());
        assert!(identifiers(&engine, "fs", "copy", Some("not json")).is_empty());
    }
}
