//! A bare HTTP forwarder on hyper: every connection it accepts gets one
//! connection to the upstream, and every request on it is passed on as is
//! (method, path, headers, body; `Host` rewritten to the upstream's), its
//! answer streamed back. It is the least an HTTP hop can do, so a gateway
//! placed in front of another is measured against it: the floor of an added
//! hop on this machine, not a peer.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HOST, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

/// An answer streamed back from the upstream, or the forwarder's own error.
type Body = http_body_util::combinators::BoxBody<Bytes, hyper::Error>;

/// Serves on `addr`, forwarding to the `http://host:port` of `upstream`,
/// until the process is killed.
pub async fn serve(addr: SocketAddr, upstream: &str) -> anyhow::Result<()> {
    let uri: Uri = upstream.parse().with_context(|| format!("invalid upstream URL {upstream:?}"))?;
    let authority = uri.authority().context("the upstream URL has no host")?.as_str().to_owned();
    let host = HeaderValue::from_str(&authority)?;
    let listener = TcpListener::bind(addr).await?;
    println!("listening on http://{}{}", listener.local_addr()?, uri.path());
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let (authority, host) = (authority.clone(), host.clone());
        tokio::spawn(async move {
            let Ok(sender) = connect(&authority).await else { return };
            let sender = Arc::new(Mutex::new(sender));
            let service = service_fn(move |request| {
                let (sender, host) = (sender.clone(), host.clone());
                async move { Ok::<_, Infallible>(pass(&sender, host, request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}

/// Opens the connection to the upstream that one client connection's
/// requests go through.
async fn connect(authority: &str) -> anyhow::Result<SendRequest<Incoming>> {
    let tcp = TcpStream::connect(authority).await?;
    tcp.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// Passes one request on and its answer back; a broken upstream is a 502.
async fn pass(
    sender: &Mutex<SendRequest<Incoming>>,
    host: HeaderValue,
    mut request: Request<Incoming>,
) -> Response<Body> {
    request.headers_mut().insert(HOST, host);
    let mut sender = sender.lock().await;
    let answer = match sender.ready().await {
        Ok(()) => sender.send_request(request).await,
        Err(err) => Err(err),
    };
    match answer {
        Ok(response) => response.map(BodyExt::boxed),
        Err(err) => {
            let body = Full::new(Bytes::from(format!("upstream: {err}"))).map_err(|never| match never {}).boxed();
            let mut response = Response::new(body);
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            response
        }
    }
}
