//! Reading a whole answer body, never holding more than the size limit.

use futures_util::StreamExt;
use reqwest::Response;
use serde_json::value::RawValue;

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// It is longer than the limit; at least this many bytes.
    TooLarge(usize),
    /// Reading it failed.
    Failed(String),
}

/// Reads a body of at most `limit` bytes as text (invalid UTF-8 is replaced,
/// and then fails to parse as JSON-RPC).
pub(crate) async fn read_limited(response: Response, limit: usize) -> Result<String, BodyError> {
    if let Some(length) = response.content_length().and_then(|length| usize::try_from(length).ok())
        && length > limit
    {
        return Err(BodyError::TooLarge(length));
    }
    let mut chunks = response.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|err| BodyError::Failed(super::cause(&err)))?;
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge(body.len() + chunk.len()));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(match String::from_utf8(body) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    })
}

/// The first `max` bytes of a body, for quoting in an error (never fails).
pub(crate) async fn read_start(response: Response, max: usize) -> String {
    let mut chunks = response.bytes_stream();
    let mut body = Vec::new();
    while body.len() < max
        && let Some(Ok(chunk)) = chunks.next().await
    {
        body.extend_from_slice(&chunk);
    }
    body.truncate(max);
    String::from_utf8_lossy(&body).into_owned()
}

/// The messages in a JSON body: one message, each element of a batch (an
/// array), or each of several messages one after the other (some servers
/// stream newline-delimited messages under `application/json`), each as its
/// own text. An empty body holds none.
pub(crate) fn messages(body: String) -> Vec<String> {
    let trimmed = body.trim_start();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if trimmed.starts_with('[')
        && let Ok(batch) = serde_json::from_str::<Vec<&RawValue>>(trimmed)
    {
        return batch.iter().map(|message| message.get().to_owned()).collect();
    }
    let several: Result<Vec<&RawValue>, _> = serde_json::Deserializer::from_str(trimmed).into_iter().collect();
    match several {
        Ok(several) if several.len() > 1 => several.iter().map(|message| message.get().to_owned()).collect(),
        _ => vec![body],
    }
}

#[cfg(test)]
mod tests {
    use super::messages;

    #[test]
    fn splits_batches_and_keeps_single_messages_whole() {
        assert_eq!(messages(" {\"id\":1} ".into()), [" {\"id\":1} "]);
        assert_eq!(messages("[{\"id\":1}, {\"method\":\"x\"}]".into()), ["{\"id\":1}", "{\"method\":\"x\"}"]);
        assert!(messages("  ".into()).is_empty());
        // Not a valid batch: passed on whole, to be refused as it is.
        assert_eq!(messages("[1,".into()), ["[1,"]);
        assert_eq!(messages("{\"method\":\"n\"}\n{\"id\":1}".into()), ["{\"method\":\"n\"}", "{\"id\":1}"]);
        assert_eq!(messages("{\"id\":1} x".into()), ["{\"id\":1} x"]);
    }
}
