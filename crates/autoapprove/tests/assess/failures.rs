//! HTTP errors, retries, timeouts and the concurrency cap: every failure is
//! an escalation that says why, and none shows the key.

use std::time::{Duration, Instant};

use serde_json::json;
use warden_autoapprove::{ApiKey, AutoApprover, Decision, Settings};

use crate::fake_model::{FakeModel, Reply};
use crate::{APIS, KEY, approver, assess, identifiers, naming_intent, settings};

/// An API error body that quotes the key, as some APIs half do.
fn echoing_error(kind: &str) -> serde_json::Value {
    json!({ "type": "error", "error": { "type": kind, "message": format!("invalid key {KEY}") } })
}

#[tokio::test]
async fn http_errors_escalate_and_only_429_and_5xx_are_retried_once() {
    for api in APIS {
        for (status, kind, requests) in [
            (401, "authentication_error", 1),
            (400, "invalid_request_error", 1),
            (429, "rate_limit_error", 2),
            (500, "api_error", 2),
        ] {
            let fake = FakeModel::start([
                Reply::status(status, echoing_error(kind)),
                Reply::status(status, echoing_error(kind)),
            ])
            .await;
            let assessment = assess(&approver(api, &fake.base_url), &identifiers(), Some(&naming_intent())).await;

            assert_eq!(assessment.decision, Decision::Escalate, "{api:?} {status}");
            assert!(assessment.reasoning.contains(&format!("answered HTTP {status}")), "{assessment:?}");
            assert!(assessment.reasoning.contains(kind), "{assessment:?}");
            assert!(!assessment.reasoning.contains(KEY), "{assessment:?}");
            assert!(!format!("{assessment:?}").contains(KEY));
            assert_eq!(fake.seen().len(), requests, "{api:?} {status}");
        }
    }
}

#[tokio::test]
async fn a_retry_after_a_5xx_can_still_approve() {
    for api in APIS {
        let fake = FakeModel::start([
            Reply::status(503, json!({ "error": { "type": "overloaded_error" } })),
            Reply::decision(api, "approve", "Asked for."),
        ])
        .await;
        let assessment = assess(&approver(api, &fake.base_url), &identifiers(), Some(&naming_intent())).await;

        assert_eq!(assessment.decision, Decision::Approve, "{api:?}: {assessment:?}");
        assert_eq!(fake.seen().len(), 2);
        assert_eq!(fake.seen()[0].raw, fake.seen()[1].raw, "the retry sends the same body");
    }
}

#[tokio::test]
async fn a_model_slower_than_the_deadline_is_escalated_at_the_deadline() {
    for api in APIS {
        for (case, reply) in [
            ("slow answer", Reply::decision(api, "approve", "late").after(Duration::from_secs(120))),
            ("stalled body", Reply::decision(api, "approve", "late").stalled()),
        ] {
            let fake = FakeModel::start([reply]).await;
            let mut settings = settings(api, &fake.base_url);
            settings.deadline = Duration::from_secs(1);
            let approver = AutoApprover::new(settings).unwrap();

            let started = Instant::now();
            let assessment = assess(&approver, &identifiers(), Some(&naming_intent())).await;

            assert_eq!(assessment.decision, Decision::Escalate, "{api:?} {case}");
            assert_eq!(assessment.reasoning, "the model did not answer within 1s", "{case}");
            // It returned instead of waiting for the model: far less than the 120 s delay.
            assert!(started.elapsed() < Duration::from_secs(60), "{case}");
            assert_eq!(fake.seen().len(), 1);
        }
    }
}

#[tokio::test]
async fn an_unreachable_model_is_escalated() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    for api in APIS {
        let assessment = assess(&approver(api, &base_url), &identifiers(), Some(&naming_intent())).await;

        assert_eq!(assessment.decision, Decision::Escalate, "{api:?}");
        assert!(assessment.reasoning.starts_with("cannot connect to http://127.0.0.1:"), "{assessment:?}");
        assert!(assessment.reasoning.contains("; the retry: cannot connect"), "{assessment:?}");
        assert!(assessment.requested);
    }
}

#[tokio::test]
async fn no_more_requests_than_the_cap_are_in_flight() {
    for api in APIS {
        let replies = (0..3).map(|_| Reply::decision(api, "approve", "Asked for.").after(Duration::from_millis(300)));
        let fake = FakeModel::start(replies).await;
        let mut settings = settings(api, &fake.base_url);
        settings.max_concurrent = 1;
        let approver = AutoApprover::new(settings).unwrap();
        let (identifiers, intent) = (identifiers(), naming_intent());

        let assessments =
            futures_util::future::join_all((0..3).map(|_| assess(&approver, &identifiers, Some(&intent)))).await;

        assert!(assessments.iter().all(|assessment| assessment.decision == Decision::Approve), "{assessments:?}");
        assert_eq!(fake.seen().len(), 3);
        assert_eq!(fake.most_in_flight(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn waiting_for_a_slot_counts_against_the_deadline() {
    let api = warden_autoapprove::Api::Anthropic;
    let fake = FakeModel::start([Reply::decision(api, "approve", "late").after(Duration::from_secs(120))]).await;
    let mut settings = settings(api, &fake.base_url);
    settings.max_concurrent = 1;
    settings.deadline = Duration::from_secs(1);
    let approver = AutoApprover::new(settings).unwrap();
    let (identifiers, intent) = (identifiers(), naming_intent());

    // The first assessment takes the only slot and is then left unpolled, so
    // it keeps the slot however long the second one waits.
    let first = assess(&approver, &identifiers, Some(&intent));
    tokio::pin!(first);
    while fake.seen().is_empty() {
        tokio::select! {
            done = &mut first => panic!("the first assessment ended early: {done:?}"),
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
    let second = assess(&approver, &identifiers, Some(&intent)).await;

    assert_eq!(second.decision, Decision::Escalate);
    assert_eq!(second.reasoning, "no free slot to ask the model within 1s (max_concurrent 1 reached)");
    assert!(!second.requested && second.prompt_sha256.is_none(), "{second:?}");
    assert_eq!(fake.seen().len(), 1, "the second never reached the model");
}

#[test]
fn the_key_never_shows_in_debug_output_or_errors() {
    let settings =
        Settings::new(warden_autoapprove::Api::Anthropic, "https://api.anthropic.com", "m", ApiKey::new(KEY));
    assert!(!format!("{settings:?}").contains(KEY), "{settings:?}");
    assert!(format!("{settings:?}").contains("<redacted>"));
    let approver = AutoApprover::new(settings.clone()).unwrap();
    assert!(!format!("{approver:?}").contains(KEY), "{approver:?}");

    let mut bad_key = settings.clone();
    bad_key.api_key = ApiKey::new(format!("{KEY}\n"));
    let err = AutoApprover::new(bad_key).unwrap_err();
    assert!(!err.to_string().contains(KEY) && !format!("{err:?}").contains(KEY), "{err}");

    let mut key_in_url = settings;
    key_in_url.base_url = format!("https://{KEY}@api.anthropic.com");
    let err = AutoApprover::new(key_in_url).unwrap_err();
    assert!(!err.to_string().contains(KEY) && !format!("{err:?}").contains(KEY), "{err}");
}

#[test]
fn bad_settings_are_refused_with_a_reason() {
    let base = Settings::new(warden_autoapprove::Api::OpenAi, "http://127.0.0.1:1", "m", ApiKey::new(""));
    let refused = |change: fn(&mut Settings)| {
        let mut settings = base.clone();
        change(&mut settings);
        AutoApprover::new(settings).unwrap_err().to_string()
    };
    assert!(refused(|s| s.model = " ".into()).contains("model name is empty"));
    assert!(refused(|s| s.deadline = Duration::ZERO).contains("deadline must be greater than zero"));
    assert!(refused(|s| s.connect_timeout = Duration::ZERO).contains("connect_timeout must be"));
    assert!(refused(|s| s.max_concurrent = 0).contains("max_concurrent must be"));
    assert!(refused(|s| s.base_url = "unix:/tmp/sock".into()).contains("http or https"));
    assert!(refused(|s| s.base_url = "localhost:8080".into()).contains("auto-approver base URL"));
}
