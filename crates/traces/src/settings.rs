//! Where traces go and how many: from the config's `tracing:` section and
//! OpenTelemetry's standard variables.
//!
//! The config wins where it says something; the variables fill in the
//! rest: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (with `/v1/traces` appended),
//! `OTEL_EXPORTER_OTLP_(TRACES_)HEADERS` (`k=v,k2=v2`, percent-encoded
//! values), `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`,
//! `OTEL_SERVICE_NAME`, `OTEL_BSP_SCHEDULE_DELAY` (ms); tracing is off with
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Only the
//! http/protobuf protocol is spoken.

use std::time::Duration;

use percent_encoding::percent_decode_str;

use crate::export::Destination;

/// The config's `tracing:` section, as the tracer reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Configured {
    /// `tracing.otlp`: the collector's base URL (`/v1/traces` is appended
    /// when it has no path) or the full URL of its traces endpoint.
    pub otlp: Option<String>,
    /// `tracing.headers`.
    pub headers: Vec<(String, String)>,
    /// `tracing.sampleRatio`.
    pub sample_ratio: Option<f64>,
    /// `tracing.serviceName`.
    pub service_name: Option<String>,
}

/// What the tracer needs: where, and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSettings {
    /// Where spans go.
    pub destination: Destination,
    /// The share of new traces recorded (a client's sampled flag decides
    /// for its own).
    pub ratio: f64,
}

impl TraceSettings {
    /// The settings from `configured` and the variables `env` reads, or
    /// `None` when tracing is off (no endpoint, or disabled); an error for
    /// a value that cannot be used.
    pub fn resolve(
        configured: &Configured,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<TraceSettings>, String> {
        let set = |name: &str| env(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true"))
            || set("OTEL_TRACES_EXPORTER").is_some_and(|value| value.eq_ignore_ascii_case("none"))
        {
            return Ok(None);
        }
        let url =
            match (&configured.otlp, set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), set("OTEL_EXPORTER_OTLP_ENDPOINT")) {
                (Some(url), _, _) => traces_url(url),
                (None, Some(url), _) => url,
                (None, None, Some(base)) => format!("{}/v1/traces", base.trim_end_matches('/')),
                (None, None, None) => return Ok(None),
            };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("the OTLP endpoint {url:?} is not an http:// or https:// URL"));
        }
        let protocol = set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(protocol) = protocol.filter(|protocol| protocol != "http/protobuf") {
            return Err(format!("OTLP protocol {protocol:?}: Warden exports traces as http/protobuf only"));
        }
        let mut headers = configured.headers.clone();
        for name in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            for (key, value) in set(name).as_deref().map(parse_headers).transpose()?.unwrap_or_default() {
                if !headers.iter().any(|(known, _)| known.eq_ignore_ascii_case(&key)) {
                    headers.push((key, value));
                }
            }
        }
        let ratio = match configured.sample_ratio {
            Some(ratio) => ratio,
            None => sampler_ratio(set("OTEL_TRACES_SAMPLER").as_deref(), set("OTEL_TRACES_SAMPLER_ARG").as_deref())?,
        };
        if !(0.0..=1.0).contains(&ratio) {
            return Err(format!("the sample ratio {ratio} is not between 0 and 1"));
        }
        let every = match set("OTEL_BSP_SCHEDULE_DELAY") {
            Some(ms) => Duration::from_millis(
                ms.parse().map_err(|_| format!("OTEL_BSP_SCHEDULE_DELAY {ms:?} is not a number of milliseconds"))?,
            ),
            // Sooner than OpenTelemetry's 5 s: a short `wrap` loses less at exit.
            None => Duration::from_secs(1),
        };
        let service =
            configured.service_name.clone().or_else(|| set("OTEL_SERVICE_NAME")).unwrap_or_else(|| "warden".into());
        Ok(Some(TraceSettings { destination: Destination { url, headers, service, every }, ratio }))
    }
}

/// A configured OTLP URL: a base (no path) gets `/v1/traces`.
fn traces_url(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    match after_scheme.find('/') {
        Some(at) if !after_scheme[at..].trim_end_matches('/').is_empty() => url.to_owned(),
        _ => format!("{}/v1/traces", url.trim_end_matches('/')),
    }
}

/// `k=v,k2=v2`, values percent-decoded.
fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| format!("OTLP header {pair:?} is not key=value"))?;
            Ok((key.trim().to_owned(), percent_decode_str(value.trim()).decode_utf8_lossy().into_owned()))
        })
        .collect()
}

/// The ratio `OTEL_TRACES_SAMPLER` names. Warden always follows a client's
/// sampled flag (its sampler is parent-based), so `traceidratio` reads as
/// `parentbased_traceidratio`, and so on.
fn sampler_ratio(sampler: Option<&str>, argument: Option<&str>) -> Result<f64, String> {
    let ratio = || match argument {
        Some(text) => text.parse::<f64>().map_err(|_| format!("OTEL_TRACES_SAMPLER_ARG {text:?} is not a number")),
        None => Ok(1.0),
    };
    match sampler.map(str::to_ascii_lowercase).as_deref() {
        None | Some("always_on" | "parentbased_always_on") => Ok(1.0),
        Some("always_off" | "parentbased_always_off") => Ok(0.0),
        Some("traceidratio" | "parentbased_traceidratio") => ratio(),
        Some(other) => Err(format!("OTEL_TRACES_SAMPLER {other:?} is not a sampler Warden knows")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn off_without_an_endpoint_or_when_disabled() {
        assert_eq!(TraceSettings::resolve(&Configured::default(), &env(&[])), Ok(None));
        let vars = &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(TraceSettings::resolve(&Configured::default(), &env(vars)), Ok(None));
    }

    #[test]
    fn the_variables_fill_in_what_the_config_leaves() {
        let vars = &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b,x=1"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_SERVICE_NAME", "gw"),
        ];
        let settings = TraceSettings::resolve(&Configured::default(), &env(vars)).unwrap().unwrap();
        assert_eq!(settings.destination.url, "http://collector:4318/v1/traces");
        assert_eq!(settings.destination.headers, vec![("api-key".into(), "a b".into()), ("x".into(), "1".into())]);
        assert_eq!((settings.ratio, settings.destination.service.as_str()), (0.25, "gw"));
        let configured = Configured {
            otlp: Some("https://traces.example/custom/path".into()),
            headers: vec![("x".into(), "mine".into())],
            sample_ratio: Some(1.0),
            service_name: None,
        };
        let settings = TraceSettings::resolve(&configured, &env(vars)).unwrap().unwrap();
        assert_eq!(settings.destination.url, "https://traces.example/custom/path");
        assert_eq!(settings.destination.headers, vec![("x".into(), "mine".into()), ("api-key".into(), "a b".into())]);
        assert_eq!(settings.ratio, 1.0);
    }

    #[test]
    fn unusable_values_are_errors() {
        let bad: [&'static [(&'static str, &'static str)]; 4] = [
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_TRACES_SAMPLER", "jaeger_remote")],
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                ("OTEL_TRACES_SAMPLER_ARG", "x"),
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ],
        ];
        for vars in bad {
            assert!(TraceSettings::resolve(&Configured::default(), &env(vars)).is_err(), "{vars:?}");
        }
    }

    #[test]
    fn a_base_url_gets_the_traces_path() {
        assert_eq!(traces_url("http://c:4318"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
    }
}
