//! A real headless Chromium, driven over the DevTools protocol: load a
//! page, read it, click on it, take screenshots.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use super::{PATIENCE, scratch_dir};

/// Where screenshots go: `docs/` with WARDEN_SCREENSHOTS=docs, else `dir`.
pub fn screenshot_path(dir: &Path, name: &str) -> PathBuf {
    match std::env::var("WARDEN_SCREENSHOTS").as_deref() {
        Ok("docs") => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs").join(name),
        _ => dir.join(name),
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One Chromium with one page.
pub struct Browser {
    child: Child,
    socket: Socket,
    session: String,
    next_id: u64,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// Starts Chromium and opens a blank page of `width`×`height`.
    pub async fn start(width: u32, height: u32) -> Browser {
        let profile = scratch_dir("chromium");
        let mut child = Command::new("/usr/bin/chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start /usr/bin/chromium");
        let stderr = child.stderr.take().expect("stderr");
        let (found, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = found.send(line[at..].trim().to_owned());
                }
            }
        });
        let url = address.recv_timeout(PATIENCE).expect("chromium printed no DevTools address");
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str()).await.expect("connect to DevTools");
        let mut browser = Browser { child, socket, session: String::new(), next_id: 1 };
        let target = browser.command_on(None, "Target.createTarget", json!({"url": "about:blank"})).await;
        let target = target["targetId"].as_str().expect("a target id").to_owned();
        let attached =
            browser.command_on(None, "Target.attachToTarget", json!({"targetId": target, "flatten": true})).await;
        browser.session = attached["sessionId"].as_str().expect("a session id").to_owned();
        browser
            .command(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await;
        browser.command("Page.enable", json!({})).await;
        browser
    }

    /// Sends a command to the page and returns its result.
    pub async fn command(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.command_on(Some(&session), method, params).await
    }

    async fn command_on(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket.send(Message::Text(message.to_string().into())).await.expect("send to DevTools");
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let next = tokio::time::timeout(left, self.socket.next()).await;
            let Ok(Some(Ok(Message::Text(text)))) = next else {
                assert!(Instant::now() < deadline, "no answer to {method}");
                continue;
            };
            let answer: Value = serde_json::from_str(&text).expect("DevTools speaks JSON");
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{method} failed: {answer}");
                return answer["result"].clone();
            }
        }
    }

    /// Goes to `url`.
    pub async fn navigate(&mut self, url: &str) {
        self.command("Page.navigate", json!({"url": url})).await;
    }

    /// Evaluates `expression` in the page (awaiting promises) and returns its value.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .command("Runtime.evaluate", json!({"expression": expression, "awaitPromise": true, "returnByValue": true}))
            .await;
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    pub async fn wait_until(&mut self, expression: &str) {
        let deadline = Instant::now() + PATIENCE;
        while self.eval(&format!("!!({expression})")).await != json!(true) {
            if Instant::now() >= deadline {
                // Say what the page showed instead, for whoever reads the failure.
                let shown = self
                    .eval("location.href + ' | ' + (document.body ? document.body.innerText.slice(0, 400) : '')")
                    .await;
                panic!("the page never satisfied {expression}; it showed: {shown}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Clicks the middle of the first element matching `selector`, with
    /// real mouse events (scrolled into view first, if it is not).
    pub async fn click(&mut self, selector: &str) {
        let rect = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({selector:?}); e.scrollIntoView({{block: 'nearest'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
            ))
            .await;
        let (x, y) = (rect[0].as_f64().expect("x"), rect[1].as_f64().expect("y"));
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.command(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Types `text` into the focused element.
    pub async fn type_text(&mut self, text: &str) {
        self.command("Input.insertText", json!({"text": text})).await;
    }

    /// Saves a PNG of the viewport.
    pub async fn screenshot(&mut self, path: &Path) {
        let shot = self.command("Page.captureScreenshot", json!({"format": "png"})).await;
        let data = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("image data"))
            .expect("base64 image");
        std::fs::write(path, data).expect("write screenshot");
    }
}
