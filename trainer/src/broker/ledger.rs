//! The learner's ledger of workers: which games of which worker it has taken, which it dropped
//! and why. Pure bookkeeping, no I/O: the Redis thread ([`super::stream`]) reads the records,
//! [`super::learner::LearnerBroker`] hands each valid one to [`BrokerState::judge`], and the
//! state is saved in every checkpoint. See the module docs of [`crate::broker`].

use super::wire::WireGame;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most workers remembered for de-duplication; beyond it the one seen longest ago is forgotten.
pub const MAX_TRACKED_WORKERS: usize = 10_000;

/// What the learner knows of one worker (saved in checkpoints).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerTally {
    /// The lowest sequence number not seen yet: records below it are duplicates.
    pub next_seq: u64,
    /// Games taken into the replay buffer.
    pub games: u64,
    /// Games dropped as stale.
    pub stale: u64,
    /// Duplicate records dropped.
    pub duplicates: u64,
    /// Sequence numbers skipped (games that never arrived: dropped by a worker whose Redis was
    /// away too long, or trimmed from the stream).
    pub missing: u64,
    /// The run's game count when this worker was last heard from (for forgetting the oldest).
    pub last_seen: u64,
}

/// The broker's part of a run's state, saved in every checkpoint (`meta.json`, `extra.broker`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrokerState {
    /// The newest published weights version.
    pub version: u64,
    /// Games taken from workers.
    pub games: u64,
    /// Records rejected by validation.
    pub rejected: u64,
    /// Games dropped as stale.
    pub stale: u64,
    /// Duplicate records dropped.
    pub duplicates: u64,
    /// Per worker id.
    pub workers: BTreeMap<String, WorkerTally>,
}

/// What happened to one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Taken.
    Taken,
    /// Played with weights too old (or unknown to this learner).
    Stale,
    /// Seen before.
    Duplicate,
}

impl BrokerState {
    /// Decides on a valid game with the learner's newest version and `max_lag`, and counts it.
    pub fn judge(&mut self, game: &WireGame, max_lag: u64) -> Verdict {
        let seen = self.games + self.stale;
        if !self.workers.contains_key(&game.worker) && self.workers.len() >= MAX_TRACKED_WORKERS {
            let oldest = self
                .workers
                .iter()
                .min_by_key(|(_, t)| t.last_seen)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                self.workers.remove(&id);
            }
        }
        let tally = self.workers.entry(game.worker.clone()).or_default();
        tally.last_seen = seen;
        if game.seq < tally.next_seq {
            tally.duplicates += 1;
            self.duplicates += 1;
            return Verdict::Duplicate;
        }
        tally.missing += game.seq - tally.next_seq;
        tally.next_seq = game.seq + 1;
        // A version above the newest comes from weights this learner never published.
        let fresh = game.version <= self.version && self.version - game.version <= max_lag;
        if fresh {
            tally.games += 1;
            self.games += 1;
            Verdict::Taken
        } else {
            tally.stale += 1;
            self.stale += 1;
            Verdict::Stale
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfplay::GameRecord;
    use oware_engine::{EndReason, GameResult, Winner};

    fn game(worker: &str, seq: u64, version: u64) -> WireGame {
        WireGame {
            worker: worker.into(),
            seq,
            version,
            record: GameRecord {
                moves: Vec::new(),
                result: GameResult {
                    winner: Winner::Draw,
                    reason: EndReason::MaxPlies,
                    score: [24, 24],
                },
                samples: Vec::new(),
            },
        }
    }

    #[test]
    fn duplicates_gaps_and_stale_games_are_counted() {
        let mut s = BrokerState {
            version: 10,
            ..BrokerState::default()
        };
        assert_eq!(s.judge(&game("a", 0, 10), 2), Verdict::Taken);
        assert_eq!(s.judge(&game("a", 0, 10), 2), Verdict::Duplicate);
        assert_eq!(s.judge(&game("a", 1, 8), 2), Verdict::Taken);
        assert_eq!(s.judge(&game("a", 2, 7), 2), Verdict::Stale);
        assert_eq!(
            s.judge(&game("a", 5, 11), 2),
            Verdict::Stale,
            "unknown version"
        );
        assert_eq!(s.judge(&game("b", 0, 9), 2), Verdict::Taken);
        let a = &s.workers["a"];
        assert_eq!(
            (a.games, a.stale, a.duplicates, a.missing, a.next_seq),
            (2, 2, 1, 2, 6)
        );
        assert_eq!(a.games + a.stale + a.missing, a.next_seq);
        assert_eq!((s.games, s.stale, s.duplicates), (3, 2, 1));
        // The state survives a checkpoint's JSON.
        let json = serde_json::to_value(&s).expect("json");
        assert_eq!(
            serde_json::from_value::<BrokerState>(json).expect("back"),
            s
        );
    }
}
