//! The learner's ledger of workers: which games of which worker it has taken, which it dropped
//! and why. Pure bookkeeping, no I/O: the Redis thread ([`super::stream`]) reads the records,
//! [`super::learner::LearnerBroker`] hands each valid one to [`Ledger::judge`], and the state
//! ([`BrokerState`]) is saved in every checkpoint. See the module docs of [`crate::broker`].
//!
//! A record's fields come from a sender the learner cannot trust, so nothing in it is adopted
//! blindly: its ply limit must be the learner's own; its sequence number may skip ahead by at
//! most [`MAX_SEQ_GAP`] (a record far ahead is dropped, not adopted, so a forged `seq = 2^62`
//! cannot silence the real worker's later games, and `u64::MAX` cannot overflow); a worker's
//! games beyond `max_games_per_worker_per_minute` are dropped; every count saturates.

use super::wire::WireGame;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// Most workers remembered for de-duplication; beyond it the one seen longest ago is forgotten.
pub const MAX_TRACKED_WORKERS: usize = 10_000;
/// How far past the expected sequence number a record may be. A real worker skips numbers only
/// for games that never reached the learner (dropped while Redis was away, trimmed from the
/// stream); a worker that has dropped this many games in a row starts afresh under a new id.
pub const MAX_SEQ_GAP: u64 = 1 << 20;

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
    /// Games dropped because the worker sent more than its rate allows.
    #[serde(default)]
    pub rate_limited: u64,
    /// Records dropped for a sequence number far ahead of the expected one.
    #[serde(default)]
    pub out_of_sequence: u64,
    /// Games played under settings other than the learner's (another ply limit).
    #[serde(default)]
    pub wrong_settings: u64,
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
    /// Games dropped because their worker sent more than its rate allows.
    #[serde(default)]
    pub rate_limited: u64,
    /// Records dropped for a sequence number far ahead of the expected one.
    #[serde(default)]
    pub out_of_sequence: u64,
    /// Games played under settings other than the learner's (another ply limit).
    #[serde(default)]
    pub wrong_settings: u64,
    /// Per worker id.
    pub workers: BTreeMap<String, WorkerTally>,
}

impl BrokerState {
    /// Records dropped for any reason (rejected, stale, duplicate, rate-limited, out of
    /// sequence, wrong settings).
    pub fn dropped(&self) -> u64 {
        [
            self.rejected,
            self.stale,
            self.duplicates,
            self.rate_limited,
            self.out_of_sequence,
            self.wrong_settings,
        ]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b))
    }
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
    /// Over its worker's rate.
    RateLimited,
    /// A sequence number far ahead of the expected one (or the last one there is).
    OutOfSequence,
    /// Played under another ply limit than the learner's.
    WrongSettings,
}

/// What the learner requires of a game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rules {
    /// Games played with weights more than this many versions old are stale.
    pub max_lag: u64,
    /// The learner's own ply limit (`selfplay.max_plies`).
    pub max_plies: u32,
    /// Games one worker may send per minute, sustained (and in a burst); 0: no limit.
    pub games_per_worker_per_minute: u64,
}

/// A token bucket of one worker, refilled at the rules' rate.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// The ledger: the saved state, and what is not saved (the workers' rate buckets).
#[derive(Debug)]
pub struct Ledger {
    /// The state saved in checkpoints.
    pub state: BrokerState,
    rules: Rules,
    buckets: HashMap<String, Bucket>,
}

impl Ledger {
    /// A ledger going on from `state` under `rules`.
    pub fn new(state: BrokerState, rules: Rules) -> Ledger {
        Ledger {
            state,
            rules,
            buckets: HashMap::new(),
        }
    }

    /// The rules.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Takes one game from `worker`'s bucket at `now`; `false` when it is empty.
    fn take(&mut self, worker: &str, now: Instant) -> bool {
        let per_minute = self.rules.games_per_worker_per_minute;
        if per_minute == 0 {
            return true;
        }
        let burst = per_minute as f64;
        let rate = burst / 60.0;
        let mut key = worker;
        if !self.buckets.contains_key(worker) && self.buckets.len() >= MAX_TRACKED_WORKERS {
            // Forget the buckets that are full again: that loses nothing.
            self.buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.updated).as_secs_f64() * rate < burst
            });
            if self.buckets.len() >= MAX_TRACKED_WORKERS {
                // A flood of new ids: those that do not fit share one bucket (no worker id
                // is empty).
                key = "";
            }
        }
        let b = self.buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: burst,
            updated: now,
        });
        let dt = now.saturating_duration_since(b.updated).as_secs_f64();
        b.tokens = (b.tokens + dt * rate).min(burst);
        b.updated = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Decides on a valid game at `now` and counts it.
    pub fn judge(&mut self, game: &WireGame, now: Instant) -> Verdict {
        let rules = self.rules;
        let s = &mut self.state;
        let seen = s.games.saturating_add(s.stale);
        if !s.workers.contains_key(&game.worker) && s.workers.len() >= MAX_TRACKED_WORKERS {
            let oldest = s
                .workers
                .iter()
                .min_by_key(|(_, t)| t.last_seen)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                s.workers.remove(&id);
            }
        }
        let tally = s.workers.entry(game.worker.clone()).or_default();
        tally.last_seen = seen;
        if game.max_plies != rules.max_plies {
            tally.wrong_settings = tally.wrong_settings.saturating_add(1);
            s.wrong_settings = s.wrong_settings.saturating_add(1);
            return Verdict::WrongSettings;
        }
        if game.seq < tally.next_seq {
            tally.duplicates = tally.duplicates.saturating_add(1);
            s.duplicates = s.duplicates.saturating_add(1);
            return Verdict::Duplicate;
        }
        let gap = game.seq - tally.next_seq;
        let Some(next) = game.seq.checked_add(1).filter(|_| gap <= MAX_SEQ_GAP) else {
            tally.out_of_sequence = tally.out_of_sequence.saturating_add(1);
            s.out_of_sequence = s.out_of_sequence.saturating_add(1);
            return Verdict::OutOfSequence;
        };
        tally.missing = tally.missing.saturating_add(gap);
        tally.next_seq = next;
        let worker = game.worker.clone();
        if !self.take(&worker, now) {
            let s = &mut self.state;
            if let Some(t) = s.workers.get_mut(&worker) {
                t.rate_limited = t.rate_limited.saturating_add(1);
            }
            s.rate_limited = s.rate_limited.saturating_add(1);
            return Verdict::RateLimited;
        }
        let s = &mut self.state;
        let Some(tally) = s.workers.get_mut(&worker) else {
            // The tally was made above and nothing removed it since.
            return Verdict::OutOfSequence;
        };
        // A version above the newest comes from weights this learner never published.
        let fresh = game.version <= s.version && s.version - game.version <= rules.max_lag;
        if fresh {
            tally.games = tally.games.saturating_add(1);
            s.games = s.games.saturating_add(1);
            Verdict::Taken
        } else {
            tally.stale = tally.stale.saturating_add(1);
            s.stale = s.stale.saturating_add(1);
            Verdict::Stale
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selfplay::GameRecord;
    use oware_engine::{EndReason, GameResult, Winner};
    use std::time::Duration;

    fn game(worker: &str, seq: u64, version: u64) -> WireGame {
        WireGame {
            worker: worker.into(),
            seq,
            version,
            max_plies: 200,
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

    fn rules() -> Rules {
        Rules {
            max_lag: 2,
            max_plies: 200,
            games_per_worker_per_minute: 0,
        }
    }

    fn ledger(version: u64, rules: Rules) -> Ledger {
        Ledger::new(
            BrokerState {
                version,
                ..BrokerState::default()
            },
            rules,
        )
    }

    #[test]
    fn duplicates_gaps_and_stale_games_are_counted() {
        let mut l = ledger(10, rules());
        let now = Instant::now();
        assert_eq!(l.judge(&game("a", 0, 10), now), Verdict::Taken);
        assert_eq!(l.judge(&game("a", 0, 10), now), Verdict::Duplicate);
        assert_eq!(l.judge(&game("a", 1, 8), now), Verdict::Taken);
        assert_eq!(l.judge(&game("a", 2, 7), now), Verdict::Stale);
        assert_eq!(
            l.judge(&game("a", 5, 11), now),
            Verdict::Stale,
            "unknown version"
        );
        assert_eq!(l.judge(&game("b", 0, 9), now), Verdict::Taken);
        let s = &l.state;
        let a = &s.workers["a"];
        assert_eq!(
            (a.games, a.stale, a.duplicates, a.missing, a.next_seq),
            (2, 2, 1, 2, 6)
        );
        assert_eq!(a.games + a.stale + a.missing, a.next_seq);
        assert_eq!((s.games, s.stale, s.duplicates), (3, 2, 1));
        assert_eq!(s.dropped(), 3);
        // The state survives a checkpoint's JSON, and a checkpoint written before the new
        // counters existed still loads.
        let json = serde_json::to_value(s).expect("json");
        assert_eq!(
            &serde_json::from_value::<BrokerState>(json).expect("back"),
            s
        );
        let old = serde_json::json!({"version": 3, "games": 1, "rejected": 0, "stale": 0,
            "duplicates": 0, "workers": {"w": {"next_seq": 1, "games": 1, "stale": 0,
            "duplicates": 0, "missing": 0, "last_seen": 0}}});
        let old: BrokerState = serde_json::from_value(old).expect("an older checkpoint");
        assert_eq!((old.rate_limited, old.workers["w"].next_seq), (0, 1));
    }

    #[test]
    fn a_sequence_number_far_ahead_is_dropped_not_adopted() {
        let mut l = ledger(5, rules());
        let now = Instant::now();
        assert_eq!(l.judge(&game("honest", 0, 5), now), Verdict::Taken);
        // A forger with the honest worker's id jumps far ahead, or to the very end.
        assert_eq!(
            l.judge(&game("honest", 1 << 62, 5), now),
            Verdict::OutOfSequence
        );
        assert_eq!(
            l.judge(&game("honest", u64::MAX, 5), now),
            Verdict::OutOfSequence
        );
        // The honest worker's next games are still taken.
        assert_eq!(l.judge(&game("honest", 1, 5), now), Verdict::Taken);
        assert_eq!(l.judge(&game("honest", 2, 5), now), Verdict::Taken);
        // A real gap (games lost while Redis was away) up to the bound is fine.
        assert_eq!(
            l.judge(&game("honest", 3 + MAX_SEQ_GAP, 5), now),
            Verdict::Taken
        );
        let t = &l.state.workers["honest"];
        assert_eq!((t.games, t.out_of_sequence, t.missing), (4, 2, MAX_SEQ_GAP));
        assert_eq!(t.next_seq, 4 + MAX_SEQ_GAP);
        // The last sequence number there is: no overflow, even for a new worker.
        assert_eq!(
            l.judge(&game("new", u64::MAX, 5), now),
            Verdict::OutOfSequence
        );
        assert_eq!(
            l.judge(&game("new", MAX_SEQ_GAP + 1, 5), now),
            Verdict::OutOfSequence
        );
        assert_eq!(l.state.out_of_sequence, 4);
    }

    #[test]
    fn the_learners_ply_limit_is_required() {
        let mut l = ledger(1, rules());
        let mut g = game("w", 0, 1);
        g.max_plies = 1000;
        assert_eq!(l.judge(&g, Instant::now()), Verdict::WrongSettings);
        assert_eq!(l.state.wrong_settings, 1);
        // Its sequence number was not adopted: the same number under the right limit is taken.
        assert_eq!(l.judge(&game("w", 0, 1), Instant::now()), Verdict::Taken);
    }

    #[test]
    fn each_worker_is_held_to_its_rate() {
        let mut l = ledger(
            1,
            Rules {
                games_per_worker_per_minute: 60,
                ..rules()
            },
        );
        let t0 = Instant::now();
        let verdicts: Vec<_> = (0..100).map(|i| l.judge(&game("fast", i, 1), t0)).collect();
        let taken = verdicts.iter().filter(|v| **v == Verdict::Taken).count();
        assert_eq!(taken, 60, "a minute's worth at once");
        assert_eq!(l.state.rate_limited, 40);
        // Another worker has its own allowance; the fast one gets one a second back.
        assert_eq!(l.judge(&game("other", 0, 1), t0), Verdict::Taken);
        let later = t0 + Duration::from_millis(2500);
        assert_eq!(l.judge(&game("fast", 100, 1), later), Verdict::Taken);
        assert_eq!(l.judge(&game("fast", 101, 1), later), Verdict::Taken);
        assert_eq!(l.judge(&game("fast", 102, 1), later), Verdict::RateLimited);
        let t = &l.state.workers["fast"];
        assert_eq!((t.games, t.rate_limited, t.next_seq), (62, 41, 103));
    }

    #[test]
    fn counts_saturate_instead_of_overflowing() {
        let mut l = ledger(1, rules());
        l.state.duplicates = u64::MAX;
        l.state.games = u64::MAX;
        let now = Instant::now();
        assert_eq!(l.judge(&game("w", 0, 1), now), Verdict::Taken);
        assert_eq!(l.judge(&game("w", 0, 1), now), Verdict::Duplicate);
        assert_eq!((l.state.games, l.state.duplicates), (u64::MAX, u64::MAX));
        assert_eq!(l.state.dropped(), u64::MAX);
    }

    #[test]
    fn the_workers_remembered_are_bounded() {
        let mut l = ledger(
            1,
            Rules {
                games_per_worker_per_minute: 10,
                ..rules()
            },
        );
        let now = Instant::now();
        for i in 0..(MAX_TRACKED_WORKERS + 50) {
            l.judge(&game(&format!("w{i}"), 0, 1), now);
        }
        assert_eq!(l.state.workers.len(), MAX_TRACKED_WORKERS);
        assert!(l.buckets.len() <= MAX_TRACKED_WORKERS + 1);
    }
}
