//! Serving the metrics: at `/metrics` on the HTTP front, and on
//! `metrics.listen` when set.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use warden_config::Config;
use warden_gateway::Session;
use warden_gateway::front::{HttpFront, MetricsEndpoint, serve_metrics};
use warden_metrics::Metrics;

/// The `/metrics` endpoint for `metrics` (none when metrics are off), also
/// served on `metrics.listen` when the config sets it. `http` says whether
/// the HTTP front will serve it too; without it and without `listen`, the
/// metrics would be counted for nobody, which is said once.
pub async fn start(
    config: &Config,
    metrics: Option<&Arc<Metrics>>,
    http: bool,
) -> anyhow::Result<Option<Arc<MetricsEndpoint>>> {
    let (Some(settings), Some(metrics)) = (&config.metrics, metrics) else { return Ok(None) };
    let source = metrics.clone();
    let endpoint = Arc::new(MetricsEndpoint::new(
        Arc::new(move || source.render()),
        warden_metrics::CONTENT_TYPE,
        settings.required_token().map(str::to_owned),
    ));
    match &settings.listen {
        Some(listen) => {
            // A bare port means loopback, as for --http.
            let wanted: SocketAddr = match listen.parse::<u16>() {
                Ok(port) => SocketAddr::from(([127, 0, 0, 1], port)),
                Err(_) => {
                    listen.parse().with_context(|| format!("metrics.listen {listen:?}: expected PORT or IP:PORT"))?
                }
            };
            let listener = tokio::net::TcpListener::bind(wanted)
                .await
                .with_context(|| format!("cannot listen for metrics on {wanted}"))?;
            let bound = listener.local_addr()?;
            let served = endpoint.clone();
            tokio::spawn(async move {
                if let Err(err) = serve_metrics(listener, served).await {
                    tracing::error!("the metrics listener failed: {err}");
                }
            });
            // Tests and scripts read the address from this line.
            eprintln!("warden: metrics at http://{bound}/metrics");
        }
        None if !http => {
            tracing::warn!("metrics are on but served nowhere: set metrics.listen (there is no HTTP front)")
        }
        None => {}
    }
    Ok(Some(endpoint))
}

/// Counts `session`'s upstreams by state at each scrape (stdio: the one
/// session).
pub fn count_upstreams_of(metrics: Option<&Arc<Metrics>>, session: &Session) {
    if let Some(metrics) = metrics {
        let session = session.clone();
        metrics.count_upstreams_with(Box::new(move || {
            session.upstream_states().into_iter().map(|(name, state, _)| (name, state)).collect()
        }));
    }
}

/// Counts the upstreams of every session of `front` by state, and its open
/// connections, at each scrape. (The metrics then hold the front, which holds the metrics
/// through its hooks: both live as long as the process.)
pub fn count_upstreams_of_front(metrics: Option<&Arc<Metrics>>, front: &HttpFront) {
    if let Some(metrics) = metrics {
        let counted = front.clone();
        metrics.count_upstreams_with(Box::new(move || counted.upstream_states()));
        let counted = front.clone();
        metrics.count_connections_with(Box::new(move || counted.connection_count()));
    }
}
