//! The egress proxy over its Unix socket: CONNECT tunnels to allowed
//! hosts, refusals with 403 naming the host and how to allow it, reported.

use std::sync::{Arc, Mutex};

use indexmap::IndexMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};
use warden_sandbox::proxy::{Allowlist, Proxy};
use warden_sandbox::report::{Denial, Reporter, SandboxReport};

struct Collect(Mutex<Vec<Denial>>);

impl Reporter for Collect {
    fn denied(&self, denial: Denial) {
        self.0.lock().unwrap().push(denial);
    }

    // The proxy never starts servers: nothing to collect.
    fn unsandboxed(&self, _server: &str, _warning: &str) {}
}

async fn exchange(socket: &std::path::Path, request: &str) -> String {
    let mut stream = UnixStream::connect(socket).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn connect_tunnels_allowed_hosts_and_refuses_the_rest() {
    let reports = Arc::new(Collect(Mutex::new(Vec::new())));
    let report = SandboxReport::new(reports.clone());
    // The "remote" host: a local echo of one line.
    let remote = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = remote.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = remote.accept().await {
            let mut buffer = [0u8; 64];
            let read = stream.read(&mut buffer).await.unwrap_or(0);
            let _ = stream.write_all(&buffer[..read]).await;
        }
    });
    let hosts: IndexMap<String, String> = [("api.example.test", "127.0.0.1"), ("inner.example.test", "10.0.0.1")]
        .map(|(k, v)| (k.into(), v.into()))
        .into_iter()
        .collect();
    let allow = vec![format!("api.example.test:{port}"), "*.example.test".into(), format!("127.0.0.1:{port}")];
    let list = Allowlist::parse(&allow, &["blocked.example.test".into()], &hosts).unwrap();
    let socket = std::env::temp_dir().join(format!("warden-proxy-test-{}.sock", std::process::id()));
    let proxy = Proxy::start("github", list, &socket, report.clone()).unwrap();

    let mut stream = UnixStream::connect(&socket).await.unwrap();
    stream.write_all(format!("CONNECT api.example.test:{port} HTTP/1.1\r\n\r\nping").as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 128];
    let mut got = Vec::new();
    while !String::from_utf8_lossy(&got).ends_with("ping") {
        let read = stream.read(&mut answer).await.unwrap();
        assert!(read > 0, "tunnel closed: {}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&answer[..read]);
    }
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got));

    let refused = exchange(&socket, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(refused.starts_with("HTTP/1.1 403") && refused.contains("X-Proxy-Error: blocked-by-warden"), "{refused}");
    assert!(refused.contains("evil.test:443") && refused.contains("servers.github.sandbox.network.allow"), "{refused}");
    let denied = exchange(&socket, "CONNECT blocked.example.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(denied.contains("network.deny"), "{denied}");
    let private = exchange(&socket, "CONNECT inner.example.test:443 HTTP/1.1\r\n\r\n").await;
    assert!(private.starts_with("HTTP/1.1 403") && private.contains("10.0.0.1"), "{private}");
    let literal = exchange(&socket, "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n").await;
    assert!(literal.starts_with("HTTP/1.1 403"), "{literal}");
    let garbage = exchange(&socket, "HELLO\r\n\r\n").await;
    assert!(garbage.starts_with("HTTP/1.1 400"), "{garbage}");

    let hosts: Vec<String> =
        reports.0.lock().unwrap().iter().map(|d| format!("{} {}:{}", d.server, d.host, d.port)).collect();
    assert_eq!(
        hosts,
        [
            "github evil.test:443",
            "github blocked.example.test:443",
            "github inner.example.test:443",
            "github 10.0.0.1:443"
        ]
    );
    drop(proxy);
    assert!(!socket.exists());
}
