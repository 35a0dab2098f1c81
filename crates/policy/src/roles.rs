//! Argument roles: tool annotations, conditional roles, and the values each
//! role has in a call.
//!
//! An annotation gives each argument its roles (`read-path`, `fetch-url`,
//! ...). A conditional entry whose `when` holds replaces the roles of the
//! arguments it lists (IronCurtain's `dryRun: true` turning `edit_file`'s
//! write into a read). A role's values are its arguments' strings: a string,
//! or each string of an array. Any other type is an error naming the
//! argument, never a crash and never a silent pass.

use std::path::PathBuf;

use serde_json::Value;
use warden_config::ToolAnnotation;

use warden_config::RoleCategory;

use crate::categories::RoleTable;
use crate::condition::{Cond, CondCompiler};
use crate::domains::Host;
use crate::scan::Memo;

/// Argument → roles, in order.
type Assignments = Vec<(String, Vec<String>)>;

/// A compiled tool annotation.
#[derive(Debug, Clone)]
pub(crate) struct Annotation {
    /// Whether the tool changes anything.
    pub side_effects: Option<bool>,
    /// Argument → roles.
    args: Assignments,
    /// Replacements when their condition holds, in order.
    conditional: Vec<(Cond, Assignments)>,
}

impl Annotation {
    /// Compiles the annotation of `server`/`tool`; problems name it.
    pub(crate) fn compile(
        server: &str,
        tool: &str,
        annotation: &ToolAnnotation,
        conditions: &mut CondCompiler<'_>,
        problems: &mut Vec<String>,
    ) -> Option<Annotation> {
        let at = format!("annotations.{server}.{tool}");
        let before = problems.len();
        check_args(&annotation.args, &format!("{at}.args"), problems);
        for (i, conditional) in annotation.conditional.iter().enumerate() {
            check_args(&conditional.args, &format!("{at}.conditional[{i}].args"), problems);
        }
        let mut conditional = Vec::new();
        for (i, entry) in annotation.conditional.iter().enumerate() {
            if let Some(when) = conditions.compile(&entry.when, &format!("{at}.conditional[{i}].when"), problems) {
                conditional.push((when, pairs(&entry.args)));
            }
        }
        (problems.len() == before).then(|| Annotation {
            side_effects: annotation.side_effects,
            args: pairs(&annotation.args),
            conditional,
        })
    }

    /// Whether some argument can have `role` (by default or conditionally).
    pub(crate) fn gives_role(&self, role: &str) -> bool {
        self.args
            .iter()
            .chain(self.conditional.iter().flat_map(|(_, replacements)| replacements))
            .any(|(_, roles)| roles.iter().any(|r| r == role))
    }

    /// Whether the annotation says what `arg` is (in `args` or a
    /// conditional entry, with any roles, `none` included).
    pub(crate) fn mentions(&self, arg: &str) -> bool {
        self.args
            .iter()
            .chain(self.conditional.iter().flat_map(|(_, replacements)| replacements))
            .any(|(name, _)| name == arg)
    }

    /// Each argument's roles for `args`, after the conditional entries that
    /// hold; `applied` receives the index of each entry that applied.
    pub(crate) fn assign<'a>(
        &'a self,
        args: &'a Value,
        memo: &mut Memo<'a, '_>,
        applied: &mut Vec<usize>,
    ) -> Vec<(&'a str, &'a [String])> {
        let mut assigned: Vec<(&str, &[String])> =
            self.args.iter().map(|(arg, roles)| (arg.as_str(), roles.as_slice())).collect();
        for (i, (when, replacements)) in self.conditional.iter().enumerate() {
            if !when.holds(args, memo) {
                continue;
            }
            applied.push(i);
            for (arg, roles) in replacements {
                match assigned.iter_mut().find(|(name, _)| name == arg) {
                    Some(entry) => entry.1 = roles,
                    None => assigned.push((arg, roles)),
                }
            }
        }
        assigned
    }
}

/// Reports empty argument and role names.
fn check_args<'m>(args: impl IntoIterator<Item = (&'m String, &'m Vec<String>)>, at: &str, problems: &mut Vec<String>) {
    for (arg, roles) in args {
        if arg.is_empty() {
            problems.push(format!("{at}: an argument name is empty"));
        }
        if roles.iter().any(|r| r.trim().is_empty()) {
            problems.push(format!("{at}: argument {arg:?} has an empty role name"));
        }
    }
}

fn pairs<'m>(args: impl IntoIterator<Item = (&'m String, &'m Vec<String>)>) -> Assignments {
    args.into_iter().map(|(arg, roles)| (arg.clone(), roles.iter().map(|r| r.trim().to_owned()).collect())).collect()
}

/// One value of a role in a call.
#[derive(Debug, Clone)]
pub(crate) struct RoleValue<'a> {
    /// The argument it came from.
    pub arg: &'a str,
    /// The value as given.
    pub text: &'a str,
    /// Path roles: its canonical forms (filled in by the path step).
    pub paths: Vec<PathBuf>,
    /// URL roles: its host, or why it has none (filled in by the URL step).
    pub host: Option<Result<Host, &'static str>>,
}

/// A role of a call with its values.
#[derive(Debug, Clone)]
pub(crate) struct RoleValues<'a> {
    /// The role.
    pub role: &'a str,
    /// Its category.
    pub kind: RoleCategory,
    /// Its values (none when its arguments are absent).
    pub values: Vec<RoleValue<'a>>,
}

/// The roles of a call with their values, in the order first met. Absent and
/// `null` arguments have no values, but their roles are kept (as IronCurtain
/// does): the tool still acts on something, such as a default remote.
pub(crate) fn extract<'a>(
    assigned: &[(&'a str, &'a [String])],
    args: &'a Value,
    table: &RoleTable,
) -> Result<Vec<RoleValues<'a>>, String> {
    let mut roles: Vec<RoleValues<'a>> = Vec::new();
    for &(arg, arg_roles) in assigned {
        if arg_roles.is_empty() {
            continue;
        }
        let texts: Vec<&str> = match args.get(arg) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(items)) => {
                let mut texts = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => texts.push(s.as_str()),
                        other => {
                            return Err(format!(
                                "argument {arg:?} (role {}) must be a string or an array of strings, but item {i} is {}",
                                arg_roles.join(", "),
                                type_name(other)
                            ));
                        }
                    }
                }
                texts
            }
            Some(other) => {
                return Err(format!(
                    "argument {arg:?} (role {}) must be a string or an array of strings, not {}",
                    arg_roles.join(", "),
                    type_name(other)
                ));
            }
        };
        for role in arg_roles {
            let index = match roles.iter().position(|r| r.role == role) {
                Some(index) => index,
                None => {
                    roles.push(RoleValues { role, kind: table.category(role), values: Vec::new() });
                    roles.len() - 1
                }
            };
            if let Some(entry) = roles.get_mut(index) {
                entry.values.extend(texts.iter().map(|&text| RoleValue { arg, text, paths: Vec::new(), host: None }));
            }
        }
    }
    Ok(roles)
}

/// The JSON type of `value`, for messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_grouped_by_role_in_first_seen_order() {
        let read = vec!["read-path".to_owned(), "delete-path".to_owned()];
        let write = vec!["write-path".to_owned(), "read-path".to_owned()];
        let none: Vec<String> = vec![];
        let args = json!({"src": ["a", "b"], "dst": "c", "flag": true});
        let assigned =
            [("src", read.as_slice()), ("dst", write.as_slice()), ("flag", none.as_slice()), ("gone", read.as_slice())];
        let roles = extract(&assigned, &args, &RoleTable::default()).unwrap();
        let summary: Vec<(&str, Vec<&str>)> =
            roles.iter().map(|r| (r.role, r.values.iter().map(|v| v.text).collect())).collect();
        assert_eq!(
            summary,
            vec![("read-path", vec!["a", "b", "c"]), ("delete-path", vec!["a", "b"]), ("write-path", vec!["c"])]
        );
        // An absent argument's roles are kept, without values.
        let empty = json!({});
        let roles = extract(&[("gone", write.as_slice())], &empty, &RoleTable::default()).unwrap();
        assert_eq!(
            roles.iter().map(|r| (r.role, r.values.len())).collect::<Vec<_>>(),
            [("write-path", 0), ("read-path", 0)]
        );
    }

    #[test]
    fn other_types_are_errors() {
        let roles = vec!["read-path".to_owned()];
        for value in [json!(1), json!(false), json!({"p": "x"}), json!(["x", null])] {
            let args = json!({ "p": value });
            let err = extract(&[("p", roles.as_slice())], &args, &RoleTable::default()).unwrap_err();
            assert!(err.contains("\"p\""), "{err}");
        }
        // An argument without roles may be anything.
        let none: Vec<String> = vec![];
        assert!(extract(&[("p", none.as_slice())], &json!({"p": 1}), &RoleTable::default()).unwrap().is_empty());
    }
}
