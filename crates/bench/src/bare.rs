//! A bare Streamable HTTP endpoint on hyper: every JSON-RPC request gets an
//! empty result at once (`initialize` also a session id), notifications get
//! 202. It does the least an MCP endpoint can do, so a gateway's HTTP front
//! is measured against it with the same client: the floor, not a peer.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::net::TcpListener;

/// Serves on `addr` until the process is killed.
pub async fn serve(addr: SocketAddr) -> anyhow::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        tokio::spawn(async move {
            let service = service_fn(|request| async move { Ok::<_, Infallible>(answer(request).await) });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}

async fn answer(request: Request<Incoming>) -> Response<Full<Bytes>> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<&'a str>,
    }
    let body = request.into_body().collect().await.map(|body| body.to_bytes()).unwrap_or_default();
    let Ok(Envelope { id: Some(id), method }) = serde_json::from_slice::<Envelope<'_>>(&body) else {
        let mut accepted = Response::new(Full::new(Bytes::new()));
        *accepted.status_mut() = StatusCode::ACCEPTED;
        return accepted;
    };
    let result = match method {
        Some("initialize") => {
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bare","version":"1"}}"#
        }
        _ => "{}",
    };
    let text = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, id.get());
    let mut response = Response::new(Full::new(Bytes::from(text)));
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if method == Some("initialize") {
        response.headers_mut().insert("mcp-session-id", HeaderValue::from_static("bare"));
    }
    response
}
