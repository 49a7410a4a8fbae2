//! `oware train`: open the run ([`open`]), start the self-play workers (a thread pool in the
//! background) and the broker, then run the learner loop on this thread ([`learn`]: ingest,
//! learn, sync, log, evaluate, checkpoint, finish, as [`schedule`] decides), and shut down. A
//! killed run resumes from `latest`.
//!
//! Checkpoints and kills: a step is checkpointed at most once, in a new folder that appears
//! complete or not at all, and `latest` is moved to it afterwards; a complete checkpoint is never
//! modified. An evaluation runs *before* the checkpoint of its step (on the learner's weights in
//! memory), so that checkpoint's `meta.json` holds it; its lines go to `eval.jsonl` as each
//! match ends. A kill at any moment therefore leaves `latest` naming a complete checkpoint;
//! evaluation lines of steps after it (a kill between an evaluation and its checkpoint) are
//! dropped when the run resumes, and that step is evaluated again.

mod learn;
mod open;
mod schedule;

use crate::broker::BrokerUrl;
use crate::broker::learner::{LearnerBroker, Start};
use crate::config::TrainConfig;
use crate::inference::SelfplayNet;
use crate::rundir::RunDir;
use crate::selfplay::{GameRecord, SelfplayStats, WorkerControl, WorkerFailure};
use crate::tensorboard::TensorBoard;
use anyhow::Context;
use learn::{Learning, LoopContext, last_good};
use open::{OpenRun, open_run};
use oware_model::DeviceKind;
use oware_report::train_status::Progress;
use schedule::End;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;

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
    crate::broker::run_name_of(&run.root().to_string_lossy()).map_err(|e| {
        anyhow::anyhow!(
            "{e:#}; with --broker the run directory's name ({}) names the run for the workers",
            run.root().display()
        )
    })
}

/// Set by Ctrl-C: finish the current step, checkpoint and exit.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

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
    let OpenRun {
        run,
        config,
        mut state,
        notes,
    } = open_run(opts)?;
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
    let mut progress = Progress::new(
        opts.quiet,
        config.schedule.step_limit(),
        config.schedule.minutes,
        state.meta.step,
    );
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
        Learning::new(
            &ctx,
            &mut state,
            rx,
            &mut tb,
            &mut progress,
            &mut broker,
            seed,
        )
        .run()
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
