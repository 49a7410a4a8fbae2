//! `oware selfplay`: self-play only, writing game records; the benchmark of the self-play
//! engine and the building block for self-play on other machines.

use super::device::parse_device;
use oware_engine::bounds::MAX_GAMES;
use oware_model::DeviceKind;
use oware_report::status::StatusLine;
use oware_trainer::TrainConfig;
use oware_trainer::selfplay_records::{SelfplayJob, run_selfplay};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware selfplay`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The network: a checkpoint folder, a run directory (its latest checkpoint), or `fresh` for
    /// an untrained network of the config's [model] shape.
    #[arg(long, value_name = "PATH")]
    model: String,
    /// Games to play, at most 100000.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=u64::from(MAX_GAMES)), required_unless_present = "seconds")]
    games: Option<u64>,
    /// Stop after this many seconds (the games still in flight are not recorded); a throughput
    /// measurement: the rates count every move played.
    #[arg(long, value_parser = parse_seconds)]
    seconds: Option<f64>,
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

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("'{s}' is not a number of seconds > 0")),
    }
}

/// Runs `oware selfplay`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let job = SelfplayJob {
        config: TrainConfig::load(args.config.as_deref(), &args.sets)?,
        model: args.model,
        games: args.games,
        seconds: args.seconds,
        out: args.out,
        device: args.device,
    };
    let status = match job.games {
        Some(n) => StatusLine::counter(n, "games", false),
        None => StatusLine::fraction(false),
    };
    let summary = run_selfplay(&job, &status)?;
    if args.json {
        println!("{}", summary.json());
    } else {
        println!("{}", summary.text());
    }
    Ok(ExitCode::SUCCESS)
}
