//! The learner loop, in named steps: **ingest** the finished games (from this process's
//! self-play threads and the broker) into the replay buffer, **learn** one batch, **sync**
//! the new weights to the self-play workers (and publish them through the broker), **log**
//! the figures, **evaluate** and **checkpoint** when they are due, and **finish** the run at
//! its end. Which step runs when is decided by the pure functions of [`super::schedule`].

use super::INTERRUPTED;
use super::schedule::{End, due, may_train, mean_plies, stop_reason};
use crate::broker::learner::LearnerBroker;
use crate::config::TrainConfig;
use crate::eval::{EvalContext, run_evaluation};
use crate::inference::SelfplayNet;
use crate::rates::RateWindow;
use crate::replay::Sample;
use crate::rundir::{RunDir, checkpoint_name};
use crate::selfplay::{GameRecord, SelfplayStats, WorkerFailure};
use crate::state::{State, save_state};
use crate::tensorboard::TensorBoard;
use anyhow::Context;
use oware_arena::eval_log::EvalLine;
use oware_model::{CheckpointError, DeviceKind, Losses, TrainBatch, TrainError};
use oware_report::train_status::{LossFigures, Progress};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// What the loop reads and does not change.
pub(crate) struct LoopContext<'a> {
    pub(crate) config: &'a TrainConfig,
    pub(crate) run: &'a RunDir,
    pub(crate) network: &'a SelfplayNet,
    pub(crate) stats: &'a SelfplayStats,
    pub(crate) pause: &'a AtomicBool,
    pub(crate) failure: &'a WorkerFailure,
    pub(crate) device: DeviceKind,
    /// Simulations and moves counted by earlier processes of this run (before a resume).
    pub(crate) base_sims_moves: (u64, u64),
    /// Self-play threads in this process (0: games come only through the broker).
    pub(crate) local_workers: usize,
}

/// The loop's own state over the run.
pub(crate) struct Learning<'a, 'b> {
    ctx: &'b LoopContext<'a>,
    state: &'b mut State,
    rx: &'b Receiver<GameRecord>,
    tb: &'b mut Option<TensorBoard>,
    progress: &'b mut Progress,
    broker: &'b mut Option<LearnerBroker>,
    rng: SmallRng,
    started: Instant,
    elapsed_before: f64,
    window: RateWindow<'a>,
    game_plies: Vec<u32>,
    last_checkpoint_step: u64,
    last_eval_step: u64,
    last_broker_report: Instant,
    /// Time spent in learner steps since the last log, and when that log was written: their
    /// ratio is the `train/learner_busy` scalar.
    busy: Duration,
    last_log: Instant,
}

impl<'a, 'b> Learning<'a, 'b> {
    /// The loop over `state`, fed by `rx` (and the broker), seeded with `seed`.
    pub(crate) fn new(
        ctx: &'b LoopContext<'a>,
        state: &'b mut State,
        rx: &'b Receiver<GameRecord>,
        tb: &'b mut Option<TensorBoard>,
        progress: &'b mut Progress,
        broker: &'b mut Option<LearnerBroker>,
        seed: u64,
    ) -> Learning<'a, 'b> {
        let step = state.meta.step;
        Learning {
            rng: SmallRng::seed_from_u64(seed ^ 0x5EED),
            started: Instant::now(),
            elapsed_before: state.counters.elapsed_secs,
            window: RateWindow::new(ctx.stats),
            game_plies: Vec::new(),
            last_checkpoint_step: step,
            last_eval_step: step,
            last_broker_report: Instant::now(),
            busy: Duration::ZERO,
            last_log: Instant::now(),
            ctx,
            state,
            rx,
            tb,
            progress,
            broker,
        }
    }

    /// Training seconds over the whole run (earlier processes included).
    fn elapsed(&self) -> f64 {
        self.elapsed_before + self.started.elapsed().as_secs_f64()
    }

    /// Why the run must stop now, if it must.
    fn stop_reason(&self, step: u64) -> Option<End> {
        let failure = self
            .ctx
            .failure
            .is_set()
            .then(|| self.ctx.failure.is_divergence());
        stop_reason(
            &self.ctx.config.schedule,
            failure,
            INTERRUPTED.load(Ordering::SeqCst),
            step,
            self.elapsed(),
        )
    }

    /// Runs the loop to its end: the end of the run is evaluated and checkpointed once.
    pub(crate) fn run(mut self) -> anyhow::Result<End> {
        let end = loop {
            let got_any = self.ingest_ready();
            // Many games wait for a checkpoint to be acknowledged: write one now (the broker
            // stops reading at twice as many).
            if self.broker.as_ref().is_some_and(|b| b.needs_checkpoint())
                && self.state.meta.step > self.last_checkpoint_step
            {
                self.state.counters.elapsed_secs = self.elapsed();
                self.checkpoint()?;
                self.last_checkpoint_step = self.state.meta.step;
            }
            if let Some(end) = self.stop_reason(self.state.meta.step) {
                break end;
            }
            let config = self.ctx.config;
            if !may_train(
                &config.schedule,
                self.state.replay.len(),
                config.replay.min_samples,
                self.state.counters.new_samples,
                self.state.counters.trained_samples,
            ) {
                if !got_any && let Some(end) = self.wait_for_games() {
                    break end;
                }
                self.progress.waiting(
                    self.state.replay.len(),
                    config.replay.min_samples,
                    &self.window.rates(self.state.counters.new_samples).display(),
                );
                continue;
            }
            let (losses, lr) = self.learn()?;
            let step = self.state.meta.step;
            if due(step, config.schedule.sync_every_steps) {
                self.sync()?;
            }
            if due(step, config.log.every_steps) {
                self.log(&losses, lr)?;
            }
            if let Some(tb) = self
                .tb
                .as_mut()
                .filter(|_| due(step, config.log.every_steps * 10))
            {
                tb.flush()?;
            }
            if let Some(end) = self.stop_reason(step) {
                break end;
            }
            let eval_due = due(step, config.eval.every_steps);
            if eval_due {
                self.state.counters.elapsed_secs = self.elapsed();
                self.evaluate()?;
                self.last_eval_step = step;
            }
            if eval_due
                || step - self.last_checkpoint_step >= config.schedule.checkpoint_every_steps
            {
                self.state.counters.elapsed_secs = self.elapsed();
                self.checkpoint()?;
                self.last_checkpoint_step = step;
            }
        };
        self.finish(end)?;
        Ok(end)
    }

    /// **Ingest**: drains the finished games of the self-play threads and the broker into
    /// the replay buffer; whether any came.
    fn ingest_ready(&mut self) -> bool {
        let mut got_any = false;
        while let Ok(record) = self.rx.try_recv() {
            got_any = true;
            ingest(self.state, record, &mut self.game_plies);
        }
        if let Some(b) = self.broker.as_mut() {
            let (state, plies) = (&mut *self.state, &mut self.game_plies);
            got_any |= b.poll(Duration::ZERO, &mut |r| ingest(state, r, plies)) > 0;
            for note in b.take_notes() {
                self.progress.note(&note);
            }
        }
        got_any
    }

    /// Waits a moment for a game while the learner may not train; the end of the run when
    /// every self-play thread is gone.
    fn wait_for_games(&mut self) -> Option<End> {
        let (state, plies) = (&mut *self.state, &mut self.game_plies);
        match self.broker.as_mut() {
            // Only broker games: wait for them (they are taken at the top of the loop).
            Some(b) if self.ctx.local_workers == 0 => {
                b.poll(Duration::from_millis(200), &mut |r| ingest(state, r, plies));
                if self.last_broker_report.elapsed() >= Duration::from_secs(5) {
                    self.progress.set_suffix(&b.report().line());
                    self.last_broker_report = Instant::now();
                }
            }
            _ => match self.rx.recv_timeout(Duration::from_millis(200)) {
                Ok(record) => ingest(state, record, plies),
                Err(RecvTimeoutError::Timeout) => {}
                // A failed worker is seen at the top of the loop.
                Err(RecvTimeoutError::Disconnected) if self.ctx.failure.is_set() => {}
                Err(RecvTimeoutError::Disconnected) => return Some(End::WorkersGone),
            },
        }
        None
    }

    /// **Learn**: one optimizer step on a batch sampled from the replay buffer; its losses
    /// and learning rate. A loss that is not finite is a divergence.
    fn learn(&mut self) -> anyhow::Result<(Losses, f64)> {
        let sched = &self.ctx.config.schedule;
        let step = self.state.meta.step;
        let samples = self.state.replay.sample(sched.batch_size, &mut self.rng);
        let batch = to_batch(&samples);
        let lr = sched.lr_at(step, sched.progress(step, self.elapsed()));
        let started = Instant::now();
        let stepped = self.state.learner.step(&batch, lr);
        self.busy += started.elapsed();
        let losses = match stepped {
            Ok(losses) => losses,
            Err(TrainError::NonFiniteLoss(l)) => {
                return Err(diverged(
                    self.ctx,
                    step + 1,
                    &format!(
                        "the loss is not finite (total {}, policy {}, value {}, margin {})",
                        l.total, l.policy, l.value, l.margin
                    ),
                ));
            }
            Err(e) => return Err(e).context(format!("learner step {}", step + 1)),
        };
        self.state.meta.step += 1;
        self.state.counters.trained_samples += batch.positions.len() as u64;
        Ok((losses, lr))
    }

    /// **Sync**: hands the learner's weights to the self-play workers (and the broker's).
    fn sync(&mut self) -> anyhow::Result<()> {
        let step = self.state.meta.step;
        let net = self.state.learner.evaluator();
        if let Some(b) = self.broker.as_mut() {
            b.publish(&net, self.ctx.config)
                .with_context(|| format!("publishing the weights of step {step}"))?;
        }
        self.ctx.network.publish(net);
        Ok(())
    }

    /// **Log**: the step's scalars to TensorBoard and the status line.
    fn log(&mut self, losses: &Losses, lr: f64) -> anyhow::Result<()> {
        let (ctx, step) = (self.ctx, self.state.meta.step);
        let rates = self.window.rates(self.state.counters.new_samples);
        let mean_plies = mean_plies(&self.game_plies);
        self.game_plies.clear();
        let busy = busy_share(self.busy, self.last_log.elapsed());
        (self.busy, self.last_log) = (Duration::ZERO, Instant::now());
        if let Some(b) = self.broker.as_mut() {
            let report = b.report();
            log_broker(self.tb, &report, step)?;
            self.progress.set_suffix(&report.line());
            self.last_broker_report = Instant::now();
        }
        let state = &*self.state;
        for (tag, v) in [
            ("loss/total", losses.total as f64),
            ("loss/policy", losses.policy as f64),
            ("loss/value", losses.value as f64),
            ("loss/margin", losses.margin as f64),
            ("train/lr", lr),
            ("train/learner_busy", busy),
            ("selfplay/positions_per_sec", rates.positions_per_sec),
            ("selfplay/games_per_sec", rates.games_per_sec),
            ("selfplay/sims_per_sec", rates.sims_per_sec),
            ("selfplay/mean_game_plies", mean_plies),
            ("replay/size", state.replay.len() as f64),
            (
                "train/samples_per_position",
                state.counters.trained_samples as f64 / state.counters.new_samples.max(1) as f64,
            ),
            ("selfplay/games", state.meta.games as f64),
            // Endgame tables (`selfplay.egtb`), counted since this start of the run.
            (
                "selfplay/table_games",
                ctx.stats.table_games.load(Ordering::Relaxed) as f64,
            ),
            (
                "selfplay/table_plies",
                ctx.stats.table_plies.load(Ordering::Relaxed) as f64,
            ),
            (
                "selfplay/table_gave_up",
                ctx.stats.table_gave_up.load(Ordering::Relaxed) as f64,
            ),
            (
                "selfplay/rescored",
                ctx.stats.rescored.load(Ordering::Relaxed) as f64,
            ),
        ] {
            log(self.tb, tag, v, step)?;
        }
        self.progress.step(
            step,
            &LossFigures {
                total: losses.total,
                policy: losses.policy,
                value: losses.value,
            },
            &rates.display(),
            self.elapsed(),
            state.meta.games,
        );
        Ok(())
    }

    /// **Evaluate** the learner's weights (see [`evaluate`]).
    fn evaluate(&mut self) -> anyhow::Result<()> {
        evaluate(self.ctx, self.state, self.tb, self.progress)
    }

    /// **Checkpoint** the run (see [`checkpoint`]).
    fn checkpoint(&mut self) -> anyhow::Result<()> {
        checkpoint(self.ctx, self.state, self.broker)
    }

    /// **Finish**: the end of the run: the final evaluation (a normal end only) and
    /// checkpoint (unless the network diverged, or the step has its checkpoint already).
    fn finish(&mut self, end: End) -> anyhow::Result<()> {
        let step = self.state.meta.step;
        if end == (End::WorkerFailed { diverged: true }) {
            return Ok(());
        }
        let saves = step > self.last_checkpoint_step;
        if saves {
            // The games finished so far go into the final checkpoint with their counts.
            while let Ok(record) = self.rx.try_recv() {
                ingest(self.state, record, &mut Vec::new());
            }
            if let Some(b) = self.broker.as_mut() {
                let state = &mut *self.state;
                b.poll(Duration::ZERO, &mut |r| ingest(state, r, &mut Vec::new()));
            }
        }
        self.state.counters.elapsed_secs = self.elapsed();
        if end == End::Done && self.ctx.config.eval.every_steps > 0 && step > self.last_eval_step {
            // If the step was checkpointed already (the limit came while the learner waited
            // right after a checkpoint), the evaluation is in eval.jsonl and TensorBoard only.
            self.evaluate()?;
        }
        if saves {
            self.checkpoint()?;
        }
        // With tables, how many of this process's own games they finished (the broker's
        // workers count theirs in their own summaries).
        let tables = if self.ctx.config.selfplay.egtb.is_empty() {
            String::new()
        } else {
            format!(
                " ({} of this process's games finished by table play)",
                self.ctx.stats.table_games.load(Ordering::Relaxed)
            )
        };
        self.progress.note(&format!(
            "stopped at step {step} after {:.1} min; {} self-play games{tables}; latest checkpoint {}",
            self.state.counters.elapsed_secs / 60.0,
            self.state.meta.games,
            last_good(self.ctx.run)
        ));
        Ok(())
    }
}

/// The checkpoint `latest` names, for messages.
pub(crate) fn last_good(run: &RunDir) -> String {
    match run.latest() {
        Ok(Some(dir)) => dir.display().to_string(),
        Ok(None) => "none (no checkpoint was written)".to_string(),
        Err(e) => format!("unknown ({e:#})"),
    }
}

/// The share of `wall` spent in learner steps (`busy`), 0 for an empty interval.
fn busy_share(busy: Duration, wall: Duration) -> f64 {
    if wall.is_zero() {
        0.0
    } else {
        (busy.as_secs_f64() / wall.as_secs_f64()).min(1.0)
    }
}

fn log(tb: &mut Option<TensorBoard>, tag: &str, value: f64, step: u64) -> anyhow::Result<()> {
    match tb.as_mut() {
        Some(tb) => tb.scalar(tag, value, step),
        None => Ok(()),
    }
}

/// The error of a diverged run: nothing of it is saved.
fn diverged(ctx: &LoopContext<'_>, step: u64, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "training diverged at step {step}: {what}; the diverged weights were not saved, the last \
         good checkpoint is {} (resume from it with a lower schedule.lr)",
        last_good(ctx.run)
    )
}

/// The broker's scalars: ingest rate, version lag, workers and their rates, the counts.
fn log_broker(
    tb: &mut Option<TensorBoard>,
    report: &crate::broker::learner::BrokerReport,
    step: u64,
) -> anyhow::Result<()> {
    let t = &report.totals;
    for (tag, v) in [
        ("broker/ingest_games_per_sec", report.ingest_games_per_sec),
        ("broker/version_lag", report.mean_version_lag),
        ("broker/workers", report.active_workers as f64),
        (
            "broker/games_per_worker_per_sec",
            report.games_per_worker_per_sec,
        ),
        ("broker/games", t.games as f64),
        ("broker/rejected", t.rejected as f64),
        ("broker/stale", t.stale as f64),
        ("broker/duplicates", t.duplicates as f64),
        ("broker/rate_limited", t.rate_limited as f64),
        ("broker/out_of_sequence", t.out_of_sequence as f64),
        ("broker/wrong_settings", t.wrong_settings as f64),
        ("broker/version", t.version as f64),
        ("broker/worker/others/games_per_sec", report.others_per_sec),
    ] {
        log(tb, tag, v, step)?;
    }
    // The busiest workers only (fake ids would each add a tag).
    for (worker, rate) in &report.per_worker {
        log(
            tb,
            &format!("broker/worker/{worker}/games_per_sec"),
            *rate,
            step,
        )?;
    }
    Ok(())
}

/// Adds a finished game to the replay buffer and the counters.
fn ingest(state: &mut State, record: GameRecord, plies: &mut Vec<u32>) {
    state.meta.games += 1;
    state.meta.positions += record.samples.len() as u64;
    state.counters.new_samples += record.samples.len() as u64;
    plies.push(record.moves.len() as u32);
    state.replay.extend(record.samples);
}

/// The learner's batch of replay samples.
fn to_batch(samples: &[Sample]) -> TrainBatch {
    TrainBatch {
        positions: samples.iter().map(|s| s.position).collect(),
        policy: samples.iter().map(|s| s.policy).collect(),
        value: samples.iter().map(|s| s.value).collect(),
        margin: samples.iter().map(|s| s.margin).collect(),
        short_value: samples.iter().map(|s| s.short_value).collect(),
    }
}

/// Clears a flag when dropped.
struct ClearOnDrop<'a>(&'a AtomicBool);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Evaluates the learner's current weights (the checkpoint of this step, written next),
/// appending each match's line (with the Elo against the anchor so far) to `eval.jsonl` as it
/// ends; records the evaluation in the
/// state's meta (for that checkpoint's `meta.json`) and makes this step the previous evaluated
/// checkpoint.
fn evaluate(
    ctx: &LoopContext<'_>,
    state: &mut State,
    tb: &mut Option<TensorBoard>,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let step = state.meta.step;
    let name = checkpoint_name(step);
    let checkpoint = ctx.run.checkpoint_named(&name);
    let previous = state
        .counters
        .previous_eval_checkpoint
        .as_deref()
        .map(|n| ctx.run.checkpoint_named(n));
    ctx.pause.store(true, Ordering::SeqCst);
    let _resume = ClearOnDrop(ctx.pause);
    let eval_ctx = EvalContext {
        config: &ctx.config.eval,
        network: Arc::new(state.learner.evaluator()),
        search: &ctx.config.mcts,
        checkpoint: &checkpoint,
        previous: previous.as_deref(),
        step,
        elapsed_secs: state.counters.elapsed_secs,
        games: state.meta.games,
        device: ctx.device,
        seed: ctx.config.schedule.seed ^ step,
    };
    // The Elo against the anchor: each line carries the fit over every evaluation match of
    // the run up to it (earlier ones read back from eval.jsonl), so the evaluation's last line
    // holds the evaluation's rating. Lines are appended as each match ends.
    let anchor = ctx.config.eval.anchor.clone();
    let mut history = if anchor.is_empty() {
        Vec::new()
    } else {
        oware_arena::eval_log::read_eval_lines(&ctx.run.eval_log())?
    };
    let mut rated: Vec<EvalLine> = Vec::new();
    {
        let mut on_match = |line: &EvalLine, note: &str| -> anyhow::Result<()> {
            progress.note(note);
            let mut line = line.clone();
            if !anchor.is_empty() {
                history.push(line.clone());
                match oware_arena::anchor::anchor_elo(&history, &anchor, step) {
                    Ok(rating) => line.vs_anchor = rating,
                    Err(e) => progress.note(&format!(
                        "eval step {step}: no Elo against the anchor: {e:#}"
                    )),
                }
            }
            ctx.run.append_eval(&line.to_json())?;
            let tag = line.opponent_tag();
            log(tb, &format!("eval/{tag}/score"), line.score, step)?;
            log(tb, &format!("eval/{tag}/elo"), line.elo, step)?;
            progress.eval(&line);
            rated.push(line);
            Ok(())
        };
        run_evaluation(&eval_ctx, &mut on_match)?;
    }
    if let Some(rating) = rated.last().and_then(|l| l.vs_anchor.clone()) {
        progress.note(&format!(
            "eval step {step}: Elo {:+.0} [{:+.0}, {:+.0}] against the anchor {anchor} \
             (all evaluations so far)",
            rating.elo, rating.ci95.0, rating.ci95.1
        ));
        log(tb, "eval/elo_vs_anchor", rating.elo, step)?;
        log(tb, "eval/elo_vs_anchor_low", rating.ci95.0, step)?;
        log(tb, "eval/elo_vs_anchor_high", rating.ci95.1, step)?;
    }
    let lines = rated;
    if let Some(tb) = tb.as_mut() {
        tb.flush()?;
    }
    state.meta.last_eval = serde_json::Value::Array(lines.iter().map(|l| l.to_json()).collect());
    state.counters.previous_eval_checkpoint = Some(name);
    Ok(())
}

/// Checkpoints the run, recording the self-play simulation and move counts (and the broker's
/// state) first; the broker's games in it are acknowledged once it is written. Weights that
/// are not finite are a divergence: not saved.
fn checkpoint(
    ctx: &LoopContext<'_>,
    state: &mut State,
    broker: &mut Option<LearnerBroker>,
) -> anyhow::Result<()> {
    let (sims, moves) = ctx.base_sims_moves;
    state.counters.sims = sims + ctx.stats.sims.load(Ordering::Relaxed);
    state.counters.moves = moves + ctx.stats.moves.load(Ordering::Relaxed);
    if let Some(b) = broker.as_mut() {
        state.counters.broker = Some(b.state().clone());
        b.checkpoint_starting();
    }
    let saved = save_state(ctx.run, state, ctx.config.schedule.keep_checkpoints);
    if let Some(b) = broker.as_mut() {
        if saved.is_ok() {
            b.checkpoint_written();
        } else {
            b.checkpoint_failed();
        }
    }
    match saved {
        Ok(_) => Ok(()),
        Err(e)
            if e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<CheckpointError>(),
                    Some(CheckpointError::NonFiniteWeights { .. })
                )
            }) =>
        {
            Err(diverged(
                ctx,
                state.meta.step,
                "the weights hold NaN or infinite numbers",
            ))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::busy_share;
    use std::time::Duration;

    #[test]
    fn the_busy_share_is_the_learners_part_of_the_interval() {
        let ms = Duration::from_millis;
        assert!((busy_share(ms(250), ms(1000)) - 0.25).abs() < 1e-12);
        assert_eq!(busy_share(ms(0), ms(1000)), 0.0);
        // An empty interval, and timer rounding that puts the steps past the wall time.
        assert_eq!(busy_share(ms(5), Duration::ZERO), 0.0);
        assert_eq!(busy_share(ms(1001), ms(1000)), 1.0);
    }
}
