//! `oware selfplay`: self-play only, writing game records; the benchmark of the self-play
//! engine and the building block for self-play on other machines.

use super::device::parse_device;
use anyhow::Context;
use oware_engine::limits::MAX_GAMES;
use oware_engine::record::format_line;
use oware_model::{DeviceKind, NetEvaluator};
use oware_players::load_network;
use oware_trainer::TrainConfig;
use oware_trainer::progress::StatusLine;
use oware_trainer::selfplay::{
    GameRecord, SelfplayStats, SharedWeights, WorkerControl, with_workers,
};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Arguments of `oware selfplay`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The network: a checkpoint folder, a run directory (its latest checkpoint), or `fresh` for
    /// an untrained network of the config's [model] shape.
    #[arg(long, value_name = "PATH")]
    model: String,
    /// Games to play, at most 100000.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=u64::from(MAX_GAMES)))]
    games: u64,
    /// Folder for the records (`games.txt`: one game per line, moves then a tab and the result).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Config file for [mcts] and [selfplay] (defaults otherwise).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override one config key (repeatable), e.g. --set mcts.sims=100.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    sets: Vec<String>,
    /// Device for the network.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

/// The record line of a finished game: the engine's record format (as `oware pit --record`
/// writes it), without the players.
pub fn record_line(record: &GameRecord) -> String {
    format_line(&record.moves, Some(&record.result), None)
}

/// Runs `oware selfplay`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = TrainConfig::load(args.config.as_deref(), &args.sets)?;
    let evaluator = if args.model == "fresh" {
        NetEvaluator::random(&config.model, &oware_model::device(args.device)?)
    } else {
        let net = load_network(std::path::Path::new(&args.model), args.device)?;
        (*net).clone()
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let path = args.out.join("games.txt");
    let file =
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let workers = config.selfplay.worker_count();
    let weights = SharedWeights::new(evaluator);
    let stats = SelfplayStats::default();
    let stop = AtomicBool::new(false);
    let pause = AtomicBool::new(false);
    let left = AtomicU64::new(args.games);
    let control = WorkerControl {
        stop: &stop,
        pause: &pause,
        games_left: Some(&left),
    };
    let started = Instant::now();
    let status = StatusLine::counter(args.games, "games", false);
    let mut positions = 0u64;
    let mut plies = 0u64;
    let mut games = 0u64;
    let mut write_error: Option<anyhow::Error> = None;
    let seed = config.schedule.seed;
    let ((), failure) = with_workers(&config, &weights, &stats, &control, seed, |rx, _| {
        // Ends when every worker has stopped: its budget played, or one failed (which stops
        // the others).
        for record in rx {
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
            status.inc(1, format!("{:.0} positions/s", positions as f64 / secs));
        }
    })?;
    status.finish();
    if let Some(e) = failure {
        // The games finished before the failure are kept.
        out.flush()
            .with_context(|| format!("writing {}", path.display()))?;
        return Err(e.context(format!(
            "self-play stopped after {games} of {} games (their records are in {})",
            args.games,
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
    let summary = json!({
        "games": games,
        "positions": positions,
        "plies": plies,
        "seconds": (secs * 1000.0).round() / 1000.0,
        "positions_per_sec": positions as f64 / secs,
        "moves_per_sec": plies as f64 / secs,
        "sims_per_sec": sims as f64 / secs,
        "evals_per_sec": evals as f64 / secs,
        "mean_batch": evals as f64 / batches as f64,
        "table_games": stats.table_games.load(Ordering::Relaxed),
        "table_plies": stats.table_plies.load(Ordering::Relaxed),
        "rescored": stats.rescored.load(Ordering::Relaxed),
        "workers": workers,
        "games_per_worker": config.selfplay.games_per_worker,
        "sims_per_move": config.mcts.sims,
        "records": path.display().to_string(),
    });
    if args.json {
        println!("{summary}");
    } else {
        println!(
            "{games} games, {positions} positions ({plies} plies) in {secs:.1} s: {:.0} positions/s, {:.0} simulations/s, {:.0} evaluations/s, mean batch {:.1}",
            positions as f64 / secs,
            sims as f64 / secs,
            evals as f64 / secs,
            evals as f64 / batches as f64
        );
        println!("records in {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
