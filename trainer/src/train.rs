//! `oware train`: the learner loop. Self-play workers run in a rayon pool in the background;
//! this thread drains their games into the replay buffer, trains, hands new weights to the
//! workers, logs, evaluates and writes checkpoints. A killed run resumes from `latest`.

use crate::config::TrainConfig;
use crate::eval::{EvalContext, run_evaluation};
use crate::progress::Progress;
use crate::rates::RateWindow;
use crate::replay::Sample;
use crate::rundir::RunDir;
use crate::selfplay::{GameRecord, SelfplayStats, SharedWeights, WorkerControl, run_worker};
use crate::state::{State, fresh_state, load_state, save_state};
use crate::tensorboard::TensorBoard;
use anyhow::Context;
use oware_model::{DeviceKind, TrainBatch};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::path::{Path, PathBuf};
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
}

/// Set by Ctrl-C: finish the current step, checkpoint and exit.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once per process).
pub fn install_ctrl_c() -> anyhow::Result<()> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))
        .context("installing the Ctrl-C handler")
}

/// Runs `oware train` to its end (time or step limit, or Ctrl-C).
pub fn train(opts: &TrainOptions) -> anyhow::Result<()> {
    let run = RunDir::new(&opts.run);
    let config = if opts.resume {
        let path = run.config();
        if !path.is_file() {
            anyhow::bail!("cannot resume: {} does not exist", path.display());
        }
        TrainConfig::load(Some(&path), &opts.sets)?
    } else {
        if run.latest()?.is_some() {
            anyhow::bail!(
                "{} already holds a run; continue it with `oware train --resume {}` or choose another --run",
                run.root().display(),
                run.root().display()
            );
        }
        TrainConfig::load(opts.config.as_deref(), &opts.sets)?
    };
    run.create()?;
    crate::rundir::write_atomic(&run.config(), config.to_toml()?.as_bytes())?;
    let device = oware_model::device(opts.device)?;
    let mut state = if opts.resume {
        load_state(&run, &config, &device)?
    } else {
        fresh_state(&config, &device)
    };
    state.counters.starts += 1;
    let mut tb = if config.log.tensorboard {
        Some(TensorBoard::create(run.root())?)
    } else {
        None
    };
    let workers = config.selfplay.worker_count();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .thread_name(|i| format!("selfplay-{i}"))
        .build()
        .context("starting the self-play threads")?;
    let weights = SharedWeights::new(state.learner.evaluator());
    let stats = SelfplayStats::default();
    let stop = AtomicBool::new(false);
    let pause = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<GameRecord>();
    let seed = config
        .schedule
        .seed
        .wrapping_mul(1_000_003)
        .wrapping_add(state.counters.starts);
    let mut progress = Progress::new(opts.quiet, &config, state.meta.step);
    progress.note(&format!(
        "{} run {} on {} with {workers} self-play workers x {} games; network {} parameters",
        if opts.resume { "resuming" } else { "starting" },
        run.root().display(),
        opts.device.name(),
        config.selfplay.games_per_worker,
        config.model.num_params()
    ));
    let outcome = pool.in_place_scope(|scope| {
        for w in 0..workers {
            let tx = tx.clone();
            let (config, weights, stats, stop, pause) = (&config, &weights, &stats, &stop, &pause);
            scope.spawn(move |_| {
                let control = WorkerControl {
                    stop,
                    pause,
                    games_left: None,
                };
                if let Err(e) = run_worker(
                    config,
                    weights,
                    stats,
                    &control,
                    &tx,
                    seed ^ (w as u64 + 1) << 32,
                ) {
                    eprintln!("self-play worker {w} failed: {e:#}");
                    stop.store(true, Ordering::SeqCst);
                }
            });
        }
        drop(tx);
        let ctx = LoopContext {
            config: &config,
            run: &run,
            weights: &weights,
            stats: &stats,
            pause: &pause,
            stop: &stop,
            device: opts.device,
            base_sims_moves: (state.counters.sims, state.counters.moves),
        };
        let result = learner_loop(&ctx, &mut state, &rx, &mut tb, &mut progress, seed);
        stop.store(true, Ordering::SeqCst);
        result
    });
    progress.finish();
    if let Some(tb) = tb.as_mut() {
        tb.flush()?;
    }
    outcome
}

struct LoopContext<'a> {
    config: &'a TrainConfig,
    run: &'a RunDir,
    weights: &'a SharedWeights,
    stats: &'a SelfplayStats,
    pause: &'a AtomicBool,
    stop: &'a AtomicBool,
    device: DeviceKind,
    /// Simulations and moves counted by earlier processes of this run (before a resume).
    base_sims_moves: (u64, u64),
}

fn log(tb: &mut Option<TensorBoard>, tag: &str, value: f64, step: u64) -> anyhow::Result<()> {
    match tb.as_mut() {
        Some(tb) => tb.scalar(tag, value, step),
        None => Ok(()),
    }
}

fn learner_loop(
    ctx: &LoopContext<'_>,
    state: &mut State,
    rx: &Receiver<GameRecord>,
    tb: &mut Option<TensorBoard>,
    progress: &mut Progress,
    seed: u64,
) -> anyhow::Result<()> {
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
    loop {
        // Drain finished games.
        let mut got_any = false;
        while let Ok(record) = rx.try_recv() {
            got_any = true;
            ingest(state, record, &mut game_plies);
        }
        let step = state.meta.step;
        let time_up = sched.minutes > 0.0 && elapsed() >= sched.minutes * 60.0;
        let interrupted = INTERRUPTED.load(Ordering::SeqCst);
        let failed = ctx.stop.load(Ordering::SeqCst);
        if step >= sched.max_steps || time_up || interrupted || failed {
            if failed && !interrupted {
                anyhow::bail!("self-play stopped unexpectedly");
            }
            break;
        }
        let allowed = (state.counters.new_samples as f64 * sched.samples_per_position) as u64;
        let can_train = state.replay.len() >= config.replay.min_samples.max(1)
            && state.counters.trained_samples + sched.batch_size as u64 <= allowed;
        if !can_train {
            if !got_any {
                match rx.recv_timeout(Duration::from_millis(200)) {
                    Ok(record) => ingest(state, record, &mut game_plies),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        anyhow::bail!("all self-play workers stopped")
                    }
                }
            }
            progress.waiting(
                state.replay.len(),
                config.replay.min_samples,
                &window.rates(state.counters.new_samples),
            );
            continue;
        }
        let samples = state.replay.sample(sched.batch_size, &mut rng);
        let batch = to_batch(&samples);
        let lr = sched.lr_at(step, sched.progress(step, elapsed()));
        let losses = state.learner.step(&batch, lr)?;
        state.meta.step += 1;
        state.counters.trained_samples += batch.positions.len() as u64;
        let step = state.meta.step;
        if step.is_multiple_of(sched.sync_every_steps) {
            ctx.weights.set(state.learner.evaluator());
        }
        if step.is_multiple_of(config.log.every_steps) {
            let rates = window.rates(state.counters.new_samples);
            let mean_plies = if game_plies.is_empty() {
                0.0
            } else {
                game_plies.iter().map(|&p| p as f64).sum::<f64>() / game_plies.len() as f64
            };
            game_plies.clear();
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
            ] {
                log(tb, tag, v, step)?;
            }
            progress.step(step, &losses, &rates, elapsed(), state.meta.games);
        }
        if config.eval.every_steps > 0 && step.is_multiple_of(config.eval.every_steps) {
            // Evaluation needs a checkpoint to name; write one first.
            state.counters.elapsed_secs = elapsed();
            let dir = checkpoint(ctx, state)?;
            last_checkpoint_step = step;
            last_eval_step = step;
            evaluate(ctx, state, &dir, tb, progress)?;
        } else if step - last_checkpoint_step >= sched.checkpoint_every_steps {
            state.counters.elapsed_secs = elapsed();
            checkpoint(ctx, state)?;
            last_checkpoint_step = step;
        }
        if let Some(tb) = tb
            .as_mut()
            .filter(|_| step.is_multiple_of(config.log.every_steps * 10))
        {
            tb.flush()?;
        }
    }
    // Final checkpoint (and evaluation, unless the last step just had one).
    ctx.stop.store(true, Ordering::SeqCst);
    while let Ok(record) = rx.try_recv() {
        ingest(state, record, &mut game_plies);
    }
    state.counters.elapsed_secs = elapsed();
    let dir = checkpoint(ctx, state)?;
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    if config.eval.every_steps > 0 && !interrupted && state.meta.step > last_eval_step {
        evaluate(ctx, state, &dir, tb, progress)?;
    }
    progress.note(&format!(
        "stopped at step {} after {:.1} min; {} self-play games; latest checkpoint in {}",
        state.meta.step,
        state.counters.elapsed_secs / 60.0,
        state.meta.games,
        ctx.run.checkpoints().display()
    ));
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

fn evaluate(
    ctx: &LoopContext<'_>,
    state: &mut State,
    checkpoint_dir: &Path,
    tb: &mut Option<TensorBoard>,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    ctx.pause.store(true, Ordering::SeqCst);
    let eval_ctx = EvalContext {
        config: &ctx.config.eval,
        checkpoint: checkpoint_dir,
        previous: state
            .counters
            .previous_eval_checkpoint
            .as_deref()
            .map(Path::new),
        step: state.meta.step,
        elapsed_secs: state.counters.elapsed_secs,
        games: state.meta.games,
        device: ctx.device,
        seed: ctx.config.schedule.seed ^ state.meta.step,
    };
    let result = run_evaluation(&eval_ctx, &mut |msg| progress.note(msg));
    ctx.pause.store(false, Ordering::SeqCst);
    let lines = result?;
    for line in &lines {
        ctx.run.append_eval(&line.to_json())?;
        log(
            tb,
            &format!("eval/{}/score", line.opponent_tag()),
            line.score,
            state.meta.step,
        )?;
        log(
            tb,
            &format!("eval/{}/elo", line.opponent_tag()),
            line.elo,
            state.meta.step,
        )?;
        progress.eval(line);
    }
    if let Some(tb) = tb.as_mut() {
        tb.flush()?;
    }
    state.meta.last_eval = serde_json::Value::Array(lines.iter().map(|l| l.to_json()).collect());
    state.counters.previous_eval_checkpoint = Some(checkpoint_dir.display().to_string());
    // Store the evaluation in the checkpoint's meta.json too.
    checkpoint(ctx, state)?;
    Ok(())
}

/// Checkpoints the run, recording the self-play simulation and move counts first.
fn checkpoint(ctx: &LoopContext<'_>, state: &mut State) -> anyhow::Result<PathBuf> {
    let (sims, moves) = ctx.base_sims_moves;
    state.counters.sims = sims + ctx.stats.sims.load(Ordering::Relaxed);
    state.counters.moves = moves + ctx.stats.moves.load(Ordering::Relaxed);
    save_state(ctx.run, state, ctx.config.schedule.keep_checkpoints)
}
