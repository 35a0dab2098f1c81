//! `tool-annotations.json`: per server, per tool, each argument's roles,
//! static (`[role...]`) or conditional (`{default, when: [{condition,
//! roles}]}`, first matching `when` wins, else `default`).

use indexmap::IndexMap;
use serde_json::Value;
use warden_config::{Condition, ConditionalRoles, IRONCURTAIN_ROLES, RoleCategory, ToolAnnotation};

use crate::error::ImportError;
use crate::names::sanitise;
use crate::node::{At, Doc, Node, unknown_keys};

/// Whether IronCurtain evaluates `role` per role: path, URL and identifier
/// roles (`isResourceIdentifier`); unknown roles are kept and treated like
/// them.
pub(super) fn is_resource(role: &str) -> bool {
    RoleCategory::of_ironcurtain_role(role) != Some(RoleCategory::Opaque)
}

/// Whether IronCurtain's role table knows `role`.
fn is_known(role: &str) -> bool {
    RoleCategory::of_ironcurtain_role(role).is_some()
}

/// One annotated tool.
pub(super) struct Tool {
    pub(super) server: String,
    pub(super) name: String,
    /// Absent in IronCurtain's current format (removed in March 2026).
    pub(super) side_effects: Option<bool>,
    pub(super) args: Vec<Arg>,
}

/// One argument: its possible role lists, the default first.
pub(super) struct Arg {
    pub(super) name: String,
    pub(super) options: Vec<Vec<String>>,
}

impl Tool {
    /// The resource roles any call can give it, in file order.
    pub(super) fn roles(&self) -> Vec<String> {
        let mut roles: Vec<String> = Vec::new();
        for role in self.args.iter().flat_map(|arg| arg.options.iter().flatten()) {
            if is_resource(role) && !roles.contains(role) {
                roles.push(role.clone());
            }
        }
        roles
    }

    /// Whether some call gives it no resource role.
    pub(super) fn can_be_unscoped(&self) -> bool {
        self.args.iter().all(|arg| arg.options.iter().any(|roles| !roles.iter().any(|role| is_resource(role))))
    }

    /// The arguments that can have `role`, and whether some has it only
    /// under a condition.
    pub(super) fn args_with(&self, role: &str) -> (Vec<String>, bool) {
        let mut names = Vec::new();
        let mut conditional = false;
        for arg in &self.args {
            let count = arg.options.iter().filter(|roles| roles.iter().any(|r| r == role)).count();
            if count > 0 {
                names.push(arg.name.clone());
                conditional |= count < arg.options.len();
            }
        }
        (names, conditional)
    }

    /// Whether an argument's default roles include one of `roles`.
    pub(super) fn has_any_role(&self, roles: &[String]) -> bool {
        self.args
            .iter()
            .any(|arg| arg.options.first().is_some_and(|defaults| defaults.iter().any(|r| roles.contains(r))))
    }
}

/// The annotations read.
pub(super) struct Tools {
    pub(super) list: Vec<Tool>,
    /// Warden's `policy.annotations`.
    pub(super) warden: IndexMap<String, IndexMap<String, ToolAnnotation>>,
    /// Every resource role some tool can have.
    pub(super) universe: Vec<String>,
    pub(super) warnings: Vec<String>,
}

/// Reads the annotations file.
pub(super) fn read(doc: &Doc<'_>) -> Result<Tools, ImportError> {
    let is_json = doc.path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
    let root = if is_json { doc.parse_json()? } else { doc.parse_yaml()? };
    let Some(top) = root.as_map() else {
        return Err(doc.error(&At::root(), format!("expected the annotations object, found {}", root.kind())));
    };
    let servers_at = At::root().key("servers");
    let empty = IndexMap::new();
    let servers = doc.map(top.get("servers").unwrap_or(&Node::Null), &servers_at)?.unwrap_or(&empty);
    let (mut list, mut warnings) = (Vec::new(), Vec::new());
    let (mut unknown, mut opaque, mut comments, mut renamed) = (Vec::new(), Vec::new(), 0, Vec::new());
    let mut warden: IndexMap<String, IndexMap<String, ToolAnnotation>> = IndexMap::new();
    for (server, entry) in servers {
        let server_at = servers_at.key(server);
        let entry = doc.map(entry, &server_at)?.unwrap_or(&empty);
        let tools_at = server_at.key("tools");
        let items = match entry.get("tools").unwrap_or(&Node::Null) {
            Node::Null => &[][..],
            Node::List(items) => items.as_slice(),
            other => return Err(doc.error(&tools_at, format!("expected a list of tools, found {}", other.kind()))),
        };
        let annotations = warden.entry(server.clone()).or_default();
        for (index, item) in items.iter().enumerate() {
            let at = tools_at.index(index);
            let Some(fields) = item.as_map() else {
                return Err(doc.error(&at, format!("expected a tool annotation, found {}", item.kind())));
            };
            let get = |key: &str| fields.get(key).unwrap_or(&Node::Null);
            let Some(name) = doc.text(get("toolName"), &at.key("toolName"))?.filter(|n| !n.is_empty()) else {
                return Err(doc.error(&at, "has no toolName"));
            };
            if let Some(named) = doc.text(get("serverName"), &at.key("serverName"))?
                && &named != server
            {
                renamed.push(format!("{server}/{name} (serverName {named:?})"));
            }
            comments += usize::from(doc.text(get("comment"), &at.key("comment"))?.is_some_and(|c| !c.is_empty()));
            let side_effects = doc.bool(get("sideEffects"), &at.key("sideEffects"))?;
            // `inputSchema` is the tool's own schema, kept by IronCurtain for
            // its annotator; the policy does not read it.
            let ignored =
                unknown_keys(fields, &["toolName", "serverName", "comment", "sideEffects", "args", "inputSchema"]);
            if !ignored.is_empty() {
                warnings.push(format!("ignored {} of {server}/{name}", ignored.join(", ")));
            }
            let args_at = at.key("args");
            let mut args = Vec::new();
            let mut annotation = ToolAnnotation { side_effects, ..ToolAnnotation::default() };
            for (arg, spec) in doc.map(get("args"), &args_at)?.unwrap_or(&empty) {
                let (options, conditions) = arg_spec(doc, spec, &args_at.key(arg))?;
                for role in options.iter().flatten() {
                    let known = is_known(role);
                    let list = if known { &mut opaque } else { &mut unknown };
                    if (!known || !is_resource(role)) && !list.contains(role) {
                        list.push(role.clone());
                    }
                }
                let kept = |roles: &[String]| roles.iter().filter(|r| is_resource(r)).cloned().collect::<Vec<_>>();
                annotation.args.insert(arg.clone(), kept(&options[0]));
                // First match wins in IronCurtain: each entry also requires
                // that the earlier ones do not hold.
                for (position, condition) in conditions.iter().enumerate() {
                    let mut all: Vec<Condition> = vec![condition.clone()];
                    all.extend(
                        conditions[..position]
                            .iter()
                            .map(|earlier| Condition { not: Some(Box::new(earlier.clone())), ..Condition::default() }),
                    );
                    let when = if all.len() == 1 {
                        all.remove(0)
                    } else {
                        Condition { all: Some(all), ..Condition::default() }
                    };
                    let mut roles = IndexMap::new();
                    roles.insert(arg.clone(), kept(&options[position + 1]));
                    annotation.conditional.push(ConditionalRoles { when, args: roles });
                }
                args.push(Arg { name: arg.clone(), options });
            }
            if annotations.insert(name.clone(), annotation).is_some() {
                warnings.push(format!(
                    "{server}/{name} is annotated twice; the last annotation is kept, as IronCurtain does"
                ));
                list.retain(|tool: &Tool| !(tool.server == *server && tool.name == name));
            }
            list.push(Tool { server: server.clone(), name, side_effects, args });
        }
    }
    let invalid: Vec<&String> = warden.keys().filter(|server| sanitise(server) != **server).collect();
    if !invalid.is_empty() {
        warnings.push(format!(
            "servers {} are annotated under names Warden does not accept for servers (only letters, digits, '_' and '-'); rename them in policy.annotations to the names the servers get in Warden",
            invalid.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
        ));
    }
    if list.is_empty() {
        warnings.push("the annotations name no tools: every call is denied (unknown tools are denied)".into());
    }
    if !renamed.is_empty() {
        warnings.push(format!(
            "annotations are filed under their server key, as IronCurtain looks them up, not their serverName: {}",
            renamed.join(", ")
        ));
    }
    if !opaque.is_empty() {
        warnings.push(format!(
            "the roles {} are left out of the annotations: IronCurtain never evaluates them per role (only rules naming them, for tools without resource roles)",
            opaque.join(", ")
        ));
    }
    if !unknown.is_empty() {
        warnings.push(format!(
            "unknown roles {} are kept as they are and evaluated like resource roles (IronCurtain's role registry does not know them)",
            unknown.join(", ")
        ));
    }
    if comments > 0 {
        warnings.push(format!(
            "the comments of {comments} annotated tools are not carried over (Warden's annotations have no comment)"
        ));
    }
    let mut universe: Vec<String> =
        IRONCURTAIN_ROLES.iter().map(|(role, _)| *role).filter(|role| is_resource(role)).map(str::to_owned).collect();
    let present: Vec<String> = list.iter().flat_map(Tool::roles).collect();
    universe.retain(|role| present.contains(role));
    for role in present {
        if !universe.contains(&role) {
            universe.push(role);
        }
    }
    Ok(Tools { list, warden, universe, warnings })
}

/// An argument's roles: the possible role lists (default first) and the
/// condition of each `when` entry.
fn arg_spec(doc: &Doc<'_>, node: &Node, at: &At) -> Result<(Vec<Vec<String>>, Vec<Condition>), ImportError> {
    match node {
        Node::List(_) => Ok((vec![roles(doc, node, at)?], Vec::new())),
        Node::Map(fields) => {
            let Some(default) = fields.get("default") else {
                return Err(doc.error(at, "a conditional role block needs default roles"));
            };
            let mut options = vec![roles(doc, default, &at.key("default"))?];
            let mut conditions = Vec::new();
            let when_at = at.key("when");
            let items = match fields.get("when").unwrap_or(&Node::Null) {
                Node::Null => &[][..],
                Node::List(items) => items.as_slice(),
                other => return Err(doc.error(&when_at, format!("expected a list, found {}", other.kind()))),
            };
            for (index, item) in items.iter().enumerate() {
                let entry_at = when_at.index(index);
                let Some(entry) = item.as_map() else {
                    return Err(doc.error(&entry_at, format!("expected {{condition, roles}}, found {}", item.kind())));
                };
                let condition_at = entry_at.key("condition");
                conditions.push(role_condition(doc, entry.get("condition").unwrap_or(&Node::Null), &condition_at)?);
                options.push(roles(doc, entry.get("roles").unwrap_or(&Node::Null), &entry_at.key("roles"))?);
            }
            Ok((options, conditions))
        }
        other => Err(doc.error(at, format!("expected a list of roles or {{default, when}}, found {}", other.kind()))),
    }
}

/// A list of role names.
fn roles(doc: &Doc<'_>, node: &Node, at: &At) -> Result<Vec<String>, ImportError> {
    let roles = doc.texts(node, at)?;
    if roles.iter().any(|role| role.trim().is_empty()) {
        return Err(doc.error(at, "a role name is empty"));
    }
    Ok(roles)
}

/// JavaScript's falsy values, as JSON.
fn falsy() -> Vec<Value> {
    vec![Value::Bool(false), Value::from(0), Value::from(0.0), Value::String(String::new()), Value::Null]
}

/// `{arg, equals | in | is}` as a Warden condition with the same meaning
/// (JavaScript's `===`, `includes`, and the `is` predicates).
fn role_condition(doc: &Doc<'_>, node: &Node, at: &At) -> Result<Condition, ImportError> {
    let Some(fields) = node.as_map() else {
        return Err(doc.error(at, format!("expected {{arg, equals | in | is}}, found {}", node.kind())));
    };
    let Some(arg) = doc.text(fields.get("arg").unwrap_or(&Node::Null), &at.key("arg"))?.filter(|a| !a.is_empty())
    else {
        return Err(doc.error(at, "the condition names no arg"));
    };
    if arg.contains('.') {
        return Err(doc.error(
            &at.key("arg"),
            format!("argument {arg:?} contains '.', which Warden reads as a path into an object argument"),
        ));
    }
    let test = |mut condition: Condition| {
        condition.arg = Some(arg.clone());
        condition
    };
    let given: Vec<&str> = ["equals", "in", "is"].into_iter().filter(|key| fields.contains_key(*key)).collect();
    let [operator] = given.as_slice() else {
        return Err(doc.error(at, "a condition needs exactly one of equals, in and is"));
    };
    Ok(match *operator {
        "equals" => {
            test(Condition { equals: Some(json(doc, &fields["equals"], &at.key("equals"))?), ..Condition::default() })
        }
        "in" => {
            let in_at = at.key("in");
            let Node::List(items) = &fields["in"] else { return Err(doc.error(&in_at, "expected a list of values")) };
            let values =
                items.iter().enumerate().map(|(i, item)| json(doc, item, &in_at.index(i))).collect::<Result<_, _>>()?;
            test(Condition { one_of: Some(values), ..Condition::default() })
        }
        _ => {
            let is_at = at.key("is");
            let present = test(Condition { exists: Some(true), ..Condition::default() });
            let absent = test(Condition { exists: Some(false), ..Condition::default() });
            let among = |values: Vec<Value>| test(Condition { one_of: Some(values), ..Condition::default() });
            let not = |condition: Condition| Condition { not: Some(Box::new(condition)), ..Condition::default() };
            let all = |list: Vec<Condition>| Condition { all: Some(list), ..Condition::default() };
            let any = |list: Vec<Condition>| Condition { any: Some(list), ..Condition::default() };
            match doc.text(&fields["is"], &is_at)?.as_deref() {
                Some("present") => all(vec![present, not(among(vec![Value::Null]))]),
                Some("absent") => any(vec![absent, among(vec![Value::Null])]),
                Some("truthy") => all(vec![present, not(among(falsy()))]),
                Some("falsy") => any(vec![absent, among(falsy())]),
                other => {
                    return Err(doc.error(
                        &is_at,
                        format!(
                            "unknown predicate {:?} (expected present, absent, truthy or falsy)",
                            other.unwrap_or_default()
                        ),
                    ));
                }
            }
        }
    })
}

/// A condition value (text, number or true/false) as JSON.
fn json(doc: &Doc<'_>, node: &Node, at: &At) -> Result<Value, ImportError> {
    match node {
        Node::Text(text) => Ok(Value::String(text.clone())),
        Node::Bool(value) => Ok(Value::Bool(*value)),
        Node::Number(text) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_number)
            .ok_or_else(|| doc.error(at, format!("{text} is not a JSON number"))),
        other => Err(doc.error(at, format!("expected text, a number or true/false, found {}", other.kind()))),
    }
}
