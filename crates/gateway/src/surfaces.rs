//! Loading what upstreams offer into the catalog: every page of every list,
//! without the tools whose `x-mcp-header` annotations are invalid, reviewed
//! by the pins, at start, after `list_changed` and on each client
//! list.

use std::collections::HashSet;

use warden_jsonrpc::{Kind, Method, json_string};
use warden_upstream::Connection;

use crate::catalog::{Item, ItemKind, Page, header_annotations};
use crate::parts::SessionParts;
use crate::pipeline::{Call, Outcome, Record, ToolDefinition, Verdict};

/// At most this many pages are read from one upstream list.
const MAX_PAGES: usize = 1000;

/// Fetches every kind upstream `index` offers into the catalog and marks
/// it loaded. Returns the kinds whose items changed.
pub(crate) async fn load_surface(session: &SessionParts, index: usize, connection: &Connection) -> Vec<ItemKind> {
    let changed = reload_kinds(session, index, connection, &ItemKind::ALL).await;
    if let Some(mut catalog) = session.catalog_for(index, connection) {
        catalog.mark_loaded(index);
    }
    changed
}

/// Fetches `kinds` from upstream `index` (those it offers) into the
/// catalog. Returns the kinds whose items changed; a failed fetch keeps
/// the last known items.
pub(crate) async fn reload_kinds(
    session: &SessionParts,
    index: usize,
    connection: &Connection,
    kinds: &[ItemKind],
) -> Vec<ItemKind> {
    let mut changed = Vec::new();
    for kind in kinds.iter().copied() {
        if !connection.handshake().has(kind.capability()) {
            // A restarted server may no longer offer a kind it had.
            if session.catalog_for(index, connection).is_some_and(|mut catalog| catalog.set(index, kind, Vec::new())) {
                changed.push(kind);
            }
            continue;
        }
        match tokio::time::timeout(session.surface.start_timeout(), fetch_all(connection, kind)).await {
            Ok(Ok(items)) => {
                if store(session, index, connection, kind, items).await {
                    changed.push(kind);
                }
            }
            Ok(Err(why)) => tracing::warn!(server = connection.name(), "{} failed: {why}", kind.list_method()),
            Err(_) => tracing::warn!(server = connection.name(), "{} timed out", kind.list_method()),
        }
    }
    changed
}

/// Puts items `connection` just listed as upstream `index`'s into the
/// catalog (unless it no longer serves `index`), without
/// the tools whose `x-mcp-header` annotations are invalid (see
/// [`header_annotations`]), after the pins have reviewed its tools (a
/// change seen for the first time is audited). Returns whether anything
/// changed.
pub(crate) async fn store(
    session: &SessionParts,
    index: usize,
    connection: &Connection,
    kind: ItemKind,
    mut items: Vec<Item>,
) -> bool {
    if kind == ItemKind::Tool {
        // Tools with invalid x-mcp-header annotations are left out, for
        // every client: unlisted, and unknown when called.
        let left_out = header_annotations::retain_valid(&mut items);
        let Some(mut catalog) = session.catalog_for(index, connection) else { return false };
        let fresh = catalog.leave_out(index, left_out);
        drop(catalog);
        let upstream = session.upstreams.get(index);
        for (tool, reason) in fresh {
            let server = upstream.name();
            tracing::warn!(server, tool, "tool left out: {reason} (MCP 2026-07-28, x-mcp-header)");
        }
    }
    let hooks = session.surface.hooks.load_full();
    let Some(pins) = hooks.pins.as_ref().filter(|_| kind == ItemKind::Tool) else {
        return session.catalog_for(index, connection).is_some_and(|mut catalog| catalog.set(index, kind, items));
    };
    let upstream = session.upstreams.get(index);
    let server = upstream.name();
    let definitions: Vec<ToolDefinition> =
        items.iter().map(|item| ToolDefinition { name: &item.key, raw: item.raw.get() }).collect();
    let review = pins.review(server, &definitions);
    if !review.withheld.is_empty() {
        tracing::warn!(server, withheld = ?review.withheld, "tools withheld: their definitions changed since they were pinned (see `warden pins list`)");
    }
    if let Some(audit) = &hooks.audit {
        let method = Method::Other("warden/pins".into());
        for tool in &review.changed {
            let withheld = review.withheld.contains(tool);
            let verdict = if withheld {
                Verdict::Deny {
                    rule: "pin-changed".into(),
                    reason: "the tool's definition changed since it was pinned; withheld until `warden pins accept`"
                        .into(),
                }
            } else {
                Verdict::Allow
            };
            let outcome = if withheld { Outcome::Refused } else { Outcome::Result };
            let call = Call { session: &session.id, server, method: &method, name: tool, arguments: None };
            let record = Record {
                call,
                client: session.link.name(),
                principal: session.link.principal.get().map(|name| &**name),
                client_address: None,
                verdict: &verdict,
                outcome: &outcome,
                result: None,
                elapsed: Default::default(),
                approval: None,
            };
            if let Err(why) = audit.record(record).await {
                tracing::error!(server, tool, "could not audit a pin change: {why}");
            }
        }
    }
    let Some(mut catalog) = session.catalog_for(index, connection) else { return false };
    catalog.withhold(index, review.withheld);
    catalog.set(index, kind, items)
}

/// Reads every page of one list from an upstream.
pub(crate) async fn fetch_all(connection: &Connection, kind: ItemKind) -> Result<Vec<Item>, String> {
    paginate(connection, kind.list_method(), |result| {
        Page::parse(kind, result).map(|page| (page.items, page.next_cursor))
    })
    .await
}

/// Asks `method` page after page (`nextCursor`) until the last one; `read`
/// turns one page's result into its items and the next cursor. A cursor that
/// comes back twice, or more than [`MAX_PAGES`] pages, is an error: an
/// upstream must not keep Warden listing forever.
pub(crate) async fn paginate<T>(
    connection: &Connection,
    method: &str,
    mut read: impl FnMut(&str) -> Result<(Vec<T>, Option<String>), String>,
) -> Result<Vec<T>, String> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|cursor| format!(r#"{{"cursor":{}}}"#, json_string(cursor)));
        let answer = connection.request(method, params.as_deref()).await.map_err(|err| err.to_string())?;
        let result = answer.payload().unwrap_or("null");
        if answer.kind() == Kind::ErrorResponse {
            return Err(format!("error {result}"));
        }
        let (page, next) = read(result)?;
        items.extend(page);
        match next {
            None => return Ok(items),
            Some(next) if !seen.insert(next.clone()) => return Err(format!("the cursor {next:?} came back twice")),
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("more than {MAX_PAGES} pages"))
}
