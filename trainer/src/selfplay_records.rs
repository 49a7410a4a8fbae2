//! Self-play only (`oware selfplay`): a network plays games with the run's `[mcts]` and
//! `[selfplay]` settings and every finished game is written to `games.txt`; the benchmark of
//! the self-play engine and the building block for self-play on other machines.

use crate::TrainConfig;
use crate::inference::SelfplayNet;
use crate::selfplay::{GameRecord, SelfplayStats, WorkerControl};
use anyhow::Context;
use oware_engine::record::format_line;
use oware_model::{DeviceKind, NetEvaluator};
use oware_players::load_network;
use oware_report::status::StatusLine;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// What to play.
#[derive(Clone, Debug)]
pub struct SelfplayJob {
    /// The network: a checkpoint folder, a run directory (its latest checkpoint), or `fresh`
    /// for an untrained network of the config's `[model]` shape.
    pub model: String,
    /// Games to play (`None`: until `seconds`).
    pub games: Option<u64>,
    /// Stop after this many seconds (the games still in flight are not recorded).
    pub seconds: Option<f64>,
    /// Folder for `games.txt`.
    pub out: PathBuf,
    /// The settings (`[mcts]`, `[selfplay]`, `[model]` for `fresh`, `[schedule] seed`).
    pub config: TrainConfig,
    /// Device for the network.
    pub device: DeviceKind,
}

/// The figures of a finished self-play job: [`SelfplaySummary::json`] is `oware selfplay
/// --json`'s object.
#[derive(Clone, Debug)]
pub struct SelfplaySummary {
    json: Value,
    text: String,
}

impl SelfplaySummary {
    /// The JSON object.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The summary in words (two lines).
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The record line of a finished game: the engine's record format (as `oware pit --record`
/// writes it), without the players.
pub fn record_line(record: &GameRecord) -> String {
    format_line(&record.moves, Some(&record.result), None)
}

/// Plays `job`, showing progress on `status` (a counter of games with a game budget, else a
/// fraction of the time).
pub fn run_selfplay(job: &SelfplayJob, status: &StatusLine) -> anyhow::Result<SelfplaySummary> {
    let (config, args) = (&job.config, job);
    let evaluator = if args.model == "fresh" {
        NetEvaluator::random(&config.model, &oware_model::device(args.device)?)
    } else {
        let net = load_network(Path::new(&args.model), args.device)?;
        (*net).clone()
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let path = args.out.join("games.txt");
    let file =
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let workers = config.selfplay.worker_count();
    let network = SelfplayNet::start(config, args.device, evaluator)?;
    let stats = SelfplayStats::default();
    let stop = AtomicBool::new(false);
    let pause = AtomicBool::new(false);
    let left = AtomicU64::new(args.games.unwrap_or(0));
    let control = WorkerControl {
        stop: &stop,
        pause: &pause,
        games_left: args.games.is_some().then_some(&left),
    };
    let wanted = match args.games {
        Some(n) => n.to_string(),
        None => "?".to_string(),
    };
    let time_limit = args.seconds.map(Duration::from_secs_f64);
    let mut started = Instant::now();
    let mut positions = 0u64;
    let mut plies = 0u64;
    let mut games = 0u64;
    let mut write_error: Option<anyhow::Error> = None;
    let seed = config.schedule.seed;
    let ((), failure) = network.with_workers(config, &stats, &control, seed, |rx, _| {
        // The clock starts with the workers, after the endgame tables are loaded (the first
        // `selfplay.egtb = "auto"` builds them), so the time limit and the rates are self-play's.
        started = Instant::now();
        // Ends when every worker has stopped: its budget played, the time is up, or one
        // failed (which stops the others).
        loop {
            let record = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(record) => record,
                Err(RecvTimeoutError::Timeout) => {
                    if time_limit.is_some_and(|limit| started.elapsed() >= limit) {
                        stop.store(true, Ordering::SeqCst);
                    }
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            if time_limit.is_some_and(|limit| started.elapsed() >= limit) {
                stop.store(true, Ordering::SeqCst);
            }
            games += 1;
            positions += record.samples.len() as u64;
            plies += record.moves.len() as u64;
            if write_error.is_some() {
                continue;
            }
            if let Err(e) = writeln!(out, "{}", record_line(&record)) {
                write_error = Some(anyhow::anyhow!("writing {}: {e}", path.display()));
                stop.store(true, Ordering::SeqCst);
            }
            let secs = started.elapsed().as_secs_f64().max(1e-9);
            let msg = format!(
                "{games}/{wanted} games, {:.0} positions/s",
                positions as f64 / secs
            );
            match (args.games, time_limit) {
                (Some(_), _) => status.inc(1, msg),
                (None, Some(limit)) => status.set_fraction(secs / limit.as_secs_f64(), msg),
                (None, None) => status.message(msg),
            }
        }
    })?;
    status.finish();
    if let Some(e) = failure {
        // The games finished before the failure are kept.
        out.flush()
            .with_context(|| format!("writing {}", path.display()))?;
        return Err(e.context(format!(
            "self-play stopped after {games} of {wanted} games (their records are in {})",
            path.display()
        )));
    }
    if let Some(e) = write_error {
        return Err(e);
    }
    out.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    let sims = stats.sims.load(Ordering::Relaxed);
    let evals = stats.evals.load(Ordering::Relaxed);
    let batches = stats.batches.load(Ordering::Relaxed).max(1);
    // Rates count every searched move, also those of games cut off by --seconds (with a game
    // budget every game ends, and these equal the counts of the recorded games).
    let searched = stats.positions.load(Ordering::Relaxed);
    let moves = stats.moves.load(Ordering::Relaxed);
    let merged = network
        .service_stats()
        .map_or(evals as f64 / batches as f64, |s| s.mean_batch());
    let summary = json!({
        "games": games,
        "positions": positions,
        "plies": plies,
        "seconds": (secs * 1000.0).round() / 1000.0,
        "positions_per_sec": searched as f64 / secs,
        "moves_per_sec": moves as f64 / secs,
        "sims_per_sec": sims as f64 / secs,
        "evals_per_sec": evals as f64 / secs,
        "mean_batch": evals as f64 / batches as f64,
        "table_games": stats.table_games.load(Ordering::Relaxed),
        "table_plies": stats.table_plies.load(Ordering::Relaxed),
        "table_gave_up": stats.table_gave_up.load(Ordering::Relaxed),
        "rescored": stats.rescored.load(Ordering::Relaxed),
        "inference": network.mode().name(),
        "mean_network_batch": merged,
        "device": args.device.name(),
        "workers": workers,
        "games_per_worker": config.selfplay.games_per_worker,
        "sims_per_move": config.mcts.sims,
        "records": path.display().to_string(),
    });
    let text = format!(
        "{games} games, {positions} positions ({plies} plies) in {secs:.1} s: {:.0} positions/s, {:.0} moves/s, {:.0} simulations/s, {:.0} evaluations/s, mean batch {:.1} per worker call, {:.1} per network call ({} inference)\nrecords in {}",
        searched as f64 / secs,
        moves as f64 / secs,
        sims as f64 / secs,
        evals as f64 / secs,
        evals as f64 / batches as f64,
        merged,
        network.mode().name(),
        path.display()
    );
    Ok(SelfplaySummary {
        json: summary,
        text,
    })
}
