//! Role categories: what a role's values are, which decides the structural
//! checks they get (paths: canonical forms, protected paths, the sandbox;
//! URLs: hosts and allowed domains).
//!
//! A role's category comes from IronCurtain's role table
//! (`src/types/argument-roles.ts`), which `policy.roles` may extend or
//! override. A role neither knows is a path role when its name ends in
//! `-path`, a URL role when it ends in `-url`, and opaque otherwise: a
//! misspelt or undeclared path role is still checked as a path, never
//! silently let past the protected paths.

use std::collections::HashMap;

use warden_config::RoleCategory;

/// The category of every role a policy can name.
#[derive(Debug, Clone, Default)]
pub(crate) struct RoleTable {
    /// `policy.roles`.
    declared: HashMap<String, RoleCategory>,
}

impl RoleTable {
    /// The built-in table extended by `declared`.
    pub(crate) fn new<'a>(declared: impl IntoIterator<Item = (&'a String, &'a RoleCategory)>) -> RoleTable {
        RoleTable {
            declared: declared.into_iter().map(|(role, category)| (role.trim().to_owned(), *category)).collect(),
        }
    }

    /// The category of `role`.
    pub(crate) fn category(&self, role: &str) -> RoleCategory {
        if let Some(category) = self.declared.get(role) {
            return *category;
        }
        if let Some(category) = RoleCategory::of_ironcurtain_role(role) {
            return category;
        }
        if role.ends_with("-path") {
            RoleCategory::Path
        } else if role.ends_with("-url") {
            RoleCategory::Url
        } else {
            RoleCategory::Opaque
        }
    }
}

impl RoleTable {
    /// Whether `role`'s values are web addresses only (IronCurtain's
    /// `fetch-url`, fetched over HTTP), so git's `host:path` form is not read
    /// as a host; other URL roles take git remotes in every form.
    pub(crate) fn is_web_only(&self, role: &str) -> bool {
        role == "fetch-url" && !self.declared.contains_key(role)
    }
}

/// The lower-case name of `category`, for messages.
pub(crate) fn category_name(category: RoleCategory) -> &'static str {
    match category {
        RoleCategory::Path => "path",
        RoleCategory::Url => "url",
        RoleCategory::Identifier => "identifier",
        RoleCategory::Opaque => "opaque",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_then_declarations_then_the_name_decide() {
        let mut declared = std::collections::BTreeMap::new();
        declared.insert("repo-dir".to_owned(), RoleCategory::Path);
        declared.insert("fetch-url".to_owned(), RoleCategory::Opaque);
        let table = RoleTable::new(&declared);
        assert_eq!(table.category("write-history"), RoleCategory::Path, "IronCurtain's table, not the name");
        assert_eq!(table.category("delete-history"), RoleCategory::Path);
        assert_eq!(table.category("github-owner"), RoleCategory::Identifier);
        assert_eq!(table.category("branch-name"), RoleCategory::Opaque);
        assert_eq!(table.category("repo-dir"), RoleCategory::Path, "declared");
        assert_eq!(table.category("fetch-url"), RoleCategory::Opaque, "a declaration overrides the table");
        assert_eq!(table.category("source-path"), RoleCategory::Path, "undeclared: by its name, never less safe");
        assert_eq!(table.category("mirror-url"), RoleCategory::Url);
        assert_eq!(table.category("sql"), RoleCategory::Opaque);
        assert_eq!(RoleTable::default().category("url"), RoleCategory::Opaque);
    }
}
