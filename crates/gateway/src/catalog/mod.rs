//! The merged view of every upstream's tools, prompts, resources and templates,
//! and the maps that route a client's names and URIs back to their upstream.

pub mod header_annotations;
mod naming;
mod surface;
mod template;

use std::collections::HashMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{Splice, json_string, span_in};

use header_annotations::InvalidAnnotation;
pub use naming::Namer;
pub use surface::{Item, ItemKind, Page, Surface};
pub use template::{UriTemplate, expand_literally};
pub use warden_pipeline::InventoryItem;
use warden_pipeline::{ShowAll, View};

/// Where a client-facing name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The upstream's index.
    pub upstream: usize,
    /// The name the upstream knows (shared with the catalog: a route costs
    /// no copy).
    pub name: Arc<str>,
}

/// One tool or prompt as the client sees it.
#[derive(Debug)]
struct Exposed {
    upstream: usize,
    original: Arc<str>,
    /// The item's JSON with its name replaced by the exposed one.
    raw: String,
    /// Where `raw`'s `inputSchema` is, when it mirrors arguments in headers
    /// (`x-mcp-header`, 2026-07-28): found once, not at every call.
    mirrored_schema: Option<std::ops::Range<usize>>,
}

/// Tools or prompts by client-facing name.
#[derive(Debug, Default)]
struct NameIndex {
    entries: Vec<Exposed>,
    by_name: foldhash::HashMap<String, usize>,
}

/// Everything the upstreams offer, merged and indexed.
#[derive(Debug)]
pub struct Catalog {
    namer: Namer,
    servers: Vec<Arc<str>>,
    surfaces: Vec<Option<Surface>>,
    /// Whether each upstream's every list has been read since it started:
    /// until then, a name not found may still appear.
    loaded: Vec<bool>,
    tools: NameIndex,
    prompts: NameIndex,
    resources: Vec<(usize, usize)>,
    resource_owner: foldhash::HashMap<String, usize>,
    templates: Vec<(usize, usize, Option<UriTemplate>)>,
    collisions: Vec<String>,
    /// Per upstream, tools withheld by pins.
    withheld: Vec<std::collections::HashSet<String>>,
    /// Per upstream, the tools its last list left out for their
    /// `x-mcp-header` annotations, and why.
    left_out: Vec<Vec<(String, InvalidAnnotation)>>,
    /// What the client may see: an item it may not see takes no name, so
    /// a later server's visible item of that name is served instead.
    view: Visible,
}

/// The view the catalog names by (opaque to `Debug`).
struct Visible(Arc<dyn View>);

impl std::fmt::Debug for Visible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("View")
    }
}

impl Catalog {
    /// An empty catalog for `servers` (in configuration order).
    pub fn new(namer: Namer, servers: Vec<Arc<str>>) -> Self {
        let surfaces = vec![None; servers.len()];
        let servers_len = servers.len();
        let withheld = vec![Default::default(); servers.len()];
        let left_out = vec![Vec::new(); servers.len()];
        Catalog {
            withheld,
            left_out,
            namer,
            servers,
            surfaces,
            loaded: vec![false; servers_len],
            tools: NameIndex::default(),
            prompts: NameIndex::default(),
            resources: Vec::new(),
            resource_owner: Default::default(),
            templates: Vec::new(),
            collisions: Vec::new(),
            view: Visible(Arc::new(ShowAll)),
        }
    }

    /// Names only what `view` shows from now on (a profile's view, swapped
    /// on reload): an item it hides takes no name.
    pub fn set_view(&mut self, view: Arc<dyn View>) {
        self.view = Visible(view);
        self.rebuild();
    }

    /// Adds a server after the last one; returns its index.
    pub fn add_server(&mut self, server: Arc<str>) -> usize {
        self.servers.push(server);
        self.surfaces.push(None);
        self.loaded.push(false);
        self.withheld.push(Default::default());
        self.left_out.push(Vec::new());
        self.servers.len() - 1
    }

    /// Names tools and prompts with `namer` from now on. Returns the kinds
    /// whose client-facing names changed.
    pub fn set_namer(&mut self, namer: Namer) -> Vec<ItemKind> {
        let before = [self.tools.by_name.clone(), self.prompts.by_name.clone()];
        self.namer = namer;
        self.rebuild();
        let after = [&self.tools.by_name, &self.prompts.by_name];
        [ItemKind::Tool, ItemKind::Prompt]
            .into_iter()
            .zip(before.iter().zip(after))
            .filter(|(_, (before, after))| before != after)
            .map(|(kind, _)| kind)
            .collect()
    }

    /// Whether upstream `upstream`'s surface has been loaded.
    pub fn is_loaded(&self, upstream: usize) -> bool {
        self.loaded.get(upstream).copied().unwrap_or(false)
    }

    /// Replaces upstream `upstream`'s items of `kind`. Returns whether
    /// anything the client can see changed.
    pub fn set(&mut self, upstream: usize, kind: ItemKind, items: Vec<Item>) -> bool {
        let Some(slot) = self.surfaces.get_mut(upstream) else { return false };
        let surface = slot.get_or_insert_with(Surface::default);
        let old = surface.items(kind);
        let same = old.len() == items.len() && old.iter().zip(&items).all(|(a, b)| a.raw.get() == b.raw.get());
        *surface.items_mut(kind) = items;
        self.rebuild();
        !same
    }

    /// Withholds these tools of upstream `upstream` (their pins changed).
    pub fn withhold(&mut self, upstream: usize, names: impl IntoIterator<Item = String>) {
        if let Some(withheld) = self.withheld.get_mut(upstream) {
            *withheld = names.into_iter().collect();
        }
    }

    /// Records the tools upstream `upstream`'s latest list left out for their
    /// `x-mcp-header` annotations (see [`header_annotations`]). Returns those
    /// its previous list did not leave out for the same reason: the ones to
    /// warn about.
    pub fn leave_out(
        &mut self,
        upstream: usize,
        tools: Vec<(String, InvalidAnnotation)>,
    ) -> Vec<(String, InvalidAnnotation)> {
        let Some(known) = self.left_out.get_mut(upstream) else { return tools };
        let fresh = tools.iter().filter(|tool| !known.contains(tool)).cloned().collect();
        *known = tools;
        fresh
    }

    /// Marks upstream `upstream` as loaded, with no items yet.
    pub fn mark_loaded(&mut self, upstream: usize) {
        if let Some(slot) = self.surfaces.get_mut(upstream) {
            slot.get_or_insert_with(Surface::default);
        }
        if let Some(loaded) = self.loaded.get_mut(upstream) {
            *loaded = true;
        }
    }

    /// Forgets upstream `upstream`'s surface (it went down). Returns the kinds
    /// that had items.
    pub fn clear(&mut self, upstream: usize) -> Vec<ItemKind> {
        if let Some(loaded) = self.loaded.get_mut(upstream) {
            *loaded = false;
        }
        if let Some(left_out) = self.left_out.get_mut(upstream) {
            left_out.clear();
        }
        let Some(surface) = self.surfaces.get_mut(upstream).and_then(Option::take) else { return Vec::new() };
        self.rebuild();
        ItemKind::ALL.into_iter().filter(|kind| !surface.items(*kind).is_empty()).collect()
    }

    /// Name collisions found by the last rebuild, one sentence each.
    pub fn collisions(&self) -> &[String] {
        &self.collisions
    }

    /// The server whose prefix `exposed` carries, if names are prefixed.
    pub fn prefixed_server(&self, exposed: &str) -> Option<usize> {
        self.servers.iter().position(|server| self.namer.has_prefix(exposed, server))
    }

    /// Whether client-facing names carry their server's prefix (when they
    /// do not, a name says nothing of the server it belongs to).
    pub fn names_are_prefixed(&self) -> bool {
        self.namer.prefixes()
    }

    /// Where a client-facing tool name leads.
    pub fn tool(&self, exposed: &str) -> Option<Route> {
        Self::route(&self.tools, exposed)
    }

    /// For the tool the client knows as `exposed`: `None` if it is not
    /// listed, else its `inputSchema` (JSON text) if that mirrors arguments
    /// in headers (`x-mcp-header`, 2026-07-28), else `Some(None)`.
    pub fn tool_mirrored_schema(&self, exposed: &str) -> Option<Option<&str>> {
        let index = &self.tools;
        let entry = &index.entries[*index.by_name.get(exposed)?];
        Some(entry.mirrored_schema.clone().map(|span| &entry.raw[span]))
    }

    /// Where a client-facing prompt name leads.
    pub fn prompt(&self, exposed: &str) -> Option<Route> {
        Self::route(&self.prompts, exposed)
    }

    fn route(index: &NameIndex, exposed: &str) -> Option<Route> {
        let entry = &index.entries[*index.by_name.get(exposed)?];
        Some(Route { upstream: entry.upstream, name: entry.original.clone() })
    }

    /// The upstream that serves `uri`: the one that listed it, else the first
    /// whose template matches it, else the only upstream that offers resources.
    pub fn resource_owner(&self, uri: &str) -> Option<usize> {
        if let Some(owner) = self.resource_owner.get(uri) {
            return Some(*owner);
        }
        if let Some((owner, _, _)) =
            self.templates.iter().find(|(_, _, template)| template.as_ref().is_some_and(|t| t.matches(uri)))
        {
            return Some(*owner);
        }
        let mut offering = self.surfaces.iter().enumerate().filter(|(_, surface)| {
            surface.as_ref().is_some_and(|s| !s.resources.is_empty() || !s.templates.is_empty())
        });
        match (offering.next(), offering.next()) {
            (Some((only, _)), None) => Some(only),
            _ => None,
        }
    }

    /// The upstream that listed the URI template `template` (for completion).
    pub fn template_owner(&self, template: &str) -> Option<usize> {
        self.templates
            .iter()
            .find(|(upstream, item, _)| {
                self.item(*upstream, ItemKind::Template, *item).is_some_and(|i| i.key == template)
            })
            .map(|(upstream, _, _)| *upstream)
    }

    /// The list result for `kind` (`{"tools":[...]}`), with only the items
    /// `shows(server, key)` accepts. Keys are the upstream's own names.
    pub fn list(&self, kind: ItemKind, shows: &dyn Fn(&str, &str) -> bool) -> String {
        let mut out = String::with_capacity(4096);
        out.push('{');
        out.push_str(&json_string(kind.field()));
        out.push_str(":[");
        let mut first = true;
        let mut push = |raw: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(raw);
        };
        match kind {
            ItemKind::Tool | ItemKind::Prompt => {
                let index = if kind == ItemKind::Tool { &self.tools } else { &self.prompts };
                for entry in &index.entries {
                    if shows(&self.servers[entry.upstream], &entry.original) {
                        push(&entry.raw);
                    }
                }
            }
            ItemKind::Resource => {
                for (upstream, item) in &self.resources {
                    if let Some(item) = self.item(*upstream, kind, *item)
                        && shows(&self.servers[*upstream], &item.key)
                    {
                        push(item.raw.get());
                    }
                }
            }
            ItemKind::Template => {
                for (upstream, item, _) in &self.templates {
                    if let Some(item) = self.item(*upstream, kind, *item)
                        && shows(&self.servers[*upstream], &item.key)
                    {
                        push(item.raw.get());
                    }
                }
            }
        }
        out.push_str("]}");
        out
    }

    fn item(&self, upstream: usize, kind: ItemKind, index: usize) -> Option<&Item> {
        self.surfaces.get(upstream)?.as_ref()?.items(kind).get(index)
    }

    /// Recomputes every index from the surfaces. Lists are small (hundreds of
    /// items), and this runs only when an upstream's surface changes.
    fn rebuild(&mut self) {
        let mut collisions = Vec::new();
        self.tools = self.index_names(ItemKind::Tool, &mut collisions);
        self.prompts = self.index_names(ItemKind::Prompt, &mut collisions);
        self.resources.clear();
        self.resource_owner.clear();
        self.templates.clear();
        let mut template_owner: HashMap<&str, usize> = HashMap::new();
        for (upstream, surface) in self.surfaces.iter().enumerate() {
            let Some(surface) = surface else { continue };
            let server = &self.servers[upstream];
            for (index, item) in surface.resources.iter().enumerate() {
                if !self.view.0.shows(server, ItemKind::Resource, &item.key) {
                    continue;
                }
                match self.resource_owner.get(&item.key) {
                    Some(&owner) if owner != upstream => collisions.push(format!(
                        "resource '{}' of server '{}' is hidden: server '{}' lists the same URI",
                        item.key, self.servers[upstream], self.servers[owner]
                    )),
                    Some(_) => {}
                    None => {
                        self.resource_owner.insert(item.key.clone(), upstream);
                        self.resources.push((upstream, index));
                    }
                }
            }
            for (index, item) in surface.templates.iter().enumerate() {
                if !self.view.0.shows(server, ItemKind::Template, &item.key) {
                    continue;
                }
                match template_owner.get(item.key.as_str()) {
                    Some(&owner) if owner != upstream => collisions.push(format!(
                        "resource template '{}' of server '{}' is hidden: server '{}' lists the same template",
                        item.key, self.servers[upstream], self.servers[owner]
                    )),
                    Some(_) => {}
                    None => {
                        template_owner.insert(&item.key, upstream);
                        self.templates.push((upstream, index, UriTemplate::new(&item.key)));
                    }
                }
            }
        }
        for collision in &collisions {
            if !self.collisions.contains(collision) {
                tracing::warn!("name collision: {collision}");
            }
        }
        self.collisions = collisions;
    }

    fn index_names(&self, kind: ItemKind, collisions: &mut Vec<String>) -> NameIndex {
        let mut index = NameIndex::default();
        for (upstream, surface) in self.surfaces.iter().enumerate() {
            let Some(surface) = surface else { continue };
            let server = &self.servers[upstream];
            for item in surface.items(kind) {
                if kind == ItemKind::Tool && self.withheld[upstream].contains(&item.key) {
                    continue;
                }
                if !self.view.0.shows(server, kind, &item.key) {
                    continue;
                }
                let exposed = self.namer.expose(server, &item.key);
                if let Some(&taken) = index.by_name.get(&exposed) {
                    let owner = &self.servers[index.entries[taken].upstream];
                    collisions.push(format!(
                        "{} '{}' of server '{server}' is hidden: server '{owner}' already exposes that name",
                        if kind == ItemKind::Tool { "tool" } else { "prompt" },
                        item.key
                    ));
                    continue;
                }
                let raw = if exposed == item.key { item.raw.get().to_owned() } else { rename(&item.raw, &exposed) };
                index.by_name.insert(exposed.clone(), index.entries.len());
                let mirrored_schema = mirrored_schema(&raw);
                index.entries.push(Exposed { upstream, original: Arc::from(item.key.as_str()), raw, mirrored_schema });
            }
        }
        index
    }

    /// Every item of every loaded upstream, in order. Items hidden by a name
    /// collision are included under the name they would have had.
    pub fn inventory(&self) -> Vec<InventoryItem> {
        #[derive(Deserialize, Default)]
        struct Described {
            #[serde(default)]
            description: Option<String>,
            #[serde(default)]
            annotations: Option<Annotations>,
        }
        #[derive(Deserialize)]
        struct Annotations {
            #[serde(default, rename = "readOnlyHint")]
            read_only_hint: Option<bool>,
        }
        let mut items = Vec::new();
        for (upstream, surface) in self.surfaces.iter().enumerate() {
            let Some(surface) = surface else { continue };
            let server = &self.servers[upstream];
            for kind in ItemKind::ALL {
                for item in surface.items(kind) {
                    let exposed = if kind.is_named() { self.namer.expose(server, &item.key) } else { item.key.clone() };
                    let described = serde_json::from_str::<Described>(item.raw.get()).unwrap_or_default();
                    let read_only = described.annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
                    items.push(InventoryItem {
                        server: server.to_string(),
                        kind,
                        key: item.key.clone(),
                        exposed,
                        description: described.description,
                        read_only,
                    });
                }
            }
        }
        items
    }
}

/// Where a tool's `inputSchema` is in its definition `raw`, if it mirrors
/// arguments in headers; most tools mirror none, and their schema is not read.
fn mirrored_schema(raw: &str) -> Option<std::ops::Range<usize>> {
    if !raw.contains("x-mcp-header") {
        return None;
    }
    let schema = warden_jsonrpc::Members::parse(raw).ok()?.get("inputSchema")?;
    Some(span_in(raw, schema))
}

/// `raw` with its top-level `name` replaced by `name`, every other byte kept.
fn rename(raw: &RawValue, name: &str) -> String {
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        name: &'a RawValue,
    }
    match serde_json::from_str::<Named>(raw.get()) {
        Ok(named) => {
            let mut splice = Splice::new();
            splice.replace(span_in(raw.get(), named.name.get()), json_string(name));
            splice.apply(raw.get())
        }
        // Unreachable: items are indexed only when their name was read.
        Err(_) => raw.get().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_config::{Naming, PrefixMode};

    fn items(kind: ItemKind, json: &str) -> Vec<Item> {
        Page::parse(kind, json).unwrap().items
    }

    fn catalog(prefix: PrefixMode) -> Catalog {
        let naming = Naming { prefix, ..Naming::default() };
        Catalog::new(Namer::new(&naming, 2), vec!["a".into(), "b".into()])
    }

    #[test]
    fn prefixed_names_route_back_and_keep_other_bytes() {
        let mut catalog = catalog(PrefixMode::Always);
        catalog.set(0, ItemKind::Tool, items(ItemKind::Tool, r#"{"tools":[{"name":"echo","x":[1.50,"é"]}]}"#));
        catalog.set(1, ItemKind::Tool, items(ItemKind::Tool, r#"{"tools":[{"name":"echo"}]}"#));
        assert_eq!(catalog.tool("a__echo"), Some(Route { upstream: 0, name: "echo".into() }));
        assert_eq!(catalog.tool("b__echo"), Some(Route { upstream: 1, name: "echo".into() }));
        assert_eq!(catalog.tool("echo"), None);
        assert_eq!(
            catalog.list(ItemKind::Tool, &|_, _| true),
            r#"{"tools":[{"name":"a__echo","x":[1.50,"é"]},{"name":"b__echo"}]}"#
        );
        assert_eq!(catalog.list(ItemKind::Tool, &|server, _| server == "b"), r#"{"tools":[{"name":"b__echo"}]}"#);
        assert!(catalog.collisions().is_empty());
    }

    #[test]
    fn unprefixed_collisions_keep_the_first_server_and_are_reported() {
        let mut catalog = catalog(PrefixMode::Never);
        catalog.set(1, ItemKind::Tool, items(ItemKind::Tool, r#"{"tools":[{"name":"echo","from":"b"}]}"#));
        catalog.set(0, ItemKind::Tool, items(ItemKind::Tool, r#"{"tools":[{"name":"echo","from":"a"}]}"#));
        assert_eq!(catalog.tool("echo").unwrap().upstream, 0, "configuration order decides");
        assert_eq!(catalog.collisions().len(), 1);
        assert!(catalog.collisions()[0].contains("server 'b'"));
        assert_eq!(catalog.clear(0), vec![ItemKind::Tool]);
        assert_eq!(catalog.tool("echo").unwrap().upstream, 1);
        assert!(catalog.collisions().is_empty());
    }

    /// Hides server `a`'s items; shows everything else.
    struct HideA;

    impl View for HideA {
        fn shows(&self, server: &str, _kind: ItemKind, _key: &str) -> bool {
            server != "a"
        }
    }

    #[test]
    fn an_item_the_view_hides_takes_no_name() {
        let mut catalog = catalog(PrefixMode::Never);
        catalog.set(0, ItemKind::Tool, items(ItemKind::Tool, r#"{"tools":[{"name":"echo","from":"a"}]}"#));
        catalog.set(1, ItemKind::Tool, items(ItemKind::Tool, r#"{"tools":[{"name":"echo","from":"b"}]}"#));
        catalog.set(0, ItemKind::Resource, items(ItemKind::Resource, r#"{"resources":[{"uri":"file:///x"}]}"#));
        catalog.set(1, ItemKind::Resource, items(ItemKind::Resource, r#"{"resources":[{"uri":"file:///x"}]}"#));
        assert_eq!(catalog.tool("echo").unwrap().upstream, 0);
        assert_eq!(catalog.collisions().len(), 2);
        catalog.set_view(Arc::new(HideA));
        assert_eq!(catalog.tool("echo").unwrap().upstream, 1, "the hidden first server leaves the name to b");
        assert!(catalog.collisions().is_empty(), "{:?}", catalog.collisions());
        catalog.set_view(Arc::new(ShowAll));
        assert_eq!(catalog.tool("echo").unwrap().upstream, 0, "shown again, a takes it back");
        assert_eq!(catalog.collisions().len(), 2);
    }

    #[test]
    fn tools_left_out_are_new_once_per_upstream_until_it_goes_down() {
        let mut catalog = catalog(PrefixMode::Always);
        let empty = InvalidAnnotation::Empty { path: "/properties/p".into() };
        let bad = || vec![("bad".to_owned(), empty.clone())];
        assert_eq!(catalog.leave_out(0, bad()), bad(), "first seen");
        assert_eq!(catalog.leave_out(0, bad()), vec![], "seen before");
        assert_eq!(catalog.leave_out(1, bad()), bad(), "another upstream");
        let other = InvalidAnnotation::Unreachable { path: "/items".into() };
        assert_eq!(catalog.leave_out(0, vec![("bad".into(), other.clone())]), vec![("bad".into(), other)]);
        catalog.clear(1);
        assert_eq!(catalog.leave_out(1, bad()), bad(), "after a restart");
    }

    #[test]
    fn resources_route_by_uri_then_template_then_sole_owner() {
        let mut catalog = catalog(PrefixMode::Always);
        catalog.set(0, ItemKind::Resource, items(ItemKind::Resource, r#"{"resources":[{"uri":"x://readme"}]}"#));
        catalog.set(
            1,
            ItemKind::Template,
            items(ItemKind::Template, r#"{"resourceTemplates":[{"uriTemplate":"y://items/{id}"}]}"#),
        );
        assert_eq!(catalog.resource_owner("x://readme"), Some(0));
        assert_eq!(catalog.resource_owner("y://items/7"), Some(1));
        assert_eq!(catalog.resource_owner("z://unknown"), None, "two upstreams offer resources");
        assert_eq!(catalog.template_owner("y://items/{id}"), Some(1));
        catalog.clear(1);
        assert_eq!(catalog.resource_owner("z://unknown"), Some(0), "the only upstream with resources");
        catalog.set(1, ItemKind::Resource, items(ItemKind::Resource, r#"{"resources":[{"uri":"x://readme"}]}"#));
        assert_eq!(catalog.collisions().len(), 1);
        assert_eq!(catalog.list(ItemKind::Resource, &|_, _| true), r#"{"resources":[{"uri":"x://readme"}]}"#);
    }
}
