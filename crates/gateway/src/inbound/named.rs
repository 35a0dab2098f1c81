//! Requests that name a tool or a prompt: `tools/call`, `prompts/get`,
//! `completion/complete` for a prompt, and methods Warden cannot route by name.

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{ErrorCode, Frame, Members, Method, Splice, Text, json_string};

use super::dispatch::Target;
use super::dispatch::dispatch;
use crate::catalog::{ItemKind, Route};
use crate::parts::SessionParts;
use crate::parts::progress_token;
use crate::pipeline::Call;
use crate::surfaces::load_surface;

/// The params of a named request, each member as JSON text (absent and
/// `null` alike are `None`, as a typed reader takes them).
struct NamedParams<'a> {
    name: &'a str,
    arguments: Option<&'a str>,
    meta: Option<&'a str>,
    task: Option<&'a str>,
}

impl<'a> NamedParams<'a> {
    /// The params of `frame`: as its parse found them, else read by the
    /// allocation-free member scan, or by serde_json when they are not a
    /// plain object naming each member once (serde_json then decides, and
    /// words the error). `None` without params.
    fn of(frame: &'a Frame) -> Option<Result<NamedParams<'a>, serde_json::Error>> {
        let not_null = |value: Option<&'a str>| value.filter(|value| *value != "null");
        if let Some(members) = frame.param_members()
            && let Some(name) = members.name
        {
            let (arguments, meta, task) = (not_null(members.arguments), not_null(members.meta), not_null(members.task));
            return Some(Ok(NamedParams { name, arguments, meta, task }));
        }
        frame.params().map(NamedParams::read)
    }

    /// Reads `params` by the allocation-free member scan, or by serde_json
    /// when they are not a plain object naming each member once (serde_json
    /// then decides, and words the error).
    fn read(params: &'a str) -> Result<NamedParams<'a>, serde_json::Error> {
        if let Ok(members) = Members::parse(params)
            && let (Ok(Some(name)), Ok(arguments), Ok(meta), Ok(task)) = (
                members.get_once("name"),
                members.optional("arguments"),
                members.optional("_meta"),
                members.optional("task"),
            )
        {
            return Ok(NamedParams { name, arguments, meta, task });
        }
        let read: SerdeNamedParams = serde_json::from_str(params)?;
        Ok(NamedParams {
            name: read.name.get(),
            arguments: read.arguments.map(RawValue::get),
            meta: read.meta.map(RawValue::get),
            task: read.task.map(RawValue::get),
        })
    }
}

#[derive(Deserialize)]
struct SerdeNamedParams<'a> {
    #[serde(borrow)]
    name: &'a RawValue,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    task: Option<&'a RawValue>,
}

/// `tools/call` and `prompts/get`: resolve the client-facing name, check
/// it is visible, and forward with the upstream's own name.
pub(super) async fn call_named(session: &SessionParts, frame: &Frame, method: &Method) {
    let kind = if *method == Method::ToolsCall { ItemKind::Tool } else { ItemKind::Prompt };
    let noun = if kind == ItemKind::Tool { "tool" } else { "prompt" };
    let params = match NamedParams::of(frame).transpose() {
        Ok(Some(params)) => params,
        Ok(None) => return session.link.fail(frame, ErrorCode::InvalidParams, "params with a name are required"),
        Err(err) => return session.link.fail(frame, ErrorCode::InvalidParams, &format!("invalid params: {err}")),
    };
    let Some(Text(exposed)) = Text::read(params.name) else {
        return session.link.fail(frame, ErrorCode::InvalidParams, "name must be a string");
    };
    let hooks = session.surface.hooks.load_full();
    let route = resolve(session, kind, &exposed).await;
    let shown = route
        .map(|route| (session.upstreams.get(route.upstream), route))
        .filter(|(server, route)| hooks.view.shows(server.name(), kind, &route.name));
    let Some((server, Route { upstream, name })) = shown else {
        if let Some(down) = down_owner(session, &exposed) {
            return session.link.fail(
                frame,
                ErrorCode::UpstreamUnavailable,
                &format!("{noun} {exposed} is unavailable: {down}"),
            );
        }
        // Hidden components answer exactly like missing ones.
        return session.link.fail(frame, ErrorCode::InvalidParams, &format!("Unknown {noun}: {exposed}"));
    };
    let mut splice = Splice::new();
    if *name != *exposed {
        splice.replace(frame.span_of(params.name), json_string(&name));
    }
    let token = progress_token(frame, || params.meta);
    let call = Call { session: &session.id, server: server.name(), method, name: &name, arguments: params.arguments };
    let target = Target { upstream, splice, token, creates_task: params.task.is_some() };
    dispatch(session, frame, &hooks, call, target).await;
}

/// Where a client-facing tool or prompt name leads. A name not known yet
/// may belong to an upstream still starting: wait for those (up to the
/// start timeout) before saying it does not exist.
pub(super) async fn resolve(session: &SessionParts, kind: ItemKind, exposed: &str) -> Option<Route> {
    let lookup = |session: &SessionParts| {
        let catalog = session.surface.read_catalog();
        if kind == ItemKind::Tool { catalog.tool(exposed) } else { catalog.prompt(exposed) }
    };
    if let Some(route) = lookup(session) {
        return Some(route);
    }
    // Boxed: only calls made before the upstreams are listed wait here.
    Box::pin(await_unloaded(session)).await;
    // Looked up again even when there was nothing left to wait for: a load
    // that finished after the first look is what made it so.
    lookup(session)
}

/// Waits for upstreams that are starting, or ready but not yet listed, and
/// loads their surfaces.
pub(crate) async fn await_unloaded(session: &SessionParts) {
    let unloaded: Vec<(usize, warden_upstream::Upstream)> = {
        let upstreams = session.live_upstreams();
        let catalog = session.surface.read_catalog();
        upstreams
            .into_iter()
            .filter(|(index, _)| !catalog.is_loaded(*index))
            .filter(|(_, upstream)| {
                matches!(
                    upstream.state(),
                    warden_upstream::UpstreamState::Starting | warden_upstream::UpstreamState::Ready(_)
                )
            })
            .collect()
    };
    // All at once: the wait is as long as the slowest, not the sum.
    let waits = unloaded.iter().map(|(index, upstream)| async move {
        if let Some(connection) = upstream.settled(session.surface.start_timeout()).await
            && !session.surface.read_catalog().is_loaded(*index)
        {
            load_surface(session, *index, &connection).await;
        }
    });
    futures_util::future::join_all(waits).await;
}

/// Why the server a name may belong to is not running, if it is not:
/// the server of its prefix or, when names carry none (`wrap`), every
/// server that is not running, since any of them may own it (a server an
/// edit broke answers with its state and stderr, not "Unknown tool").
fn down_owner(session: &SessionParts, exposed: &str) -> Option<String> {
    let (prefixed, owner) = {
        let catalog = session.surface.read_catalog();
        (catalog.names_are_prefixed(), catalog.prefixed_server(exposed))
    };
    let candidates: Vec<warden_upstream::Upstream> = match owner {
        Some(index) => vec![session.upstreams.get(index)],
        None if !prefixed => session.live_upstreams().into_iter().map(|(_, upstream)| upstream).collect(),
        None => return None,
    };
    let down: Vec<String> = candidates
        .iter()
        // A hidden server's name is unknown, down or not.
        .filter(|upstream| session.surface.shows_server(upstream.name()) && upstream.connection().is_none())
        .map(|upstream| upstream.unavailable().to_string())
        .collect();
    (!down.is_empty()).then(|| down.join("; "))
}

/// Methods Warden does not route by name (vendor extensions, tasks): with
/// one upstream they pass through untouched; with several, which one is
/// meant cannot be known.
pub(super) async fn call_unrouted(session: &SessionParts, frame: &Frame, method: &Method) {
    // Hidden servers are not counted: to the client they do not exist.
    let upstreams: Vec<_> = session
        .live_upstreams()
        .into_iter()
        .filter(|(_, upstream)| session.surface.shows_server(upstream.name()))
        .collect();
    let [(index, server)] = upstreams.as_slice() else {
        let message = format!(
            "Method not found: Warden cannot tell which of its {} upstreams serves '{}'",
            upstreams.len(),
            method.as_str()
        );
        return session.link.fail(frame, ErrorCode::MethodNotFound, &message);
    };
    let hooks = session.surface.hooks.load_full();
    let call =
        Call { session: &session.id, server: server.name(), method, name: method.as_str(), arguments: frame.params() };
    dispatch(session, frame, &hooks, call, Target::upstream(*index)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan reads named params as serde_json's typed reader does.
    #[test]
    fn named_params_read_as_serde_reads_them() {
        let by_serde = |params: &str| {
            serde_json::from_str::<SerdeNamedParams>(params).map(|read| {
                (read.name.get().to_owned(), read.arguments.map(|a| a.get().to_owned()), read.task.is_some())
            })
        };
        for params in [
            r#"{"name":"t","arguments":{"a":[1,{"b":2}]},"_meta":{"progressToken":1}}"#,
            r#"{"name":"t","arguments":null,"task":null}"#,
            r#"{"name":"t","task":{"ttl":1},"x":1,"x":2}"#,
            r#"{"name":null}"#,
            r#"{"arguments":{}}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"name":"t","arguments":{},"arguments":{}}"#,
            r#"["t",{"a":1}]"#,
            r#"{"name" : "t" , "arguments" : { "a" : 1 } }"#,
        ] {
            let ours = NamedParams::read(params)
                .map(|read| (read.name.to_owned(), read.arguments.map(str::to_owned), read.task.is_some()));
            match (ours, by_serde(params)) {
                (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{params}"),
                (Err(ours), Err(theirs)) => assert_eq!(ours.to_string(), theirs.to_string(), "{params}"),
                (ours, theirs) => panic!("{params}: {:?} against {:?}", ours.is_ok(), theirs.is_ok()),
            }
        }
    }
}
