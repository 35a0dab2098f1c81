//! Reading what a running Warden's metrics listener serves.

use super::Client;

/// The `host:port` of the metrics listener `client`'s Warden announced
/// (`metrics.listen`), once it has.
pub fn listener(client: &mut Client) -> String {
    client.wait_stderr("warden: metrics at http://");
    let stderr = client.stderr();
    let addr = stderr.split("warden: metrics at http://").nth(1).and_then(|rest| rest.split("/metrics").next());
    addr.expect("the metrics listener's address").to_owned()
}

/// The value of the sample whose name and labels are `series` exactly (as
/// rendered, labels in Warden's order) in the scrape `text`.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.split(' ').next()?.parse().ok())
}
