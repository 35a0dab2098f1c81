//! One POST to the model's API, retried once on a transport error, 429 or
//! 5xx. The caller bounds the whole of it with the deadline.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url};
use serde_json::Value;

use crate::prompt::{cap, strip_controls};

/// The largest answer read; a decision is a few hundred bytes.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The pause before the one retry.
const RETRY_PAUSE: Duration = Duration::from_millis(250);

/// What went wrong with one attempt, and whether another may help.
enum Failure {
    Retryable(String),
    Final(String),
}

/// POSTs `body` to `url` with `headers` and returns the answer's body, or
/// why there is none. Reasons never contain the headers' values.
pub(crate) async fn post(client: &Client, url: &Url, headers: &HeaderMap, body: Vec<u8>) -> Result<Vec<u8>, String> {
    match attempt(client, url, headers, body.clone()).await {
        Ok(answer) => Ok(answer),
        Err(Failure::Final(reason)) => Err(reason),
        Err(Failure::Retryable(first)) => {
            tracing::debug!(reason = %first, "auto-approver: retrying the model request once");
            tokio::time::sleep(RETRY_PAUSE).await;
            match attempt(client, url, headers, body).await {
                Ok(answer) => Ok(answer),
                Err(Failure::Final(second) | Failure::Retryable(second)) => {
                    Err(format!("{first}; the retry: {second}"))
                }
            }
        }
    }
}

async fn attempt(client: &Client, url: &Url, headers: &HeaderMap, body: Vec<u8>) -> Result<Vec<u8>, Failure> {
    let response = client
        .post(url.clone())
        .headers(headers.clone())
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .body(body)
        .send()
        .await
        .map_err(|err| Failure::Retryable(describe(&err, url)))?;
    let status = response.status();
    if status.is_success() {
        return read(response, url).await;
    }
    let kind = match read(response, url).await {
        Ok(answer) => error_kind(&answer),
        Err(_) => String::new(),
    };
    let reason = format!("POST {url} answered HTTP {status}{kind}");
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        Err(Failure::Retryable(reason))
    } else {
        Err(Failure::Final(reason))
    }
}

/// The body of `response`, up to [`MAX_ANSWER_BYTES`].
async fn read(mut response: Response, url: &Url) -> Result<Vec<u8>, Failure> {
    let mut answer = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| Failure::Retryable(describe(&err, url)))? {
        if answer.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Failure::Final(format!("the answer from {url} is larger than {MAX_ANSWER_BYTES} bytes")));
        }
        answer.extend_from_slice(&chunk);
    }
    Ok(answer)
}

/// The error's type and code from an API error body (`{"error": {"type":
/// "authentication_error"}}`), never its message: some APIs quote part of
/// the key in it.
fn error_kind(answer: &[u8]) -> String {
    let Ok(answer) = serde_json::from_slice::<Value>(answer) else {
        return String::new();
    };
    let words: Vec<String> = ["type", "code"]
        .iter()
        .filter_map(|field| answer.get("error")?.get(field)?.as_str())
        .filter(|word| word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|word| cap(&strip_controls(word, false), 60))
        .collect();
    if words.is_empty() { String::new() } else { format!(" ({})", words.join(", ")) }
}

/// A transport error in words, naming the endpoint.
fn describe(err: &reqwest::Error, url: &Url) -> String {
    let mut innermost: &dyn std::error::Error = err;
    while let Some(source) = innermost.source() {
        innermost = source;
    }
    let cause = if err.is_timeout() { "timed out".to_owned() } else { innermost.to_string() };
    if err.is_connect() { format!("cannot connect to {url}: {cause}") } else { format!("POST {url} failed: {cause}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_are_quoted_without_messages() {
        let anthropic =
            br#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-1"}}"#;
        assert_eq!(error_kind(anthropic), " (authentication_error)");
        let openai = br#"{"error":{"message":"Incorrect API key provided: sk-ab***yz","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        assert_eq!(error_kind(openai), " (invalid_request_error, invalid_api_key)");
        assert_eq!(error_kind(br#"{"error":{"type":"sk-1 with spaces"}}"#), "");
        assert_eq!(error_kind(b"<html>502</html>"), "");
    }
}
