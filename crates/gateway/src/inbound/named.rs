//! Requests that name a tool or a prompt: `tools/call`, `prompts/get`,
//! `completion/complete` for a prompt, and methods Warden cannot route by name.

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{ErrorCode, Frame, Method, Splice, json_string};

use super::forward::Target;
use crate::catalog::{ItemKind, Route};
use crate::pipeline::Call;
use crate::session::Shared;
use crate::tokens::progress_token;

#[derive(Deserialize)]
struct NamedParams<'a> {
    #[serde(borrow)]
    name: &'a RawValue,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    task: Option<&'a RawValue>,
}

impl Shared {
    /// `tools/call` and `prompts/get`: resolve the client-facing name, check
    /// it is visible, and forward with the upstream's own name.
    pub(super) async fn call_named(&self, frame: &Frame, method: &Method) {
        let kind = if *method == Method::ToolsCall { ItemKind::Tool } else { ItemKind::Prompt };
        let noun = if kind == ItemKind::Tool { "tool" } else { "prompt" };
        let params: NamedParams = match frame.params().map(serde_json::from_str).transpose() {
            Ok(Some(params)) => params,
            Ok(None) => return self.fail(frame, ErrorCode::InvalidParams, "params with a name are required"),
            Err(err) => return self.fail(frame, ErrorCode::InvalidParams, &format!("invalid params: {err}")),
        };
        let Ok(exposed) = serde_json::from_str::<String>(params.name.get()) else {
            return self.fail(frame, ErrorCode::InvalidParams, "name must be a string");
        };
        let hooks = self.hooks.load_full();
        let route = self.resolve(kind, &exposed).await;
        let Some(Route { upstream, name }) =
            route.filter(|route| hooks.view.shows(self.upstream(route.upstream).name(), kind, &route.name))
        else {
            if let Some(down) = self.down_owner(&exposed) {
                return self.fail(
                    frame,
                    ErrorCode::UpstreamUnavailable,
                    &format!("{noun} {exposed} is unavailable: {down}"),
                );
            }
            // Hidden components answer exactly like missing ones.
            return self.fail(frame, ErrorCode::InvalidParams, &format!("Unknown {noun}: {exposed}"));
        };
        let mut splice = Splice::new();
        if name != exposed {
            splice.replace(frame.span_of(params.name.get()), json_string(&name));
        }
        let token = progress_token(frame, params.meta);
        let server = self.upstream(upstream);
        let call = Call {
            session: &self.id,
            server: server.name(),
            method,
            name: &name,
            arguments: params.arguments.map(RawValue::get),
        };
        let target = Target { upstream, splice, token, creates_task: params.task.is_some() };
        self.dispatch(frame, &hooks, call, target).await;
    }

    /// Where a client-facing tool or prompt name leads. A name not known yet
    /// may belong to an upstream still starting: wait for those (up to the
    /// start timeout) before saying it does not exist.
    pub(super) async fn resolve(&self, kind: ItemKind, exposed: &str) -> Option<Route> {
        let lookup = |shared: &Shared| {
            let catalog = shared.read_catalog();
            if kind == ItemKind::Tool { catalog.tool(exposed) } else { catalog.prompt(exposed) }
        };
        if let Some(route) = lookup(self) {
            return Some(route);
        }
        // Boxed: only calls made before the upstreams are listed wait here.
        if Box::pin(self.await_unloaded()).await { lookup(self) } else { None }
    }

    /// Waits for upstreams that are starting, or ready but not yet listed, and
    /// loads their surfaces. Returns whether there were any.
    pub(crate) async fn await_unloaded(&self) -> bool {
        let unloaded: Vec<(usize, warden_upstream::Upstream)> = {
            let upstreams = self.live_upstreams();
            let catalog = self.read_catalog();
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
            if let Some(connection) = upstream.settled(self.start_timeout()).await
                && !self.read_catalog().is_loaded(*index)
            {
                self.load_surface(*index, &connection).await;
            }
        });
        futures_util::future::join_all(waits).await;
        !unloaded.is_empty()
    }

    /// Why the server a name may belong to is not running, if it is not:
    /// the server of its prefix or, when names carry none (`wrap`), every
    /// server that is not running, since any of them may own it (a server an
    /// edit broke answers with its state and stderr, not "Unknown tool").
    fn down_owner(&self, exposed: &str) -> Option<String> {
        let (prefixed, owner) = {
            let catalog = self.read_catalog();
            (catalog.names_are_prefixed(), catalog.prefixed_server(exposed))
        };
        let candidates: Vec<warden_upstream::Upstream> = match owner {
            Some(index) => vec![self.upstream(index)],
            None if !prefixed => self.live_upstreams().into_iter().map(|(_, upstream)| upstream).collect(),
            None => return None,
        };
        let down: Vec<String> = candidates
            .iter()
            // A hidden server's name is unknown, down or not.
            .filter(|upstream| self.shows_server(upstream.name()) && upstream.connection().is_none())
            .map(|upstream| upstream.unavailable().to_string())
            .collect();
        (!down.is_empty()).then(|| down.join("; "))
    }

    /// Methods Warden does not route by name (vendor extensions, tasks): with
    /// one upstream they pass through untouched; with several, which one is
    /// meant cannot be known.
    pub(super) async fn call_unrouted(&self, frame: &Frame, method: &Method) {
        // Hidden servers are not counted: to the client they do not exist.
        let upstreams: Vec<_> =
            self.live_upstreams().into_iter().filter(|(_, upstream)| self.shows_server(upstream.name())).collect();
        let [(index, server)] = upstreams.as_slice() else {
            let message = format!(
                "Method not found: Warden cannot tell which of its {} upstreams serves '{}'",
                upstreams.len(),
                method.as_str()
            );
            return self.fail(frame, ErrorCode::MethodNotFound, &message);
        };
        let hooks = self.hooks.load_full();
        let call =
            Call { session: &self.id, server: server.name(), method, name: method.as_str(), arguments: frame.params() };
        self.dispatch(frame, &hooks, call, Target::upstream(*index)).await;
    }
}
