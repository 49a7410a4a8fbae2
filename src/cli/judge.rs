//! `oware judge PLAYER --egtb DIR`: the player's move on positions from real games, judged by
//! the endgame tables — the share of optimal moves and the seeds lost per move, per seed count.
//!
//! Positions come from games read with `--games-from FILE` (one game per line, moves separated
//! by spaces, anything after a tab or `#` ignored: `pit --record` files and self-play game
//! lists) or, by default, from games the `--source` player plays against itself after random
//! openings. Every live position whose seed count is in `--seeds` is a candidate; `--positions`
//! of them are drawn (seeded), each with its game's history, and the player (fresh for each)
//! chooses a move there.
//!
//! The tables store intervals (values can depend on the history, see `docs/endgame-tables.md`), so each
//! verdict is proven, proven not, or undecided, and the seeds lost are a range: `lost` reports
//! the mean of its lower and of its upper end.

use super::device::parse_device;
use anyhow::Context;
use oware_arena::judge::{
    JudgeReport, candidates, draw_positions, games_from_record, judge_positions,
    positions_from_selfplay,
};
use oware_egtb::{DEFAULT_DIR, Tables};
use oware_model::DeviceKind;
use oware_players::PlayerBuilder;
use oware_players::spec::PlayerSpec;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `oware judge`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The player judged (e.g. `alphabeta:depth=8`).
    player: PlayerSpec,
    /// The table directory.
    #[arg(long, default_value = DEFAULT_DIR)]
    egtb: PathBuf,
    /// Positions to judge.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    positions: u32,
    /// Seed counts on the board, `LO..HI` or `N` [default: 2 up to the largest table].
    #[arg(long, value_parser = parse_seeds)]
    seeds: Option<(u8, u8)>,
    /// Take the positions from the games in FILE instead of playing games.
    #[arg(long, value_name = "FILE")]
    games_from: Option<PathBuf>,
    /// The player whose games (against itself) give the positions.
    #[arg(long, default_value = "alphabeta:depth=4")]
    source: PlayerSpec,
    /// Seed of the games and of the draw of positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads [default: the number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// The most nodes a proof from a position's real history may visit per threshold when a
    /// move's interval is still open after the tables (0: the tables alone).
    #[arg(long, default_value_t = oware_arena::judge::DEFAULT_PROOF_NODES)]
    proof_nodes: u64,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Device for network players: cpu, wgpu or cuda.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
}

fn parse_seeds(s: &str) -> Result<(u8, u8), String> {
    let num = |x: &str| {
        x.trim()
            .parse::<u8>()
            .map_err(|_| format!("'{x}' is not a seed count"))
    };
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.trim_start_matches('='))?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    if lo > hi {
        return Err(format!("'{s}': {lo} is above {hi}"));
    }
    Ok((lo, hi))
}

/// Runs `oware judge`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let tables = Tables::load(&args.egtb)
        .with_context(|| format!("loading the endgame tables in {}", args.egtb.display()))?;
    let max = tables.max_seeds() as u8;
    let (lo, hi) = args.seeds.unwrap_or((2.min(max), max));
    if hi > max {
        anyhow::bail!(
            "--seeds {lo}..{hi}: the tables in {} go up to {max} seeds",
            args.egtb.display()
        );
    }
    let builder = PlayerBuilder::new(&args.player, args.device).context("the judged player")?;
    builder.build(0).context("the judged player")?;
    let threads = match args.threads {
        Some(t) => t as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let wanted = args.positions as usize;

    let pool_of_positions = if let Some(path) = &args.games_from {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--games-from {}", path.display()))?;
        let mut out = Vec::new();
        for g in games_from_record(&text, path).context("--games-from")? {
            candidates(&g, lo, hi, &mut out);
        }
        out
    } else {
        let source = PlayerBuilder::new(&args.source, args.device).context("--source")?;
        let make = |seed: u64| source.build(seed).map_err(|e| format!("{e:#}"));
        let out = positions_from_selfplay(
            &make,
            (lo, hi),
            wanted,
            args.seed,
            threads,
            &mut |games, found| {
                eprint!("\rgames: {games} played, {found} candidate positions   ");
            },
        )?;
        eprintln!();
        out
    };
    if pool_of_positions.is_empty() {
        anyhow::bail!("no live position with {lo}..={hi} seeds in the games");
    }
    let positions = draw_positions(pool_of_positions, wanted, args.seed);
    let make = |seed: u64| builder.build(seed).map_err(|e| format!("{e:#}"));
    let verdicts = judge_positions(
        &tables,
        &positions,
        &make,
        args.seed,
        threads,
        args.proof_nodes,
        &|done, total| {
            eprint!("\rjudged {done}/{total}   ");
            let _ = std::io::stderr().flush(); // progress only
        },
    )?;
    eprintln!();
    let report = JudgeReport::of(&verdicts);
    let player = args.player.to_string();
    if args.json {
        println!("{}", report.json(&player, &args.egtb, (lo, hi)));
    } else {
        print!("{}", report.table(&player, &args.egtb, (lo, hi)));
    }
    Ok(ExitCode::SUCCESS)
}
