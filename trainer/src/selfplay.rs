//! Self-play workers: each runs the batched MCTS driver over many games in flight with the
//! current network weights, and sends every finished game (with its training samples) to the
//! learner over a channel. [`with_workers`] runs them on a thread pool beside the caller's own
//! loop (the learner of `oware train`, the record writer of `oware selfplay`) and reports the
//! first worker that fails.

use crate::config::{SelfplayConfig, TrainConfig};
use crate::replay::Sample;
use crate::selfplay_egtb;
use anyhow::Context;
use oware_egtb::Tables;
use oware_engine::{Game, GameResult, Move, Position, Side};
use oware_model::NetEvaluator;
use oware_search::mcts::{BatchedSearch, MctsConfig, SlotParams};
use oware_search::{EvalError, Evaluation, Evaluator, TableEvaluator};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, RwLock};
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

/// The weights self-play uses, swapped by the learner without stopping the workers. Generic
/// over the evaluator (the network; anything else in tests of the worker loop).
pub struct SharedWeights<E = NetEvaluator> {
    current: RwLock<Arc<E>>,
    version: AtomicU64,
}

impl<E> SharedWeights<E> {
    /// Starts with `evaluator` as version 0.
    pub fn new(evaluator: E) -> SharedWeights<E> {
        SharedWeights {
            current: RwLock::new(Arc::new(evaluator)),
            version: AtomicU64::new(0),
        }
    }

    /// The current weights and their version.
    pub fn get(&self) -> (Arc<E>, u64) {
        // A poisoned lock (a thread panicked holding it) still holds a whole `Arc`: use it.
        let guard = self
            .current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        (Arc::clone(&guard), self.version.load(Ordering::Acquire))
    }

    /// Publishes new weights.
    pub fn set(&self, evaluator: E) {
        // As in `get`: the slot holds a whole `Arc` even after a panic elsewhere.
        let mut guard = self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
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
    /// Fully searched moves (the positions that become training samples when their game ends).
    pub positions: AtomicU64,
    /// Games finished.
    pub games: AtomicU64,
    /// Games finished by perfect table play once they reached an exact table value
    /// (`selfplay.egtb`); counted in `games` too.
    pub table_games: AtomicU64,
    /// Plies of those table play-outs (not searched, not in `moves`).
    pub table_plies: AtomicU64,
    /// Play-outs that gave up (no move proven to keep the value within the proofs' budget);
    /// the game goes on with the search and tries again only after its next capture.
    pub table_gave_up: AtomicU64,
    /// Value targets the tables changed (clamped into the results they allow).
    pub rescored: AtomicU64,
}

/// An evaluator that counts what passes through it.
struct Counting<'a, E: ?Sized> {
    inner: &'a E,
    stats: &'a SelfplayStats,
}

impl<E: Evaluator + ?Sized> Evaluator for Counting<'_, E> {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        self.stats.batches.fetch_add(1, Ordering::Relaxed);
        self.stats
            .evals
            .fetch_add(positions.len() as u64, Ordering::Relaxed);
        self.inner.evaluate(positions, out)
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
    /// The results (worst, best, for the mover) the endgame tables allow here, if covered.
    table_range: Option<(f32, f32)>,
    /// The search's value of the position for the mover.
    search_value: f32,
}

/// The short-horizon value targets of a game's recorded positions, from the last back:
/// `s_t = (1 − λ)·v_t + λ·s_{t+1}` with `λ = 1 − 1/horizon`, `v_t` the search value of the
/// position, `s_{t+1}` the next recorded position's target (negated when the other side moves
/// there), and after the last one the game's value target. All from the mover's side.
fn short_horizon_targets(pending: &[PendingSample], values: &[f32], horizon: f32) -> Vec<f32> {
    let lambda = 1.0 - 1.0 / horizon.max(1.0);
    let mut out = vec![0.0f32; pending.len()];
    let mut next: Option<(f32, Side)> = None;
    for (i, p) in pending.iter().enumerate().rev() {
        let tail = match next {
            Some((s, side)) if side == p.side => s,
            Some((s, _)) => -s,
            None => values[i],
        };
        let s = (1.0 - lambda) * p.search_value.clamp(-1.0, 1.0) + lambda * tail;
        out[i] = s;
        next = Some((s, p.side));
    }
    out
}

fn finish(
    game: &Game,
    pending: &mut Vec<PendingSample>,
    stats: &SelfplayStats,
    horizon: f32,
) -> Option<GameRecord> {
    let result = game.result()?;
    let mut rescored = 0;
    let values: Vec<f32> = pending
        .iter()
        .map(|p| {
            let played = result.value_for(p.side);
            let value = match p.table_range {
                Some((worst, best)) => played.clamp(worst, best),
                None => played,
            };
            rescored += u64::from(value != played);
            value
        })
        .collect();
    let short = short_horizon_targets(pending, &values, horizon);
    let samples = pending
        .drain(..)
        .zip(values.into_iter().zip(short))
        .map(|(p, (value, short_value))| Sample {
            position: p.position,
            policy: p.policy,
            value,
            margin: result.margin_for(p.side) as f32 / 48.0,
            short_value,
        })
        .collect();
    if rescored > 0 {
        stats.rescored.fetch_add(rescored, Ordering::Relaxed);
    }
    Some(GameRecord {
        moves: game.moves().to_vec(),
        result,
        samples,
    })
}

/// How one move of a self-play game is searched under playout cap randomization: a full
/// search (`mcts.sims`, root noise, recorded as a training example) with probability
/// `full_search_prob`, else a cheap one (`cheap_sims`, no noise, not recorded). The
/// temperature applies to both: "record this move" and "explore on this move" are separate
/// decisions, as in KataGo.
fn move_params<R: Rng + ?Sized>(sp: &SelfplayConfig, mcts: &MctsConfig, rng: &mut R) -> SlotParams {
    let full = sp.full_search_prob >= 1.0 || rng.random::<f32>() < sp.full_search_prob;
    SlotParams {
        sims: if full { mcts.sims } else { sp.cheap_sims },
        noise: full,
        temperature: true,
    }
}

/// Runs one self-play worker until stopped (or until its share of a game budget is played),
/// sending finished games to `tx`. Returns when `tx`'s receiver is gone too. With `tables`
/// (`selfplay.egtb`), leaf values are held to the tables' results, a game that reaches an exact
/// table value is played out from the tables, and value targets are clamped
/// ([`crate::selfplay_egtb`]).
///
/// # Errors
/// The evaluator's error (e.g. a network whose outputs are not finite) or an illegal move from
/// the search; the worker stops at the first one.
pub fn run_worker<E: Evaluator + Send + Sync>(
    config: &TrainConfig,
    weights: &SharedWeights<E>,
    stats: &SelfplayStats,
    control: &WorkerControl<'_>,
    tx: &Sender<GameRecord>,
    seed: u64,
    tables: Option<&Arc<Tables>>,
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
            driver.reset(slot, new_game(sp, &mut rng));
            *on = true;
        } else {
            // An idle slot holds a finished game, which the driver skips.
            driver.reset(slot, finished_game()?);
        }
    }
    let mut full = vec![true; slots];
    // Slots whose play-out gave up since their last capture: the proofs that failed would fail
    // again at every later ply of the same stretch (the same history, more of it).
    let mut gave_up = vec![false; slots];
    while active.iter().any(|&a| a) && !control.stop.load(Ordering::Relaxed) {
        if control.pause.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        for (slot, full_search) in full.iter_mut().enumerate() {
            let params = move_params(sp, &mcts, &mut rng);
            *full_search = params.noise;
            driver.set_params(slot, params);
        }
        let (evaluator, _) = weights.get();
        let counting = Counting {
            inner: evaluator.as_ref(),
            stats,
        };
        let results = match tables {
            Some(t) => driver.search(&TableEvaluator::new(counting, Arc::clone(t)), &mut rng),
            None => driver.search(&counting, &mut rng),
        }
        .context("evaluating self-play positions")?;
        for (slot, result) in results.into_iter().enumerate() {
            let Some(r) = result else { continue };
            if !active[slot] {
                continue;
            }
            stats.sims.fetch_add(r.sims as u64, Ordering::Relaxed);
            stats.moves.fetch_add(1, Ordering::Relaxed);
            let game = driver.game(slot);
            if full[slot] {
                stats.positions.fetch_add(1, Ordering::Relaxed);
                pending[slot].push(PendingSample {
                    position: *game.position(),
                    policy: r.policy,
                    side: game.to_move(),
                    table_range: tables.and_then(|t| selfplay_egtb::result_range(t, game)),
                    search_value: r.value,
                });
            }
            driver.advance(slot, r.mv)?;
            if driver.game(slot).seen_since_capture().len() <= 1 {
                // A capture (or the start) empties the history: a new stretch, new proofs.
                gave_up[slot] = false;
            }
            let played_out = match tables {
                Some(t)
                    if !gave_up[slot]
                        && !driver.game(slot).is_over()
                        && selfplay_egtb::is_exact(t, driver.game(slot)) =>
                {
                    let mut game = driver.game(slot).clone();
                    // Where no move can be proven to keep the value the game goes on.
                    match selfplay_egtb::play_out(
                        t,
                        &mut game,
                        selfplay_egtb::SELFPLAY_PROOF_NODES,
                    )? {
                        Some(plies) => {
                            stats.table_games.fetch_add(1, Ordering::Relaxed);
                            stats
                                .table_plies
                                .fetch_add(plies.len() as u64, Ordering::Relaxed);
                            if sp.table_samples {
                                record_table_plies(&mut pending[slot], plies, &game);
                            }
                            Some(game)
                        }
                        None => {
                            stats.table_gave_up.fetch_add(1, Ordering::Relaxed);
                            gave_up[slot] = true;
                            None
                        }
                    }
                }
                _ => None,
            };
            let game = played_out.as_ref().unwrap_or_else(|| driver.game(slot));
            if game.is_over() {
                if let Some(record) =
                    finish(game, &mut pending[slot], stats, sp.short_value_horizon)
                {
                    stats.games.fetch_add(1, Ordering::Relaxed);
                    if tx.send(record).is_err() {
                        return Ok(());
                    }
                }
                if control.take_game() {
                    driver.reset(slot, new_game(sp, &mut rng));
                    gave_up[slot] = false;
                } else {
                    active[slot] = false;
                }
            }
        }
    }
    Ok(())
}

/// Records the plies of a play-out (`selfplay.table_samples`) after the game's searched
/// positions: each with perfect play's policy and, as value and short-horizon targets, the
/// game's result for its mover, which perfect play makes exact.
fn record_table_plies(
    pending: &mut Vec<PendingSample>,
    plies: Vec<selfplay_egtb::TablePly>,
    game: &Game,
) {
    // A play-out returns only once the game is over, so this holds its result.
    let Some(result) = game.result() else { return };
    pending.extend(plies.into_iter().map(|p| {
        let value = result.value_for(p.side);
        PendingSample {
            position: p.position,
            policy: p.policy,
            side: p.side,
            table_range: Some((value, value)),
            search_value: value,
        }
    }));
}

/// A new self-play game: the start position, then a number of uniformly random moves drawn
/// from `0..=selfplay.opening_plies` (opening diversity; those moves are not recorded). An
/// opening that ends the game (it cannot within 40 plies, but the rule is checked) is drawn
/// again.
fn new_game<R: Rng + ?Sized>(sp: &SelfplayConfig, rng: &mut R) -> Game {
    loop {
        let mut game = Game::with_max_plies(sp.max_plies);
        if sp.opening_plies == 0 {
            return game;
        }
        for _ in 0..rng.random_range(0..=sp.opening_plies) {
            let legal = game.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal.as_slice()[rng.random_range(0..legal.len())];
            if game.play(m).is_err() {
                break;
            }
        }
        if !game.is_over() {
            return game;
        }
    }
}

/// A game that is already over (South has captured 25), used to park idle slots.
fn finished_game() -> anyhow::Result<Game> {
    let mut board = [0u8; 12];
    board[0] = 23;
    let position = Position::from_parts(board, [25, 0], Side::South)
        .map_err(|e| anyhow::anyhow!("building a finished game: {e}"))?;
    Ok(Game::from_position(position, 1))
}

/// The first failure among a pool's self-play workers.
#[derive(Default)]
pub struct WorkerFailure {
    failed: AtomicBool,
    error: Mutex<Option<anyhow::Error>>,
}

impl WorkerFailure {
    /// Keeps `error` if it is the first.
    fn record(&self, error: anyhow::Error) {
        // A poisoned lock still holds a whole Option: keep recording into it.
        let mut slot = self
            .error
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if slot.is_none() {
            *slot = Some(error);
        }
        self.failed.store(true, Ordering::SeqCst);
    }

    /// Whether a worker has failed.
    pub fn is_set(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// Whether the failure says the network's outputs are not finite (a diverged network):
    /// its weights must not be checkpointed.
    pub fn is_divergence(&self) -> bool {
        let slot = self
            .error
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.as_ref().is_some_and(|e| {
            e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<EvalError>(),
                    Some(EvalError::NonFinite { .. })
                )
            })
        })
    }

    /// The first worker's error, if any.
    pub fn take(&self) -> Option<anyhow::Error> {
        self.error
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

/// Sets a flag when dropped (the caller's loop ended, by returning or by unwinding).
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    oware_engine::panic::panic_message(payload)
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The seed of worker `w` of a pool seeded with `seed`.
fn worker_seed(seed: u64, w: usize) -> u64 {
    seed ^ ((w as u64 + 1) << 32)
}

/// Runs `config.selfplay.worker_count()` self-play workers on a pool of their own threads
/// (`selfplay-N`) while `main` runs on the calling thread with the receiving end of their
/// games. A worker that fails (an error or a panic) records its error, as
/// `self-play worker N failed: ...`, in the [`WorkerFailure`] `main` is given and sets
/// `control.stop`, which stops the others. When `main` returns, `control.stop` is set and the
/// workers are joined. Returns `main`'s result and the first worker failure.
pub fn with_workers<E, T>(
    config: &TrainConfig,
    weights: &SharedWeights<E>,
    stats: &SelfplayStats,
    control: &WorkerControl<'_>,
    seed: u64,
    main: impl FnOnce(&Receiver<GameRecord>, &WorkerFailure) -> T,
) -> anyhow::Result<(T, Option<anyhow::Error>)>
where
    E: Evaluator + Send + Sync,
{
    let workers = config.selfplay.worker_count();
    let tables = selfplay_egtb::load(&config.selfplay.egtb)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("selfplay-{i}"))
        .build()
        .context("starting the self-play threads")?;
    let failure = WorkerFailure::default();
    let (tx, rx) = std::sync::mpsc::channel::<GameRecord>();
    let result = pool.in_place_scope(|scope| {
        for w in 0..workers {
            let tx = tx.clone();
            let failure = &failure;
            let tables = tables.as_ref();
            scope.spawn(move |_| {
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    run_worker(
                        config,
                        weights,
                        stats,
                        control,
                        &tx,
                        worker_seed(seed, w),
                        tables,
                    )
                }));
                let error = match outcome {
                    Ok(Ok(())) => return,
                    Ok(Err(e)) => e,
                    Err(payload) => anyhow::anyhow!("panicked: {}", panic_message(&*payload)),
                };
                failure.record(error.context(format!("self-play worker {w} failed")));
                control.stop.store(true, Ordering::SeqCst);
            });
        }
        drop(tx);
        let _stop = SetOnDrop(control.stop);
        main(&rx, &failure)
    });
    Ok((result, failure.take()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_search::UniformEvaluator;

    #[test]
    fn parked_slots_are_over() {
        assert!(finished_game().expect("a valid position").is_over());
    }

    /// The uniform evaluator, failing with a non-finite output after `ok_calls` calls: a
    /// network that diverges while self-play runs.
    struct Diverges {
        ok_calls: u64,
        calls: AtomicU64,
    }

    impl Evaluator for Diverges {
        fn evaluate(
            &self,
            positions: &[Position],
            out: &mut [Evaluation],
        ) -> Result<(), EvalError> {
            if self.calls.fetch_add(1, Ordering::SeqCst) >= self.ok_calls {
                return Err(EvalError::NonFinite {
                    index: 1,
                    what: "value",
                });
            }
            UniformEvaluator.evaluate(positions, out)
        }
    }

    fn tiny() -> TrainConfig {
        TrainConfig::from_toml_str(include_str!("../../configs/tiny.toml"), &[])
            .expect("tiny config")
    }

    #[test]
    fn a_failing_worker_stops_the_pool_with_its_error() {
        let mut config = tiny();
        config.selfplay.workers = 2;
        let weights = SharedWeights::new(Diverges {
            ok_calls: 200,
            calls: AtomicU64::new(0),
        });
        let stats = SelfplayStats::default();
        let (stop, pause) = (AtomicBool::new(false), AtomicBool::new(false));
        let control = WorkerControl {
            stop: &stop,
            pause: &pause,
            games_left: None,
        };
        let ((games, saw_failure), failure) =
            with_workers(&config, &weights, &stats, &control, 3, |rx, failure| {
                // Like the learner: take games until a worker fails.
                let mut games = 0;
                while !failure.is_set() {
                    if rx.recv_timeout(Duration::from_millis(50)).is_ok() {
                        games += 1;
                    }
                }
                (games, failure.is_divergence())
            })
            .expect("the pool starts");
        assert!(saw_failure, "the failure is recognised as a divergence");
        let msg = format!("{:#}", failure.expect("a worker failed"));
        assert!(msg.starts_with("self-play worker "), "{msg}");
        assert!(msg.contains("not a finite number"), "{msg}");
        assert!(stop.load(Ordering::SeqCst), "the other worker was stopped");
        assert!(stats.moves.load(Ordering::Relaxed) > 0, "{games} games");
    }

    /// `games` self-play games of the uniform evaluator under `config`, seeded with `seed`;
    /// the pool must play them all without a failure.
    fn play_games(config: &TrainConfig, games: u64, seed: u64) -> Vec<GameRecord> {
        let weights = SharedWeights::new(UniformEvaluator);
        let stats = SelfplayStats::default();
        let (stop, pause) = (AtomicBool::new(false), AtomicBool::new(false));
        let left = AtomicU64::new(games);
        let control = WorkerControl {
            stop: &stop,
            pause: &pause,
            games_left: Some(&left),
        };
        let (records, failure) = with_workers(config, &weights, &stats, &control, seed, |rx, _| {
            rx.iter().collect::<Vec<_>>()
        })
        .expect("the pool starts");
        assert!(failure.is_none());
        assert_eq!(records.len() as u64, games);
        records
    }

    #[test]
    fn a_game_budget_is_played_out_and_every_move_is_sampled_in_the_opening() {
        let mut config = tiny();
        config.selfplay.workers = 2;
        config.selfplay.full_search_prob = 0.25;
        let records = play_games(&config, 20, 9);
        // With a quarter of the moves searched fully, about a quarter are recorded.
        let plies: usize = records.iter().map(|r| r.moves.len()).sum();
        let samples: usize = records.iter().map(|r| r.samples.len()).sum();
        assert!(
            samples * 8 > plies && samples * 2 < plies,
            "{samples} of {plies}"
        );
        // The temperature applies to cheap searches too: the openings differ.
        let openings: std::collections::HashSet<_> =
            records.iter().map(|r| r.moves[..4].to_vec()).collect();
        assert!(openings.len() >= 15, "{} distinct openings", openings.len());
    }

    fn pending(side: Side, search_value: f32) -> PendingSample {
        PendingSample {
            position: Position::start(),
            policy: [1.0 / 6.0; 6],
            side,
            table_range: None,
            search_value,
        }
    }

    #[test]
    fn short_horizon_targets_blend_search_values_into_the_result() {
        let (s, n) = (Side::South, Side::North);
        let p = [pending(s, 0.5), pending(n, -0.2), pending(s, 0.9)];
        // South wins: value targets 1, -1, 1.
        let values = [1.0, -1.0, 1.0];
        // Horizon 1: each target is its own search value.
        assert_eq!(
            short_horizon_targets(&p, &values, 1.0),
            vec![0.5, -0.2, 0.9]
        );
        // Horizon 2 (λ = 1/2), from the last back: 0.5·0.9 + 0.5·1 = 0.95, then for North
        // 0.5·(−0.2) + 0.5·(−0.95) = −0.575, then 0.5·0.5 + 0.5·0.575 = 0.5375.
        let t = short_horizon_targets(&p, &values, 2.0);
        for (got, want) in t.iter().zip([0.5375, -0.575, 0.95]) {
            assert!((got - want).abs() < 1e-6, "{t:?}");
        }
        // A long horizon tends to the result.
        let t = short_horizon_targets(&p, &values, 1000.0);
        assert!(
            t.iter().zip(values).all(|(a, b)| (a - b).abs() < 0.01),
            "{t:?}"
        );
    }

    #[test]
    fn random_opening_plies_diversify_games_and_are_not_recorded() {
        let mut config = tiny();
        config.selfplay.workers = 1;
        config.selfplay.full_search_prob = 1.0;
        config.selfplay.opening_plies = 6;
        // No other source of diversity: no noise, greedy moves from the first ply.
        config.mcts.dirichlet_frac = 0.0;
        config.mcts.temperature_plies = 0;
        let records = play_games(&config, 20, 4);
        // Every searched move is recorded; the random opening moves (0 to 6 a game) are not.
        let plies: usize = records.iter().map(|r| r.moves.len()).sum();
        let samples: usize = records.iter().map(|r| r.samples.len()).sum();
        let unrecorded = plies - samples;
        assert!(
            (10..=120).contains(&unrecorded),
            "{unrecorded} unrecorded plies"
        );
        let openings: std::collections::HashSet<_> =
            records.iter().map(|r| r.moves[..6].to_vec()).collect();
        assert!(openings.len() >= 10, "{} distinct openings", openings.len());
    }

    /// The tables of 0..=`max` seeds, built in `dir` with the exact search of 0..=6 seeds
    /// only (the seventh and eighth tables' cost minutes, and the tests need table play, not
    /// more exact entries), and 24 self-play games of a uniform evaluator with them.
    fn games_with_tables(
        dir: &std::path::Path,
        max: usize,
        table_samples: bool,
    ) -> (TrainConfig, Vec<GameRecord>, SelfplayStats, Arc<Tables>) {
        let options = oware_egtb::SolveOptions::exact_up_to(6);
        oware_egtb::build_tables_with(dir, max, &options, &|_| {}).expect("tables build");
        let mut config = tiny();
        config.selfplay.workers = 2;
        config.selfplay.egtb = dir.to_str().expect("utf-8").to_string();
        config.selfplay.table_samples = table_samples;
        let weights = SharedWeights::new(UniformEvaluator);
        let stats = SelfplayStats::default();
        let (stop, pause) = (AtomicBool::new(false), AtomicBool::new(false));
        let left = AtomicU64::new(24);
        let control = WorkerControl {
            stop: &stop,
            pause: &pause,
            games_left: Some(&left),
        };
        let (records, failure) = with_workers(&config, &weights, &stats, &control, 5, |rx, _| {
            rx.iter().collect::<Vec<_>>()
        })
        .expect("the pool starts");
        assert!(failure.is_none(), "{failure:?}");
        assert_eq!(records.len(), 24);
        let tables = Arc::new(Tables::load(dir).expect("tables load"));
        (config, records, stats, tables)
    }

    #[test]
    fn table_samples_record_the_played_out_plies_with_exact_targets() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (_, records, stats, _) = games_with_tables(dir.path(), 10, true);
        let table_plies = stats.table_plies.load(Ordering::Relaxed);
        assert!(table_plies > 0, "no game was played out");
        // Every searched position and every played-out ply is a sample.
        let samples: usize = records.iter().map(|r| r.samples.len()).sum();
        assert_eq!(
            samples as u64,
            stats.positions.load(Ordering::Relaxed) + table_plies
        );
        let mut checked = 0;
        for r in &records {
            // The samples follow the game, in order (the play-out's after the searched ones);
            // each policy sums to 1, and at least one sample per played-out ply has the
            // result itself as value and short-horizon target (counted below).
            let mut game = Game::with_max_plies(oware_engine::DEFAULT_MAX_PLIES);
            let mut samples = r.samples.iter().peekable();
            let mut sides = Vec::new();
            for &mv in &r.moves {
                if samples
                    .peek()
                    .is_some_and(|s| s.position == *game.position())
                {
                    sides.push(game.to_move());
                    samples.next();
                }
                game.play(mv).expect("a legal move");
            }
            assert!(samples.next().is_none(), "a sample off the game's path");
            for (s, &side) in r.samples.iter().zip(&sides) {
                assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                if s.value == r.result.value_for(side) && s.short_value == s.value {
                    checked += 1;
                }
            }
            // The record still passes the broker's checks (a policy on each sampled ply).
            let bytes = crate::broker::wire::encode(r, "w", 0, 1, oware_engine::DEFAULT_MAX_PLIES)
                .expect("encodes");
            let decoded = crate::broker::wire::decode(&bytes).expect("a valid record");
            assert_eq!(decoded.record.samples.len(), r.samples.len());
        }
        assert!(
            checked as u64 >= table_plies,
            "{checked} exact of {table_plies}"
        );
    }

    #[test]
    fn with_tables_games_end_by_table_play_and_targets_follow_the_tables() {
        let max = 10;
        let dir = tempfile::tempdir().expect("temp dir");
        let (config, records, stats, tables) = games_with_tables(dir.path(), max, false);
        assert_eq!(
            records.iter().map(|r| r.samples.len() as u64).sum::<u64>(),
            stats.positions.load(Ordering::Relaxed),
            "without table_samples only searched positions are samples"
        );
        let mut entered = 0;
        let mut covered = 0;
        for r in &records {
            // The record replays to its result, with the real ending.
            let mut game = Game::with_max_plies(config.selfplay.max_plies);
            let mut played_out = None;
            // As in the worker: after a play-out that gave up, none is tried again before the
            // next capture (a later one could match the moves the search happened to play).
            let mut gave_up = false;
            for &mv in &r.moves {
                // Where the worker finished the game by table play, a play-out of the same
                // tables from here gives the record's moves (play-outs are deterministic). A
                // position exact only by its entry value may need proofs beyond the play-out's
                // budget; there the game went on, and the tables' result binds only from where
                // a play-out succeeded.
                if played_out.is_none()
                    && !gave_up
                    && let Some(a) = tables.analyse(&game)
                    && a.probe.bounds.is_exact()
                {
                    let mut rest = game.clone();
                    match selfplay_egtb::play_out(
                        &tables,
                        &mut rest,
                        selfplay_egtb::SELFPLAY_PROOF_NODES,
                    ) {
                        Ok(Some(_)) if rest.moves() == r.moves.as_slice() => {
                            played_out = Some((a.probe, game.to_move()));
                        }
                        Ok(None) => gave_up = true,
                        _ => {}
                    }
                }
                game.play(mv).expect("a legal move");
                if game.seen_since_capture().len() <= 1 {
                    gave_up = false;
                }
            }
            assert_eq!(game.result(), Some(r.result), "the record replays");
            if let Some((probe, side)) = played_out {
                // From there on the tables played: the result is theirs.
                entered += 1;
                let outcome = probe.outcome().expect("exact");
                if r.result.reason != oware_engine::EndReason::MaxPlies {
                    assert_eq!(r.result.value_for(side), outcome.value(), "{:?}", r.moves);
                }
            }
            for s in &r.samples {
                if let Some(p) = tables.probe(&s.position) {
                    covered += 1;
                    let (worst, best) = p.outcomes();
                    assert!(
                        (worst.value()..=best.value()).contains(&s.value),
                        "target {} outside the tables' {worst:?}..{best:?}",
                        s.value
                    );
                }
            }
        }
        let table_games = stats.table_games.load(Ordering::Relaxed);
        assert!(
            entered > 0,
            "no game was played out in the tables of {max} seeds"
        );
        assert_eq!(
            table_games, entered,
            "every game the workers finished by table play ends as the tables said"
        );
        assert!(stats.table_plies.load(Ordering::Relaxed) > 0);
        assert!(covered > 0, "no recorded position inside the tables");
    }
}
