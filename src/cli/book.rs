//! `oware book build`: an opening book for the alpha-beta player (`alphabeta:...,book=FILE`),
//! from a network's long MCTS searches (`oware_search::alphabeta::Book::build`; the format
//! and the command: `docs/alphabeta.md#opening-book`).

use super::device::parse_device;
use anyhow::Context;
use oware_model::DeviceKind;
use oware_players::spec::{MctsEvaluator, MctsSpec};
use oware_players::{SHIPPED_MODEL, load_network_with_search, play_mcts_config};
use oware_search::alphabeta::{Book, BookBuild};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The most plies `--depth` accepts.
const MAX_BOOK_DEPTH: u32 = 40;
/// The most positions `--max-positions` accepts.
const MAX_BOOK_POSITIONS: u32 = 100_000;

/// Arguments of `oware book`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Build a book: analyse positions from the start with a network's MCTS and keep the moves
    /// with a large enough share of the visits.
    Build(BuildArgs),
}

/// Arguments of `oware book build`.
#[derive(clap::Args, Debug)]
struct BuildArgs {
    /// Write the book to FILE (a book file, `docs/file-formats.md`).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The analysing network: a checkpoint or a run directory (its latest checkpoint).
    #[arg(long, value_name = "PATH", default_value = SHIPPED_MODEL)]
    model: PathBuf,
    /// Analyse positions up to this many plies from the start.
    #[arg(long, default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BOOK_DEPTH)))]
    depth: u32,
    /// MCTS simulations per analysed position.
    #[arg(long, default_value_t = 4000,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sims: u32,
    /// A move enters the book when its share of the root's visits is at least this (the most
    /// visited always enters); in (0, 1].
    #[arg(long, default_value_t = 0.25, value_parser = parse_threshold)]
    threshold: f64,
    /// Analyse at most this many positions, shallowest first.
    #[arg(long, default_value_t = 300,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_BOOK_POSITIONS)))]
    max_positions: u32,
    /// Seed of the searches (mixed with each position): the same seed and network give the
    /// same book.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads analysing positions [default: the number of CPUs]; the book does not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Option<u32>,
    /// Device for the network: cpu, wgpu or cuda.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
}

/// A `--threshold`: a number in (0, 1].
fn parse_threshold(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
        Ok(_) => Err(format!("{s} is not in (0, 1]")),
        Err(_) => Err(format!("{s} is not a number")),
    }
}

/// Runs `oware book`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Build(a) => build(a),
    }
}

fn build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let loaded = load_network_with_search(&args.model, args.device)
        .with_context(|| format!("--model {}", args.model.display()))?;
    // The network's own search (as `mcts:model=PATH` plays it), with the book's simulations.
    let spec = MctsSpec {
        evaluator: MctsEvaluator::Model(args.model.display().to_string()),
        sims: Some(args.sims),
        ..MctsSpec::default()
    };
    let config = play_mcts_config(&spec, loaded.trained_search.as_ref())?;
    let threads = match args.threads {
        Some(t) => t as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let options = BookBuild {
        depth: args.depth,
        sims: args.sims,
        threshold: args.threshold,
        max_positions: args.max_positions as usize,
        seed: args.seed,
        threads,
    };
    let started = Instant::now();
    let max = args.max_positions;
    let book = Book::build(loaded.evaluator.as_ref(), &config, &options, &|n| {
        if n % 10 == 0 {
            eprintln!("{n} positions analysed (at most {max})");
        }
    })
    .map_err(|e| anyhow::anyhow!(e))?;
    let seconds = started.elapsed().as_secs_f64();
    let moves: usize = book.lines().iter().map(|l| l.moves.len()).sum();
    let deepest = book.lines().iter().map(|l| l.path.len()).max().unwrap_or(0);
    let comments = vec![
        "Opening book for alphabeta:...,book=FILE, built by:".to_string(),
        format!(
            "  oware book build --model {} --depth {} --sims {} --threshold {} --max-positions {} --seed {} --out {}",
            args.model.display(),
            args.depth,
            args.sims,
            args.threshold,
            args.max_positions,
            args.seed,
            args.out.display()
        ),
        format!(
            "{} positions (plies 0..={deepest}), {moves} book moves; the search: {:?} root, c_puct {}, \
             {} leaves per pass",
            book.len(),
            config.root,
            config.c_puct,
            config.leaves_per_tree
        ),
        "Format: docs/file-formats.md (MOVES from the start | MOVE SHARE-of-visits ...)."
            .to_string(),
    ];
    let text = book.to_file_text(&comments);
    oware_engine::atomic_file::write_atomic(&args.out, text.as_bytes())
        .with_context(|| format!("--out {}", args.out.display()))?;
    println!(
        "{} positions, {moves} book moves, plies 0..={deepest}, in {seconds:.1} s; written to {}",
        book.len(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
