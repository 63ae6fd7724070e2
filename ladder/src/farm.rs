//! What the ladder needs from "something that plays games", and nothing more: a [`Farm`] handle
//! the service asks for one game at a time ([`Farm::play`]: two [`Contender`]s and a seed, the
//! verified [`MatchRecord`] back), and at the other end of its channel the [`GameRequests`] a
//! farm answers, each with its [`Reply`]. The ladder crate has no farm of its own: the
//! coordinator's `ladder_farm` turns requests into farm jobs through its dispatcher (embedded
//! workers or a cluster) and answers them with the records the game boundary accepted; a test
//! can answer them by hand.
//!
//! The handle owns the service's side of the policy: how long a request waits for its game
//! (`--job-timeout`) and what it means when the farm is gone. Every [`FarmError`] is an
//! infrastructure problem (answered 503), never a bot's fault: a bot's fault is a finished game
//! it loses.

use std::sync::Arc;
use std::time::Duration;

use games::qianwang::MatchRecord;
use tokio::sync::{mpsc, oneshot};

/// An error of the farm's own, carried as it is (the farm is not this crate's code).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a ladder game has no result: an infrastructure problem, never a bot's fault. Answered
/// 503 `farm_unavailable` with this text and its causes.
#[derive(Debug, thiserror::Error)]
pub enum FarmError {
    #[error("the ladder's farm dispatcher has stopped")]
    DispatcherStopped,
    #[error("the farm dropped the job")]
    Dropped,
    #[error("no result from the farm within {0} s")]
    Timeout(u64),
    #[error("uploading code for a ladder job")]
    Upload(#[source] BoxError),
    #[error("publishing a ladder job")]
    Publish(#[source] BoxError),
    #[error("the ladder's workers stopped")]
    WorkersStopped,
    /// The report did not pass the game boundary: the worker failed the job, or its record
    /// does not verify or is not the job's (seed, seats, code hashes).
    #[error("{0}")]
    Refused(games::accept::AcceptError),
}

/// Who plays one side of a ladder game: a display name and the code's hash (its code is in the
/// ladder's [`crate::code::CodeFolder`] by then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contender {
    pub name: String,
    pub sha256: String,
}

/// Where a game's result goes: the request waiting for it (gone after its timeout).
#[derive(Debug)]
pub struct Reply(oneshot::Sender<Result<MatchRecord, FarmError>>);

impl Reply {
    /// Answers the request; nothing happens when it stopped waiting.
    pub fn send(self, result: Result<MatchRecord, FarmError>) {
        let _ = self.0.send(result);
    }
}

/// One game asked of the farm: black moves first.
#[derive(Debug)]
pub struct GameRequest {
    pub black: Contender,
    pub red: Contender,
    pub seed: u64,
    pub reply: Reply,
}

/// The farm's end of the channel: the games asked, in the order they were asked.
#[derive(Debug)]
pub struct GameRequests(mpsc::Receiver<GameRequest>);

impl GameRequests {
    /// The next request; None once every [`Farm`] handle is gone.
    pub async fn recv(&mut self) -> Option<GameRequest> {
        self.0.recv().await
    }
}

/// The service's handle: plays games through whatever answers its [`GameRequests`].
#[derive(Debug, Clone)]
pub struct Farm {
    tx: mpsc::Sender<GameRequest>,
    timeout: Duration,
    describe: Arc<str>,
}

/// Requests queued before `play` waits for room (the farm keeps its own backlog beyond that).
const QUEUE: usize = 1024;

impl Farm {
    /// A handle whose games each wait at most `timeout` for their result, and the end a farm
    /// answers them from.
    pub fn channel(timeout: Duration) -> (Farm, GameRequests) {
        let (tx, rx) = mpsc::channel(QUEUE);
        let farm = Farm {
            tx,
            timeout,
            describe: Arc::from("a farm"),
        };
        (farm, GameRequests(rx))
    }

    /// The same handle, described as `what` in the ladder's logs ("embedded, 2 local
    /// workers", a broker and queue).
    pub fn describing(self, what: impl Into<String>) -> Farm {
        Farm {
            describe: Arc::from(what.into()),
            ..self
        }
    }

    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// Plays one game; Err is an infrastructure problem (never a bot's fault).
    pub async fn play(
        &self,
        black: Contender,
        red: Contender,
        seed: u64,
    ) -> Result<MatchRecord, FarmError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(GameRequest {
                black,
                red,
                seed,
                reply: Reply(reply),
            })
            .await
            .map_err(|_| FarmError::DispatcherStopped)?;
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(FarmError::Dropped),
            Err(_) => Err(FarmError::Timeout(self.timeout.as_secs())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str) -> Contender {
        Contender {
            name: name.into(),
            sha256: "0".repeat(64),
        }
    }

    #[tokio::test]
    async fn requests_reach_the_farm_and_answers_come_back() {
        let (farm, mut requests) = Farm::channel(Duration::from_secs(5));
        let farm = farm.describing("a test farm");
        assert_eq!(farm.describe(), "a test farm");
        let answering = tokio::spawn(async move {
            let r = requests.recv().await.expect("a request");
            assert_eq!((r.black.name.as_str(), r.red.name.as_str()), ("b", "r"));
            assert_eq!(r.seed, 7);
            r.reply.send(Err(FarmError::WorkersStopped));
            // The handle is gone after the game: the farm's end sees the channel close.
            assert!(requests.recv().await.is_none());
        });
        let got = farm.play(side("b"), side("r"), 7).await;
        assert!(matches!(got, Err(FarmError::WorkersStopped)), "{got:?}");
        drop(farm);
        answering.await.unwrap();
    }

    #[tokio::test]
    async fn a_farm_that_is_gone_drops_or_times_out() {
        let (farm, requests) = Farm::channel(Duration::from_secs(5));
        drop(requests);
        let got = farm.play(side("b"), side("r"), 1).await;
        assert!(matches!(got, Err(FarmError::DispatcherStopped)), "{got:?}");

        let (farm, mut requests) = Farm::channel(Duration::from_secs(5));
        let dropping = tokio::spawn(async move { drop(requests.recv().await) });
        let got = farm.play(side("b"), side("r"), 2).await;
        assert!(matches!(got, Err(FarmError::Dropped)), "{got:?}");
        dropping.await.unwrap();

        let (farm, _requests) = Farm::channel(Duration::from_millis(20));
        let got = farm.play(side("b"), side("r"), 3).await;
        assert!(matches!(got, Err(FarmError::Timeout(0))), "{got:?}");
    }
}
