//! Requests routed by URI or by reference: `resources/read`,
//! `resources/subscribe`, `resources/unsubscribe` and `completion/complete`.

use serde::Deserialize;
use serde_json::value::RawValue;
use warden_jsonrpc::{ErrorCode, Frame, Method, Splice, error_response, json_string};

use super::dispatch::Target;
use super::dispatch::dispatch;
use super::named::{await_unloaded, resolve};
use crate::catalog::{ItemKind, Route};
use crate::parts::SessionParts;
use crate::parts::progress_token;
use crate::pipeline::Call;
use warden_sync::lock;

#[derive(Deserialize)]
struct UriParams<'a> {
    uri: String,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CompleteParams<'a> {
    #[serde(borrow, rename = "ref")]
    reference: Reference<'a>,
    /// The argument being completed (`{name, value}`).
    #[serde(borrow, default)]
    argument: Option<&'a RawValue>,
    /// What the client filled in already (`{arguments}`).
    #[serde(borrow, default)]
    context: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

/// The argument being completed, as the judged URI needs it.
#[derive(Deserialize)]
struct Argument {
    name: String,
    value: String,
}

/// What the client filled in already, as the judged URI needs it. Any
/// value is taken, and only strings are used: one value of another type
/// must not drop the others from the URI (a server may ignore it, and
/// expand the rest).
#[derive(Deserialize)]
struct Context {
    #[serde(default)]
    arguments: std::collections::HashMap<String, serde_json::Value>,
}

impl CompleteParams<'_> {
    /// The values the completion is asked for, for the stages to judge as a
    /// call's arguments (JSON text): a server completing a path lists the
    /// directory the partial value, or one filled in before it, is in. For
    /// a resource `template`, also the URI they make of it (`uri`), which
    /// names that directory even when the values alone do not
    /// (`file:///home/u/{path}` with `.ssh/`).
    fn judged(&self, template: Option<&str>) -> Option<String> {
        if self.argument.is_none() && self.context.is_none() {
            return None;
        }
        let (argument, context) =
            (self.argument.map_or("null", RawValue::get), self.context.map_or("null", RawValue::get));
        let filled = self.argument.and_then(|raw| serde_json::from_str::<Argument>(raw.get()).ok());
        let before = self.context.and_then(|raw| serde_json::from_str::<Context>(raw.get()).ok());
        let uri = template.map(|template| {
            crate::catalog::expand_literally(template, |name| match &filled {
                Some(filled) if filled.name == name => Some(filled.value.as_str()),
                _ => before.as_ref().and_then(|before| before.arguments.get(name)).and_then(serde_json::Value::as_str),
            })
        });
        Some(match uri {
            Some(uri) => format!(r#"{{"argument":{argument},"context":{context},"uri":{}}}"#, json_string(&uri)),
            None => format!(r#"{{"argument":{argument},"context":{context}}}"#),
        })
    }
}

#[derive(Deserialize)]
struct Reference<'a> {
    #[serde(rename = "type")]
    kind: String,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(default)]
    uri: Option<String>,
}

/// Reads and subscriptions go to the upstream that listed the URI, or whose
/// template matches it.
pub(super) async fn call_resource(session: &SessionParts, frame: &Frame, method: &Method) {
    let params: UriParams = match frame.params().map(serde_json::from_str).transpose() {
        Ok(Some(params)) => params,
        Ok(None) => return session.link.fail(frame, ErrorCode::InvalidParams, "params with a uri are required"),
        Err(err) => return session.link.fail(frame, ErrorCode::InvalidParams, &format!("invalid params: {err}")),
    };
    let hooks = session.surface.hooks.load_full();
    let owner = resource_owner(session, &params.uri).await;
    let Some(upstream) =
        owner.filter(|owner| hooks.view.shows(session.upstreams.get(*owner).name(), ItemKind::Resource, &params.uri))
    else {
        let data = format!(r#"{{"uri":{}}}"#, json_string(&params.uri));
        let message = format!("Resource not found: {}", params.uri);
        crate::served::failed(ErrorCode::ResourceNotFound.code());
        return session
            .link
            .respond(frame, error_response(frame.id(), ErrorCode::ResourceNotFound, &message, Some(&data)));
    };
    match method {
        Method::ResourcesSubscribe => {
            let text = frame.params().unwrap_or("{}").to_owned();
            lock(&session.replay.subscriptions).insert(params.uri.clone(), (upstream, text));
        }
        Method::ResourcesUnsubscribe => {
            lock(&session.replay.subscriptions).remove(&params.uri);
        }
        _ => {}
    }
    if matches!(method, Method::ResourcesSubscribe | Method::ResourcesUnsubscribe)
        && let Some(connection) =
            session.upstreams.get(upstream).connection().filter(|connection| connection.is_modern())
    {
        // A modern server has no subscribe: its listen stream changes.
        session.replay.relisten(&session.id, upstream, &connection);
        return session.link.respond(frame, warden_jsonrpc::result_response(frame.id().unwrap_or("null"), "{}"));
    }
    let token = progress_token(frame, || params.meta.map(RawValue::get));
    let server = session.upstreams.get(upstream);
    let call = Call { session: &session.id, server: server.name(), method, name: &params.uri, arguments: None };
    dispatch(session, frame, &hooks, call, Target { token, ..Target::upstream(upstream) }).await;
}

/// The upstream serving `uri`, waiting for upstreams still starting when
/// none is known yet.
async fn resource_owner(session: &SessionParts, uri: &str) -> Option<usize> {
    if let Some(owner) = session.surface.read_catalog().resource_owner(uri) {
        return Some(owner);
    }
    await_unloaded(session).await;
    // Looked up again even when there was nothing left to wait for: a load
    // that finished after the first look is what made it so.
    session.surface.read_catalog().resource_owner(uri)
}

/// Completion is routed by its reference: a prompt by name (renamed for
/// its upstream), a resource template by its owner.
pub(super) async fn complete(session: &SessionParts, frame: &Frame) {
    let params: CompleteParams = match frame.params().map(serde_json::from_str).transpose() {
        Ok(Some(params)) => params,
        Ok(None) => return session.link.fail(frame, ErrorCode::InvalidParams, "params with a ref are required"),
        Err(err) => return session.link.fail(frame, ErrorCode::InvalidParams, &format!("invalid params: {err}")),
    };
    let hooks = session.surface.hooks.load_full();
    let mut splice = Splice::new();
    let template = params.reference.uri.as_deref().filter(|_| params.reference.kind == "ref/resource");
    let (upstream, name) = match (params.reference.kind.as_str(), params.reference.name, &params.reference.uri) {
        ("ref/prompt", Some(raw), _) => {
            let Ok(exposed) = serde_json::from_str::<String>(raw.get()) else {
                return session.link.fail(frame, ErrorCode::InvalidParams, "ref.name must be a string");
            };
            let route = resolve(session, ItemKind::Prompt, &exposed).await.filter(|route| {
                hooks.view.shows(session.upstreams.get(route.upstream).name(), ItemKind::Prompt, &route.name)
            });
            let Some(Route { upstream, name }) = route else {
                return session.link.fail(frame, ErrorCode::InvalidParams, &format!("Unknown prompt: {exposed}"));
            };
            if *name != *exposed {
                splice.replace(frame.span_of(raw.get()), json_string(&name));
            }
            (upstream, name.to_string())
        }
        ("ref/resource", _, Some(uri)) => {
            let owner = session.surface.read_catalog().template_owner(uri);
            let owner = match owner {
                Some(owner) => Some(owner),
                None => resource_owner(session, uri).await,
            };
            let Some(upstream) =
                owner.filter(|owner| hooks.view.shows(session.upstreams.get(*owner).name(), ItemKind::Template, uri))
            else {
                return session.link.fail(frame, ErrorCode::ResourceNotFound, &format!("Resource not found: {uri}"));
            };
            (upstream, uri.clone())
        }
        (other, _, _) => {
            return session.link.fail(
                frame,
                ErrorCode::InvalidParams,
                &format!("unsupported completion ref type '{other}'"),
            );
        }
    };
    let token = progress_token(frame, || params.meta.map(RawValue::get));
    let server = session.upstreams.get(upstream);
    let judged = params.judged(template);
    let arguments = judged.as_deref();
    let call = Call { session: &session.id, server: server.name(), method: &Method::Complete, name: &name, arguments };
    dispatch(session, frame, &hooks, call, Target { splice, token, ..Target::upstream(upstream) }).await;
}

#[cfg(test)]
mod tests {
    use super::CompleteParams;

    /// What the stages judge of a completion: its values, and for a
    /// resource template the URI they make of it, also with a value the
    /// client filled in before.
    #[test]
    fn a_completion_is_judged_with_the_uri_its_values_make() {
        let params = r#"{"ref":{"type":"ref/resource","uri":"file:///{root}/{+path}"},
            "argument":{"name":"path","value":".ssh/id"},"context":{"arguments":{"root":"home/u"}}}"#;
        let params: CompleteParams = serde_json::from_str(params).unwrap();
        let judged: serde_json::Value =
            serde_json::from_str(&params.judged(Some("file:///{root}/{+path}")).unwrap()).unwrap();
        assert_eq!(judged["uri"], "file:///home/u/.ssh/id");
        assert_eq!(judged["argument"]["value"], ".ssh/id");
        assert_eq!(judged["context"]["arguments"]["root"], "home/u");
        // A value of another type beside them leaves the others in the URI.
        let mixed = r#"{"ref":{"type":"ref/resource","uri":"file:///{root}/{+path}"},
            "argument":{"name":"path","value":".ssh/"},"context":{"arguments":{"root":"home/u","n":1,"o":null}}}"#;
        let mixed: CompleteParams = serde_json::from_str(mixed).unwrap();
        let judged: serde_json::Value =
            serde_json::from_str(&mixed.judged(Some("file:///{root}/{+path}")).unwrap()).unwrap();
        assert_eq!(judged["uri"], "file:///home/u/.ssh/");
        let prompt: serde_json::Value = serde_json::from_str(&params.judged(None).unwrap()).unwrap();
        assert!(prompt.get("uri").is_none(), "a prompt has no URI");
        let bare: CompleteParams = serde_json::from_str(r#"{"ref":{"type":"ref/prompt","name":"p"}}"#).unwrap();
        assert_eq!(bare.judged(None), None);
    }
}
