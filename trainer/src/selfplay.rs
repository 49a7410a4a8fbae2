//! Self-play workers: each runs the batched MCTS driver over many games in flight with the
//! current network weights, and sends every finished game (with its training samples) to the
//! learner over a channel.

use crate::config::{SelfplayConfig, TrainConfig};
use crate::replay::Sample;
use oware_engine::mcts::{BatchedSearch, MctsConfig, SlotParams};
use oware_engine::{Evaluation, Evaluator, Game, GameResult, Move, Position, Side};
use oware_model::NetEvaluator;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// A finished self-play game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// The moves played.
    pub moves: Vec<Move>,
    /// The result.
    pub result: GameResult,
    /// Training samples from the fully searched moves, targets filled in from the result.
    pub samples: Vec<Sample>,
}

/// The weights self-play uses, swapped by the learner without stopping the workers.
pub struct SharedWeights {
    current: RwLock<Arc<NetEvaluator>>,
    version: AtomicU64,
}

impl SharedWeights {
    /// Starts with `evaluator` as version 0.
    pub fn new(evaluator: NetEvaluator) -> SharedWeights {
        SharedWeights {
            current: RwLock::new(Arc::new(evaluator)),
            version: AtomicU64::new(0),
        }
    }

    /// The current weights and their version.
    pub fn get(&self) -> (Arc<NetEvaluator>, u64) {
        let guard = self.current.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        (Arc::clone(&guard), self.version.load(Ordering::Acquire))
    }

    /// Publishes new weights.
    pub fn set(&self, evaluator: NetEvaluator) {
        let mut guard = self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        *guard = Arc::new(evaluator);
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// The current version (incremented by every [`SharedWeights::set`]).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }
}

/// Counters shared by all workers, read by the learner for rates.
#[derive(Debug, Default)]
pub struct SelfplayStats {
    /// Simulations run.
    pub sims: AtomicU64,
    /// Positions evaluated by the network.
    pub evals: AtomicU64,
    /// Evaluator calls (batches).
    pub batches: AtomicU64,
    /// Moves played.
    pub moves: AtomicU64,
    /// Games finished.
    pub games: AtomicU64,
}

/// An evaluator that counts what passes through it.
struct Counting<'a, E: ?Sized> {
    inner: &'a E,
    stats: &'a SelfplayStats,
}

impl<E: Evaluator + ?Sized> Evaluator for Counting<'_, E> {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) {
        self.stats.batches.fetch_add(1, Ordering::Relaxed);
        self.stats.evals.fetch_add(positions.len() as u64, Ordering::Relaxed);
        self.inner.evaluate(positions, out);
    }
}

/// Controls shared by the learner and the workers.
pub struct WorkerControl<'a> {
    /// Set to make workers return.
    pub stop: &'a AtomicBool,
    /// While set, workers sleep (the learner evaluates or checkpoints).
    pub pause: &'a AtomicBool,
    /// When `Some`, the total number of games to start across all workers; each worker takes
    /// games from it. `None` means: play until stopped.
    pub games_left: Option<&'a AtomicU64>,
}

impl WorkerControl<'_> {
    fn take_game(&self) -> bool {
        match self.games_left {
            None => true,
            Some(left) => left
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok(),
        }
    }
}

struct PendingSample {
    position: Position,
    policy: [f32; 6],
    side: Side,
}

fn finish(game: &Game, pending: &mut Vec<PendingSample>) -> Option<GameRecord> {
    let result = game.result()?;
    let samples = pending
        .drain(..)
        .map(|p| Sample {
            position: p.position,
            policy: p.policy,
            value: result.value_for(p.side),
            margin: result.margin_for(p.side) as f32 / 48.0,
        })
        .collect();
    Some(GameRecord {
        moves: game.moves().to_vec(),
        result,
        samples,
    })
}

/// Runs one self-play worker until stopped (or until its share of a game budget is played),
/// sending finished games to `tx`. Returns when `tx`'s receiver is gone too.
pub fn run_worker(
    config: &TrainConfig,
    weights: &SharedWeights,
    stats: &SelfplayStats,
    control: &WorkerControl<'_>,
    tx: &Sender<GameRecord>,
    seed: u64,
) -> anyhow::Result<()> {
    let sp: &SelfplayConfig = &config.selfplay;
    let mcts: MctsConfig = config.mcts.clone();
    let slots = sp.games_per_worker;
    let mut driver = BatchedSearch::new(mcts.clone(), slots)?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut pending: Vec<Vec<PendingSample>> = (0..slots).map(|_| Vec::new()).collect();
    let mut active = vec![false; slots];
    for (slot, on) in active.iter_mut().enumerate() {
        if control.take_game() {
            driver.reset(slot, Game::with_max_plies(sp.max_plies));
            *on = true;
        } else {
            // An idle slot holds a finished game, which the driver skips.
            driver.reset(slot, finished_game());
        }
    }
    let mut full = vec![true; slots];
    while active.iter().any(|&a| a) && !control.stop.load(Ordering::Relaxed) {
        if control.pause.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        for slot in 0..slots {
            full[slot] = sp.full_search_prob >= 1.0 || rng.random::<f32>() < sp.full_search_prob;
            let params = if full[slot] {
                SlotParams { sims: mcts.sims, explore: true }
            } else {
                SlotParams { sims: sp.cheap_sims, explore: false }
            };
            driver.set_params(slot, params);
        }
        let (evaluator, _) = weights.get();
        let counting = Counting { inner: evaluator.as_ref(), stats };
        let results = driver.search(&counting, &mut rng);
        for (slot, result) in results.into_iter().enumerate() {
            let Some(r) = result else { continue };
            if !active[slot] {
                continue;
            }
            stats.sims.fetch_add(r.sims as u64, Ordering::Relaxed);
            stats.moves.fetch_add(1, Ordering::Relaxed);
            let game = driver.game(slot);
            if full[slot] {
                pending[slot].push(PendingSample {
                    position: *game.position(),
                    policy: r.policy,
                    side: game.to_move(),
                });
            }
            driver.advance(slot, r.mv)?;
            let game = driver.game(slot);
            if game.is_over() {
                if let Some(record) = finish(game, &mut pending[slot]) {
                    stats.games.fetch_add(1, Ordering::Relaxed);
                    if tx.send(record).is_err() {
                        return Ok(());
                    }
                }
                if control.take_game() {
                    driver.reset(slot, Game::with_max_plies(sp.max_plies));
                } else {
                    active[slot] = false;
                }
            }
        }
    }
    Ok(())
}

/// A game that is already over (South has captured 25), used to park idle slots.
fn finished_game() -> Game {
    let mut board = [0u8; 12];
    board[0] = 23;
    let position = Position::from_parts(board, [25, 0], Side::South).unwrap_or_default();
    Game::from_position(position, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parked_slots_are_over() {
        assert!(finished_game().is_over());
    }
}
