//! Other Wardens on the same config: one page for all of them. A Warden
//! started while another held the control socket listens beside it
//! (`approvals-<pid>.sock`); the page's owner lists their pending calls
//! with its own and passes decisions on them to them over their sockets.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::channels::socket::{Request, sibling_sockets};

/// How long a peer may take to answer.
const PATIENCE: Duration = Duration::from_secs(2);

/// Where the other Wardens are.
#[derive(Debug, Clone)]
pub struct Peers {
    /// The configured socket path (the first Warden's).
    pub primary: PathBuf,
    /// This Warden's own socket, not a peer.
    pub own: PathBuf,
}

impl Peers {
    /// The peers' sockets: the primary path (unless it is this Warden's)
    /// and the ones beside it.
    fn sockets(&self) -> Vec<PathBuf> {
        std::iter::once(self.primary.clone())
            .chain(sibling_sockets(&self.primary))
            .filter(|path| *path != self.own)
            .collect()
    }

    /// Each live peer's `list` answer.
    pub async fn lists(&self) -> Vec<(PathBuf, Value)> {
        let mut answers = Vec::new();
        for path in self.sockets() {
            if let Ok(answer) = ask(&path, &Request::List).await {
                answers.push((path, answer));
            }
        }
        answers
    }
}

/// Sends `request` to the Warden at `path` and returns its answer.
pub async fn ask(path: &Path, request: &Request) -> Result<Value, String> {
    let exchange = async {
        let mut stream = UnixStream::connect(path).await.map_err(|err| err.to_string())?;
        let mut line = serde_json::to_string(request).map_err(|err| err.to_string())?;
        line.push('\n');
        stream.write_all(line.as_bytes()).await.map_err(|err| err.to_string())?;
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).await.map_err(|err| err.to_string())?;
        let answer: Value = serde_json::from_str(&answer).map_err(|err| err.to_string())?;
        if answer["ok"] == true {
            Ok(answer)
        } else {
            Err(answer["error"].as_str().unwrap_or("the request failed").to_owned())
        }
    };
    tokio::time::timeout(PATIENCE, exchange).await.unwrap_or_else(|_| Err("no answer in time".into()))
}
