use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use super::*;

/// A waker that counts its wake-ups: the task's.
#[derive(Default)]
struct Counted(AtomicUsize);

impl Wake for Counted {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counted {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Polls `future` once with a counting waker; returns the outcome and the
/// task's wake-ups so far.
fn poll_once<F: Future>(future: Pin<&mut F>, task: &Arc<Counted>) -> Poll<F::Output> {
    let waker = Waker::from(task.clone());
    future.poll(&mut Context::from_waker(&waker))
}

/// Wakes itself `times` times, once per poll, then is ready with the polls
/// it took.
fn waking_itself(times: usize) -> impl Future<Output = usize> {
    let mut polls = 0;
    std::future::poll_fn(move |cx| {
        polls += 1;
        if polls > times {
            return Poll::Ready(polls);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}

#[test]
fn a_future_woken_by_itself_is_polled_again_at_once() {
    let task = Arc::new(Counted::default());
    let mut future = std::pin::pin!(repoll(waking_itself(MAX_REPOLLS - 1)));
    assert_eq!(poll_once(future.as_mut(), &task), Poll::Ready(MAX_REPOLLS));
    assert_eq!(task.count(), 0, "the task was never woken");
}

#[test]
fn a_future_that_keeps_waking_itself_still_yields_to_the_scheduler() {
    let task = Arc::new(Counted::default());
    let mut future = std::pin::pin!(repoll(waking_itself(usize::MAX)));
    assert!(poll_once(future.as_mut(), &task).is_pending());
    assert_eq!(task.count(), 1, "woken once, to be polled again later");
    assert!(poll_once(future.as_mut(), &task).is_pending());
    assert_eq!(task.count(), 2);
}

#[test]
fn a_wake_up_between_polls_goes_to_the_task() {
    let task = Arc::new(Counted::default());
    let mut stored = None;
    let mut future = std::pin::pin!(repoll(std::future::poll_fn(|cx| {
        stored = Some(cx.waker().clone());
        Poll::<()>::Pending
    })));
    assert!(poll_once(future.as_mut(), &task).is_pending());
    let waker = stored.take().expect("the future kept its waker");
    std::thread::spawn(move || waker.wake()).join().expect("the waking thread panicked");
    assert_eq!(task.count(), 1);
}

#[test]
fn a_wake_up_from_another_thread_during_the_poll_is_not_lost() {
    let task = Arc::new(Counted::default());
    let mut polls = 0;
    let mut future = std::pin::pin!(repoll(std::future::poll_fn(|cx| {
        polls += 1;
        if polls == 1 {
            // Another thread wakes the task while this poll is still on.
            let waker = cx.waker().clone();
            std::thread::spawn(move || waker.wake()).join().expect("the waking thread panicked");
            return Poll::Pending;
        }
        Poll::Ready(polls)
    })));
    assert_eq!(poll_once(future.as_mut(), &task), Poll::Ready(2));
    assert_eq!(task.count(), 0);
}

#[test]
fn the_latest_task_waker_is_the_one_woken() {
    let (first, second) = (Arc::new(Counted::default()), Arc::new(Counted::default()));
    let mut stored = None;
    let mut future = std::pin::pin!(repoll(std::future::poll_fn(|cx| {
        stored = Some(cx.waker().clone());
        Poll::<()>::Pending
    })));
    assert!(poll_once(future.as_mut(), &first).is_pending());
    assert!(poll_once(future.as_mut(), &second).is_pending());
    stored.take().expect("the future kept its waker").wake();
    assert_eq!((first.count(), second.count()), (0, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_handed_across_tasks_and_threads_all_arrive() {
    // A ping-pong between two tasks, each wrapped, on two worker threads:
    // every message must get through, whoever wakes whom and when.
    let (to_b, mut at_b) = tokio::sync::mpsc::unbounded_channel::<u32>();
    let (to_a, mut at_a) = tokio::sync::mpsc::unbounded_channel::<u32>();
    let b = tokio::spawn(repoll(async move {
        while let Some(n) = at_b.recv().await {
            if to_a.send(n + 1).is_err() {
                break;
            }
        }
    }));
    let a = tokio::spawn(repoll(async move {
        let mut n = 0;
        while n < 20_000 {
            to_b.send(n).expect("b is gone");
            n = at_a.recv().await.expect("b stopped answering");
        }
        n
    }));
    let n = tokio::time::timeout(Duration::from_secs(30), a).await.expect("stalled").expect("a panicked");
    assert_eq!(n, 20_000);
    b.await.expect("b panicked");
}
