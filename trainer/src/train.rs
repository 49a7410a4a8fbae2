//! `oware train`: the learner loop. Self-play workers run in a thread pool in the background;
//! this thread drains their games into the replay buffer, trains, hands new weights to the
//! workers, logs, evaluates and writes checkpoints. A killed run resumes from `latest`.
//!
//! Checkpoints and kills: a step is checkpointed at most once, in a new folder that appears
//! complete or not at all, and `latest` is moved to it afterwards; a complete checkpoint is never
//! modified. An evaluation runs *before* the checkpoint of its step (on the learner's weights in
//! memory), so that checkpoint's `meta.json` holds it; its lines go to `eval.jsonl` as each
//! match ends. A kill at any moment therefore leaves `latest` naming a complete checkpoint;
//! evaluation lines of steps after it (a kill between an evaluation and its checkpoint) are
//! dropped when the run resumes, and that step is evaluated again.

use crate::broker::BrokerUrl;
use crate::broker::learner::{LearnerBroker, Start};
use crate::config::TrainConfig;
use crate::eval::{EvalContext, EvalLine, run_evaluation};
use crate::inference::SelfplayNet;
use crate::progress::Progress;
use crate::rates::RateWindow;
use crate::replay::Sample;
use crate::rundir::{RunDir, checkpoint_name, write_atomic};
use crate::selfplay::{GameRecord, SelfplayStats, WorkerControl, WorkerFailure};
use crate::state::{State, fresh_state, load_state, save_state};
use crate::tensorboard::TensorBoard;
use anyhow::Context;
use oware_model::{CheckpointError, DeviceKind, TrainBatch, TrainError};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How `oware train` was asked to run.
#[derive(Clone, Debug)]
pub struct TrainOptions {
    /// The run directory.
    pub run: PathBuf,
    /// The config file (new runs); `None` uses the built-in defaults.
    pub config: Option<PathBuf>,
    /// `section.key=value` overrides.
    pub sets: Vec<String>,
    /// Continue the run in `run` from its latest checkpoint.
    pub resume: bool,
    /// The device for the network.
    pub device: DeviceKind,
    /// Plain log lines instead of a live progress line.
    pub quiet: bool,
    /// Also (with `selfplay.workers = 0`: only) learn from `oware worker` processes through
    /// this Redis.
    pub broker: Option<BrokerUrl>,
}

/// Self-play threads in this process: `selfplay.workers`, except that with a broker 0 means
/// none (the games come from workers elsewhere) rather than one per core.
pub fn local_workers(config: &TrainConfig, broker: bool) -> usize {
    if broker && config.selfplay.workers == 0 {
        0
    } else {
        config.selfplay.worker_count()
    }
}

/// The run's name in Redis keys: the run directory's last component.
fn run_name(run: &RunDir) -> anyhow::Result<String> {
    let name = run
        .root()
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .unwrap_or_default();
    crate::broker::check_run_name(&name).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}; with --broker the run directory's name ({}) names the run for the workers",
            run.root().display()
        )
    })?;
    Ok(name)
}

/// Set by Ctrl-C: finish the current step, checkpoint and exit.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once per process).
pub fn install_ctrl_c() -> anyhow::Result<()> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C handler")
}

/// Runs `oware train` to its end (time or step limit, or Ctrl-C).
///
/// # Errors
/// Besides bad configs and files: a self-play worker that fails ends the run with that
/// worker's error, after a final checkpoint; a diverged network (a NaN or infinite loss,
/// weights or outputs) ends it with a message naming the last good checkpoint, without saving
/// the diverged weights.
pub fn train(opts: &TrainOptions) -> anyhow::Result<()> {
    let run = RunDir::new(&opts.run);
    let config = if opts.resume {
        let path = run.config();
        if !path.is_file() {
            anyhow::bail!("cannot resume: {} does not exist", path.display());
        }
        TrainConfig::load(Some(&path), &opts.sets)?
    } else {
        if run.latest()?.is_some() || run.newest_checkpoint()?.is_some() {
            anyhow::bail!(
                "{} already holds a run; continue it with `oware train --resume {}` or choose another --run",
                run.root().display(),
                run.root().display()
            );
        }
        TrainConfig::load(opts.config.as_deref(), &opts.sets)?
    };
    run.create()?;
    let device = oware_model::device(opts.device)?;
    let mut notes: Vec<String> = Vec::new();
    if opts.resume {
        // A process killed between writing a checkpoint and moving `latest` to it left a
        // complete checkpoint that `latest` does not name yet: continue from it.
        if let Some(name) = run.adopt_newest_checkpoint()? {
            notes.push(format!(
                "checkpoints/latest now names {name}, the newest complete checkpoint (the \
                 stopped process wrote it but did not get to move latest)"
            ));
        }
    }
    let mut state = if opts.resume {
        load_state(&run, &config, &device, &mut |n| notes.push(n.to_string()))?
    } else {
        fresh_state(&config, &device)
    };
    // Only now is every setting known to run: the resolved config may be written.
    write_atomic(&run.config(), config.to_toml()?.as_bytes())?;
    // This process is the run's one writer from here on.
    run.remove_stale_temporaries()?;
    if opts.resume {
        let dropped = run.trim_eval_log(state.meta.step)?;
        if dropped > 0 {
            notes.push(format!(
                "dropped {dropped} line(s) of eval.jsonl after step {} (written before the run \
                 was stopped, without their checkpoint); that step is evaluated again",
                state.meta.step
            ));
        }
    }
    state.counters.starts += 1;
    let mut tb = if config.log.tensorboard {
        Some(TensorBoard::create(run.root())?)
    } else {
        None
    };
    let network = SelfplayNet::start(&config, opts.device, state.learner.evaluator())?;
    let stats = SelfplayStats::default();
    let stop = AtomicBool::new(false);
    let pause = AtomicBool::new(false);
    let control = WorkerControl {
        stop: &stop,
        pause: &pause,
        games_left: None,
    };
    let seed = config
        .schedule
        .seed
        .wrapping_mul(1_000_003)
        .wrapping_add(state.counters.starts);
    let mut progress = Progress::new(opts.quiet, &config, state.meta.step);
    for note in &notes {
        progress.note(note);
    }
    let local = local_workers(&config, opts.broker.is_some());
    progress.note(&format!(
        "{} run {} on {} with {local} self-play workers x {} games ({} inference){}; network {} parameters",
        if opts.resume { "resuming" } else { "starting" },
        run.root().display(),
        opts.device.name(),
        config.selfplay.games_per_worker,
        network.mode().name(),
        if opts.broker.is_some() {
            " here, and workers through the broker"
        } else {
            ""
        },
        config.model.num_params()
    ));
    let mut broker = match &opts.broker {
        None => None,
        Some(url) => {
            let (key, made) = crate::broker::sign::LearnerKey::load_or_create(run.root())?;
            if made {
                progress.note(&format!(
                    "broker: made the run's signing key {} (public key in {})",
                    run.root().join(crate::broker::sign::KEY_FILE).display(),
                    run.root()
                        .join(crate::broker::sign::PUBLIC_KEY_FILE)
                        .display()
                ));
            }
            let started = LearnerBroker::start(
                Start {
                    url,
                    run: &run_name(&run)?,
                    config: &config,
                    state: state.counters.broker.take().unwrap_or_default(),
                    net: &state.learner.evaluator(),
                    fresh: !opts.resume,
                    stop: &INTERRUPTED,
                    key: std::sync::Arc::new(key),
                },
                &mut |n| progress.note(n),
            )?;
            match started {
                Some(b) => Some(b),
                // Ctrl-C while waiting for Redis: nothing was trained, nothing to save.
                None => {
                    progress.note("stopped while waiting for Redis; nothing was trained");
                    return Ok(());
                }
            }
        }
    };
    let base_sims_moves = (state.counters.sims, state.counters.moves);
    let mut run_loop = |rx: &Receiver<GameRecord>, failed: &WorkerFailure| {
        let ctx = LoopContext {
            config: &config,
            run: &run,
            network: &network,
            stats: &stats,
            pause: &pause,
            failure: failed,
            device: opts.device,
            base_sims_moves,
            local_workers: local,
        };
        learner_loop(
            &ctx,
            &mut state,
            rx,
            &mut tb,
            &mut progress,
            seed,
            &mut broker,
        )
    };
    let (outcome, failure) = if local == 0 {
        // No self-play threads here: every game comes through the broker.
        let (_, rx) = std::sync::mpsc::channel::<GameRecord>();
        let failed = WorkerFailure::default();
        let outcome = run_loop(&rx, &failed);
        (outcome, failed.take())
    } else {
        network.with_workers(&config, &stats, &control, seed, run_loop)?
    };
    if let Some(b) = broker.take() {
        b.shutdown();
    }
    progress.finish();
    if let Some(tb) = tb.as_mut() {
        tb.flush()?;
    }
    match (outcome?, failure) {
        (End::WorkerFailed { diverged: true }, Some(e)) => Err(e.context(format!(
            "training diverged: the network's outputs are not finite; its weights were not \
             saved, the last good checkpoint is {} (resume from it with a lower schedule.lr)",
            last_good(&run)
        ))),
        (_, Some(e)) => Err(e),
        (End::WorkersGone, None) => anyhow::bail!("all self-play workers stopped"),
        _ => Ok(()),
    }
}

/// The checkpoint `latest` names, for messages.
fn last_good(run: &RunDir) -> String {
    match run.latest() {
        Ok(Some(dir)) => dir.display().to_string(),
        Ok(None) => "none (no checkpoint was written)".to_string(),
        Err(e) => format!("unknown ({e:#})"),
    }
}

struct LoopContext<'a> {
    config: &'a TrainConfig,
    run: &'a RunDir,
    network: &'a SelfplayNet,
    stats: &'a SelfplayStats,
    pause: &'a AtomicBool,
    failure: &'a WorkerFailure,
    device: DeviceKind,
    /// Simulations and moves counted by earlier processes of this run (before a resume).
    base_sims_moves: (u64, u64),
    /// Self-play threads in this process (0: games come only through the broker).
    local_workers: usize,
}

/// Why the learner loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The step or time limit was reached.
    Done,
    /// Ctrl-C.
    Interrupted,
    /// A self-play worker failed; `diverged` when it saw the network output NaN or infinity.
    WorkerFailed { diverged: bool },
    /// Every worker stopped without an error (should not happen while the learner runs).
    WorkersGone,
}

fn log(tb: &mut Option<TensorBoard>, tag: &str, value: f64, step: u64) -> anyhow::Result<()> {
    match tb.as_mut() {
        Some(tb) => tb.scalar(tag, value, step),
        None => Ok(()),
    }
}

/// Why the run must stop now, if it must.
fn stop_reason(ctx: &LoopContext<'_>, step: u64, elapsed_secs: f64) -> Option<End> {
    let sched = &ctx.config.schedule;
    if ctx.failure.is_set() {
        return Some(End::WorkerFailed {
            diverged: ctx.failure.is_divergence(),
        });
    }
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Some(End::Interrupted);
    }
    let steps_done = sched.step_limit().is_some_and(|limit| step >= limit);
    let time_up = sched.minutes > 0.0 && elapsed_secs >= sched.minutes * 60.0;
    (steps_done || time_up).then_some(End::Done)
}

/// The error of a diverged run: nothing of it is saved.
fn diverged(ctx: &LoopContext<'_>, step: u64, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "training diverged at step {step}: {what}; the diverged weights were not saved, the last \
         good checkpoint is {} (resume from it with a lower schedule.lr)",
        last_good(ctx.run)
    )
}

fn learner_loop(
    ctx: &LoopContext<'_>,
    state: &mut State,
    rx: &Receiver<GameRecord>,
    tb: &mut Option<TensorBoard>,
    progress: &mut Progress,
    seed: u64,
    broker: &mut Option<LearnerBroker>,
) -> anyhow::Result<End> {
    let config = ctx.config;
    let sched = &config.schedule;
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5EED);
    let started = Instant::now();
    let elapsed_before = state.counters.elapsed_secs;
    let elapsed = || elapsed_before + started.elapsed().as_secs_f64();
    let mut window = RateWindow::new(ctx.stats);
    let mut game_plies: Vec<u32> = Vec::new();
    let mut last_checkpoint_step = state.meta.step;
    let mut last_eval_step = state.meta.step;
    let mut last_broker_report = Instant::now();
    let end = loop {
        // Drain finished games.
        let mut got_any = false;
        while let Ok(record) = rx.try_recv() {
            got_any = true;
            ingest(state, record, &mut game_plies);
        }
        if let Some(b) = broker.as_mut() {
            got_any |= b.poll(Duration::ZERO, &mut |r| ingest(state, r, &mut game_plies)) > 0;
            for note in b.take_notes() {
                progress.note(&note);
            }
        }
        // Many games wait for a checkpoint to be acknowledged: write one now (the broker
        // stops reading at twice as many).
        if broker.as_ref().is_some_and(|b| b.needs_checkpoint())
            && state.meta.step > last_checkpoint_step
        {
            state.counters.elapsed_secs = elapsed();
            checkpoint(ctx, state, broker)?;
            last_checkpoint_step = state.meta.step;
        }
        if let Some(end) = stop_reason(ctx, state.meta.step, elapsed()) {
            break end;
        }
        let allowed = (state.counters.new_samples as f64 * sched.samples_per_position) as u64;
        let can_train = state.replay.len() >= config.replay.min_samples.max(1)
            && state.counters.trained_samples + sched.batch_size as u64 <= allowed;
        if !can_train {
            if !got_any {
                match broker.as_mut() {
                    // Only broker games: wait for them (they are taken at the top of the loop).
                    Some(b) if ctx.local_workers == 0 => {
                        b.poll(Duration::from_millis(200), &mut |r| {
                            ingest(state, r, &mut game_plies)
                        });
                        if last_broker_report.elapsed() >= Duration::from_secs(5) {
                            progress.set_suffix(&b.report().line());
                            last_broker_report = Instant::now();
                        }
                    }
                    _ => match rx.recv_timeout(Duration::from_millis(200)) {
                        Ok(record) => ingest(state, record, &mut game_plies),
                        Err(RecvTimeoutError::Timeout) => {}
                        // A failed worker is seen at the top of the loop.
                        Err(RecvTimeoutError::Disconnected) if ctx.failure.is_set() => {}
                        Err(RecvTimeoutError::Disconnected) => break End::WorkersGone,
                    },
                }
            }
            progress.waiting(
                state.replay.len(),
                config.replay.min_samples,
                &window.rates(state.counters.new_samples),
            );
            continue;
        }
        let step = state.meta.step;
        let samples = state.replay.sample(sched.batch_size, &mut rng);
        let batch = to_batch(&samples);
        let lr = sched.lr_at(step, sched.progress(step, elapsed()));
        let losses = match state.learner.step(&batch, lr) {
            Ok(losses) => losses,
            Err(TrainError::NonFiniteLoss(l)) => {
                return Err(diverged(
                    ctx,
                    step + 1,
                    &format!(
                        "the loss is not finite (total {}, policy {}, value {}, margin {})",
                        l.total, l.policy, l.value, l.margin
                    ),
                ));
            }
            Err(e) => return Err(e).context(format!("learner step {}", step + 1)),
        };
        state.meta.step += 1;
        state.counters.trained_samples += batch.positions.len() as u64;
        let step = state.meta.step;
        if step.is_multiple_of(sched.sync_every_steps) {
            let net = state.learner.evaluator();
            if let Some(b) = broker.as_mut() {
                b.publish(&net, config)
                    .with_context(|| format!("publishing the weights of step {step}"))?;
            }
            ctx.network.publish(net);
        }
        if step.is_multiple_of(config.log.every_steps) {
            let rates = window.rates(state.counters.new_samples);
            let mean_plies = if game_plies.is_empty() {
                0.0
            } else {
                game_plies.iter().map(|&p| p as f64).sum::<f64>() / game_plies.len() as f64
            };
            game_plies.clear();
            if let Some(b) = broker.as_mut() {
                let report = b.report();
                log_broker(tb, &report, step)?;
                progress.set_suffix(&report.line());
                last_broker_report = Instant::now();
            }
            for (tag, v) in [
                ("loss/total", losses.total as f64),
                ("loss/policy", losses.policy as f64),
                ("loss/value", losses.value as f64),
                ("loss/margin", losses.margin as f64),
                ("train/lr", lr),
                ("selfplay/positions_per_sec", rates.positions_per_sec),
                ("selfplay/games_per_sec", rates.games_per_sec),
                ("selfplay/sims_per_sec", rates.sims_per_sec),
                ("selfplay/mean_game_plies", mean_plies),
                ("replay/size", state.replay.len() as f64),
                (
                    "train/samples_per_position",
                    state.counters.trained_samples as f64
                        / state.counters.new_samples.max(1) as f64,
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
                    "selfplay/rescored",
                    ctx.stats.rescored.load(Ordering::Relaxed) as f64,
                ),
            ] {
                log(tb, tag, v, step)?;
            }
            progress.step(step, &losses, &rates, elapsed(), state.meta.games);
        }
        if let Some(tb) = tb
            .as_mut()
            .filter(|_| step.is_multiple_of(config.log.every_steps * 10))
        {
            tb.flush()?;
        }
        // The end of the run evaluates and checkpoints below, once.
        if let Some(end) = stop_reason(ctx, step, elapsed()) {
            break end;
        }
        let eval_due = config.eval.every_steps > 0 && step.is_multiple_of(config.eval.every_steps);
        if eval_due {
            state.counters.elapsed_secs = elapsed();
            evaluate(ctx, state, tb, progress)?;
            last_eval_step = step;
        }
        if eval_due || step - last_checkpoint_step >= sched.checkpoint_every_steps {
            state.counters.elapsed_secs = elapsed();
            checkpoint(ctx, state, broker)?;
            last_checkpoint_step = step;
        }
    };
    finish(
        ctx,
        state,
        rx,
        tb,
        progress,
        end,
        (last_checkpoint_step, last_eval_step),
        elapsed(),
        broker,
    )?;
    Ok(end)
}

/// The end of the run: the final evaluation (a normal end only) and checkpoint (unless the
/// network diverged, or the step has its checkpoint already).
#[allow(clippy::too_many_arguments)]
fn finish(
    ctx: &LoopContext<'_>,
    state: &mut State,
    rx: &Receiver<GameRecord>,
    tb: &mut Option<TensorBoard>,
    progress: &mut Progress,
    end: End,
    (last_checkpoint_step, last_eval_step): (u64, u64),
    elapsed_secs: f64,
    broker: &mut Option<LearnerBroker>,
) -> anyhow::Result<()> {
    let step = state.meta.step;
    if end == (End::WorkerFailed { diverged: true }) {
        return Ok(());
    }
    let saves = step > last_checkpoint_step;
    if saves {
        // The games finished so far go into the final checkpoint with their counts.
        while let Ok(record) = rx.try_recv() {
            ingest(state, record, &mut Vec::new());
        }
        if let Some(b) = broker.as_mut() {
            b.poll(Duration::ZERO, &mut |r| ingest(state, r, &mut Vec::new()));
        }
    }
    state.counters.elapsed_secs = elapsed_secs;
    if end == End::Done && ctx.config.eval.every_steps > 0 && step > last_eval_step {
        // If the step was checkpointed already (the limit came while the learner waited right
        // after a checkpoint), the evaluation is in eval.jsonl and TensorBoard only.
        evaluate(ctx, state, tb, progress)?;
    }
    if saves {
        checkpoint(ctx, state, broker)?;
    }
    progress.note(&format!(
        "stopped at step {step} after {:.1} min; {} self-play games; latest checkpoint {}",
        state.counters.elapsed_secs / 60.0,
        state.meta.games,
        last_good(ctx.run)
    ));
    Ok(())
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

fn ingest(state: &mut State, record: GameRecord, plies: &mut Vec<u32>) {
    state.meta.games += 1;
    state.meta.positions += record.samples.len() as u64;
    state.counters.new_samples += record.samples.len() as u64;
    plies.push(record.moves.len() as u32);
    state.replay.extend(record.samples);
}

fn to_batch(samples: &[Sample]) -> TrainBatch {
    TrainBatch {
        positions: samples.iter().map(|s| s.position).collect(),
        policy: samples.iter().map(|s| s.policy).collect(),
        value: samples.iter().map(|s| s.value).collect(),
        margin: samples.iter().map(|s| s.margin).collect(),
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
        crate::report::read_eval_lines(&ctx.run.eval_log())?
    };
    let mut rated: Vec<EvalLine> = Vec::new();
    {
        let mut on_match = |line: &EvalLine, note: &str| -> anyhow::Result<()> {
            progress.note(note);
            let mut line = line.clone();
            if !anchor.is_empty() {
                history.push(line.clone());
                match crate::anchor::anchor_elo(&history, &anchor, step) {
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
