//! `oware bench`: the network's throughput on a device: evaluations/s of the inference service
//! (several callers' batches merged into one forward pass) and of the direct path at chosen
//! batch sizes, and learner steps/s at the config's learner batch. The figures of the GPU check
//! script (`scripts/gpu-check.sh`).

use super::device::parse_device;
use oware_model::DeviceKind;
use oware_trainer::TrainConfig;
use oware_trainer::bench::{BenchPlan, run_bench};
use std::process::ExitCode;

/// Arguments of `oware bench`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// Device for the network.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
    /// Config file: the network shape ([model]), the learner batch (schedule.batch_size) and
    /// the optimizer; defaults otherwise.
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Override one config key (repeatable), e.g. --set model.hidden=512.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    sets: Vec<String>,
    /// Merged batch sizes to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "256,1024,4096",
          value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    batches: Vec<u32>,
    /// Callers submitting to the service at once; each submits batch/callers positions.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    callers: u32,
    /// Seconds of measurement per batch size and path (after a warm-up).
    #[arg(long, default_value_t = 3.0, value_parser = parse_seconds)]
    seconds: f64,
    /// Seconds of learner steps (0 skips the learner).
    #[arg(long, default_value_t = 5.0, value_parser = parse_seconds_or_zero)]
    learner_seconds: f64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("'{s}' is not a number of seconds > 0")),
    }
}

fn parse_seconds_or_zero(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("'{s}' is not a number of seconds >= 0")),
    }
}

/// Runs `oware bench`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = TrainConfig::load(args.config.as_deref(), &args.sets)?;
    let plan = BenchPlan {
        batches: args.batches.iter().map(|&b| b as usize).collect(),
        callers: args.callers as usize,
        seconds: args.seconds,
        learner_seconds: args.learner_seconds,
    };
    // The human lines go to stdout, or to stderr beside the JSON object.
    let json_mode = args.json;
    let say = |line: String| {
        if json_mode {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let figures = run_bench(&config, args.device, &plan, &say)?;
    if args.json {
        println!("{figures}");
    }
    Ok(ExitCode::SUCCESS)
}
