//! Where requests go, and the headers that carry the key.

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use crate::error::Error;
use crate::settings::{Api, ApiKey};

/// The Anthropic API version the requests are written for.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `{base}/v1/{route}`, where a base that already ends in `/v1` does not get
/// a second one.
pub(crate) fn endpoint(base: &str, api: Api) -> Result<Url, Error> {
    let invalid = |reason: &str| Error::BaseUrl {
        url: if base.contains('@') { "(not shown: it carries credentials)".into() } else { format!("{base:?}") },
        reason: reason.to_owned(),
    };
    let mut url = Url::parse(base.trim()).map_err(|err| invalid(&err.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("it must not carry credentials; the key is configured on its own"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it must not have a query or a fragment"));
    }
    let path = url.path().trim_end_matches('/');
    let prefix = path.strip_suffix("/v1").unwrap_or(path).to_owned();
    url.set_path(&format!("{prefix}/v1/{}", api.route()));
    Ok(url)
}

/// The API's headers: the key (marked sensitive, so no log shows it) and,
/// for Anthropic, the API version.
pub(crate) fn headers(api: Api, key: &ApiKey) -> Result<HeaderMap, Error> {
    let secret = |text: String| {
        let mut value = HeaderValue::from_str(&text).map_err(|_| Error::KeyNotHeaderSafe)?;
        value.set_sensitive(true);
        Ok::<_, Error>(value)
    };
    let mut headers = HeaderMap::new();
    let key = key.expose();
    match api {
        Api::Anthropic => {
            headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(ANTHROPIC_VERSION));
            if !key.is_empty() {
                headers.insert(HeaderName::from_static("x-api-key"), secret(key.to_owned())?);
            }
        }
        Api::OpenAi => {
            if !key.is_empty() {
                headers.insert(AUTHORIZATION, secret(format!("Bearer {key}"))?);
            }
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use reqwest::header::AUTHORIZATION;

    use super::*;

    #[test]
    fn endpoints_take_v1_once() {
        let at = |base: &str, api| endpoint(base, api).map(|url| url.to_string());
        assert_eq!(at("https://api.anthropic.com", Api::Anthropic).unwrap(), "https://api.anthropic.com/v1/messages");
        assert_eq!(at("https://api.anthropic.com/", Api::Anthropic).unwrap(), "https://api.anthropic.com/v1/messages");
        assert_eq!(at("https://api.openai.com/v1", Api::OpenAi).unwrap(), "https://api.openai.com/v1/chat/completions");
        assert_eq!(
            at("https://api.openai.com/v1/", Api::OpenAi).unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(at("http://127.0.0.1:4000", Api::OpenAi).unwrap(), "http://127.0.0.1:4000/v1/chat/completions");
        assert_eq!(at("http://proxy/llm", Api::Anthropic).unwrap(), "http://proxy/llm/v1/messages");

        for bad in ["ftp://host", "api.openai.com", "https://u:p@host", "https://host/?k=1", ""] {
            assert!(at(bad, Api::OpenAi).is_err(), "{bad}");
        }
        let shown = endpoint("https://sk-secret@host", Api::OpenAi).unwrap_err().to_string();
        assert!(!shown.contains("sk-secret"), "{shown}");
    }

    #[test]
    fn headers_carry_the_key_marked_sensitive() {
        let anthropic = headers(Api::Anthropic, &ApiKey::new("sk-ant")).unwrap();
        assert_eq!(anthropic["x-api-key"], "sk-ant");
        assert!(anthropic["x-api-key"].is_sensitive());
        assert_eq!(anthropic["anthropic-version"], ANTHROPIC_VERSION);
        let openai = headers(Api::OpenAi, &ApiKey::new("sk-oai")).unwrap();
        assert_eq!(openai[AUTHORIZATION], "Bearer sk-oai");
        assert!(openai[AUTHORIZATION].is_sensitive());
        assert!(headers(Api::OpenAi, &ApiKey::new("")).unwrap().is_empty());

        let err = headers(Api::OpenAi, &ApiKey::new("sk-line\nbreak")).unwrap_err().to_string();
        assert!(!err.contains("sk-line"), "{err}");
    }
}
