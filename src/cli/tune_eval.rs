//! `oware tune-eval`: fits the alpha-beta evaluation's weights to the results of recorded
//! games (the Texel method, `oware_search::alphabeta::tune`) and writes a weights file that
//! `alphabeta:...,eval=FILE` loads (`docs/alphabeta.md#fitting-the-evaluation`).

use anyhow::Context;
use oware_search::alphabeta::EvalWeights;
use oware_search::alphabeta::tune::{SampleOptions, fit, samples_from_records, weights_log_loss};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware tune-eval`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Record files (`oware pit --record`, a self-play run's `games.txt`): one game per line
    /// with its result.
    #[arg(required = true)]
    records: Vec<PathBuf>,
    /// Write the fitted weights to FILE (a weights file, `docs/alphabeta.md`).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Leave out the positions of each game's first N plies.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(0..=1000))]
    skip_plies: u32,
}

/// Runs `oware tune-eval`.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = SampleOptions {
        skip_plies: args.skip_plies,
    };
    let mut samples = Vec::new();
    for path in &args.records {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the records {}", path.display()))?;
        let found = samples_from_records(&text, &path.display().to_string(), options)
            .map_err(|e| anyhow::anyhow!(e))?;
        eprintln!("{}: {} positions", path.display(), found.len());
        samples.extend(found);
    }
    let f = fit(&samples).map_err(|e| anyhow::anyhow!(e))?;
    let (classic_loss, classic_scale) = weights_log_loss(&samples, &EvalWeights::CLASSIC);
    let (rounded_loss, _) = weights_log_loss(&samples, &f.weights);
    let sources: Vec<String> = args
        .records
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let comments = vec![
        "Alpha-beta evaluation weights fitted by `oware tune-eval` (the Texel method)".to_string(),
        format!(
            "from {} positions (plies {}+) of {}",
            samples.len(),
            args.skip_plies,
            sources.join(", ")
        ),
        format!(
            "mean log-loss {rounded_loss:.5} (classic weights: {classic_loss:.5}); \
             result ~ sigmoid(evaluation / {:.0})",
            f.scale
        ),
        "Format: docs/alphabeta.md#evaluation-weights-files. Units: centiseeds.".to_string(),
    ];
    let text = f.weights.to_file_text(&comments);
    oware_engine::atomic_file::write_atomic(&args.out, text.as_bytes())
        .with_context(|| format!("--out {}", args.out.display()))?;
    println!(
        "{} positions, {} Newton iterations; mean log-loss {rounded_loss:.5} \
         (classic weights {classic_loss:.5} at scale {classic_scale:.0}); scale {:.0}",
        samples.len(),
        f.iterations,
        f.scale
    );
    print!("{text}");
    println!("written to {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
