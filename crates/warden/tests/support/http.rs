//! A second warden serving MCP over HTTP (`warden serve --http`), to be the
//! remote upstream of the warden under test.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};

use super::{PATIENCE, scratch_dir, warden_bin};

/// A running `warden serve --http`.
pub struct HttpWarden {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    stderr: Arc<Mutex<String>>,
}

impl HttpWarden {
    /// Serves `config` (YAML) on 127.0.0.1:`port` (0: any free port) and
    /// waits until it listens.
    pub fn start(config: &str, port: u16) -> HttpWarden {
        let dir = scratch_dir("http");
        let path = dir.join("warden.yaml");
        std::fs::write(&path, config).expect("write config");
        let address = format!("127.0.0.1:{port}");
        let mut child = Command::new(warden_bin())
            .args(["serve", "--config", path.to_str().expect("utf-8 path"), "--http", &address])
            .env("WARDEN_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start warden --http");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        let (bound, port_rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if let Some(port) = listening_port(&line) {
                    let _ = bound.send(port);
                }
                let mut sink = sink.lock().unwrap();
                sink.push_str(&line);
                sink.push('\n');
            }
        });
        let port = match port_rx.recv_timeout(PATIENCE) {
            Ok(port) => port,
            Err(_) => panic!("warden --http never said where it listens:\n{}", log.lock().unwrap()),
        };
        HttpWarden { child, port, stderr: log }
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Kills it at once (its upstreams die with it).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Everything it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for HttpWarden {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The port in `listening on http://127.0.0.1:<port>/mcp`.
fn listening_port(line: &str) -> Option<u16> {
    let rest = line.split("listening on http://").nth(1)?;
    let authority = rest.split('/').next()?;
    authority.rsplit(':').next()?.parse().ok()
}
