//! Without a fresh intent (or anything to check it against), nothing is
//! sent to the model at all.

use std::time::{Duration, SystemTime};

use warden_autoapprove::{AutoApprover, Decision, Intent};

use crate::fake_model::{FakeModel, Reply};
use crate::{APIS, approver, assess, identifiers, intent, settings};

#[tokio::test]
async fn a_missing_empty_stale_or_future_intent_escalates_without_a_request() {
    let now = SystemTime::now();
    let dated =
        |at| Intent { message: "Read /srv/app/config.yaml on docs.example.org".into(), source: "test".into(), at };
    let cases = [
        ("missing", None, "no user intent was set"),
        ("empty", Some(intent("")), "the user intent is empty"),
        ("blank", Some(intent(" \n\t ")), "the user intent is empty"),
        (
            "stale",
            Some(dated(now - Duration::from_secs(121))),
            "the user intent is stale (121 s old, the limit is 120 s)",
        ),
        ("future", Some(dated(now + Duration::from_secs(3600))), "s in the future"),
    ];
    for api in APIS {
        let fake = FakeModel::start([Reply::decision(api, "approve", "must not be asked")]).await;
        let approver = approver(api, &fake.base_url);
        for (case, intent, why) in &cases {
            let assessment = assess(&approver, &identifiers(), intent.as_ref()).await;

            assert_eq!(assessment.decision, Decision::Escalate, "{api:?} {case}");
            assert!(!assessment.requested, "{case}");
            assert_eq!(assessment.prompt_sha256, None, "{case}");
            assert!(assessment.reasoning.contains(why), "{case}: {assessment:?}");
            assert!(assessment.reasoning.ends_with("; escalated without asking the model"), "{case}");
        }
        assert_eq!(fake.seen().len(), 0, "{api:?}: no request for any of them");
    }
}

#[tokio::test]
async fn the_intent_age_limit_is_a_setting() {
    let api = warden_autoapprove::Api::Anthropic;
    let fake = FakeModel::start([Reply::decision(api, "approve", "Asked for.")]).await;
    let mut settings = settings(api, &fake.base_url);
    settings.intent_max_age = Duration::from_secs(600);
    let approver = AutoApprover::new(settings).unwrap();
    let mut old = crate::naming_intent();
    old.at -= Duration::from_secs(300);

    let assessment = assess(&approver, &identifiers(), Some(&old)).await;

    assert_eq!(assessment.decision, Decision::Approve, "{assessment:?}");
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn a_call_without_identifiers_is_escalated_without_a_request_unless_allowed() {
    for api in APIS {
        let fake = FakeModel::start([Reply::decision(api, "approve", "The user asked to push.")]).await;
        let push = intent("push my changes");

        let strict = assess(&approver(api, &fake.base_url), &[], Some(&push)).await;
        assert_eq!(strict.decision, Decision::Escalate, "{api:?}");
        assert!(!strict.requested);
        assert!(strict.reasoning.contains("no resource identifier"), "{strict:?}");
        assert_eq!(fake.seen().len(), 0);

        let mut settings = settings(api, &fake.base_url);
        settings.require_identifiers = false;
        let lenient = assess(&AutoApprover::new(settings).unwrap(), &[], Some(&push)).await;
        assert_eq!(lenient.decision, Decision::Approve, "{api:?}: {lenient:?}");
        assert_eq!(fake.seen().len(), 1);
    }
}
