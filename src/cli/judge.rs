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
//! The tables store intervals (values can depend on the history, see the README), so each
//! verdict is proven, proven not, or undecided, and the seeds lost are a range: `lost` reports
//! the mean of its lower and of its upper end.

use super::device::parse_device;
use anyhow::Context;
use oware_arena::{MatchOptions, play_match};
use oware_engine::egtb::{DEFAULT_DIR, Tables, Verdict, judge};
use oware_engine::{DEFAULT_MAX_PLIES, Game};
use oware_model::DeviceKind;
use oware_players::PlayerBuilder;
use oware_players::spec::PlayerSpec;
use oware_search::Limits;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};

/// Arguments of `oware judge`.
#[derive(clap::Args, Debug)]
pub struct Args {
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

/// Every live position of `game`'s history (start included) with a seed count in `lo..=hi`,
/// as games stopped there.
fn candidates(game: &Game, lo: u8, hi: u8, out: &mut Vec<Game>) {
    let mut g = Game::from_position(*game.start(), game.max_plies());
    for &m in game.moves() {
        if g.is_over() {
            break;
        }
        let n: u8 = g.position().board().iter().sum();
        if (lo..=hi).contains(&n) {
            out.push(g.clone());
        }
        if g.play(m).is_err() {
            break;
        }
    }
}

fn games_from_file(path: &Path) -> anyhow::Result<Vec<Game>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--games-from {}", path.display()))?;
    let mut games = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let moves = line.split(['\t', '#']).next().unwrap_or("");
        let game = Game::replay(moves.split_whitespace())
            .with_context(|| format!("--games-from {} line {}", path.display(), i + 1))?;
        games.push(game);
    }
    Ok(games)
}

/// Totals of one seed count (or of all).
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    positions: u32,
    optimal: u32,
    suboptimal: u32,
    lost_lo: u64,
    lost_hi: u64,
    keeps: u32,
    throws: u32,
}

impl Tally {
    fn add(&mut self, v: &Verdict) {
        self.positions += 1;
        match v.optimal {
            Some(true) => self.optimal += 1,
            Some(false) => self.suboptimal += 1,
            None => {}
        }
        self.lost_lo += v.lost.0 as u64;
        self.lost_hi += v.lost.1 as u64;
        match v.keeps_result {
            Some(true) => self.keeps += 1,
            Some(false) => self.throws += 1,
            None => {}
        }
    }

    fn decided(&self) -> u32 {
        self.optimal + self.suboptimal
    }

    fn json(&self) -> Value {
        let n = self.positions.max(1) as f64;
        let share = (self.decided() > 0).then(|| self.optimal as f64 / self.decided() as f64);
        json!({
            "positions": self.positions,
            "optimal": self.optimal,
            "suboptimal": self.suboptimal,
            "undecided": self.positions - self.decided(),
            "optimal_share": share,
            "seeds_lost_per_move": [self.lost_lo as f64 / n, self.lost_hi as f64 / n],
            "result_kept": self.keeps,
            "result_thrown": self.throws,
        })
    }
}

/// Runs `oware judge`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
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

    let mut pool_of_positions = Vec::new();
    if let Some(path) = &args.games_from {
        for g in games_from_file(path)? {
            candidates(&g, lo, hi, &mut pool_of_positions);
        }
    } else {
        let source = PlayerBuilder::new(&args.source, args.device).context("--source")?;
        let make = |seed: u64| source.build(seed).map_err(|e| format!("{e:#}"));
        // Rounds of games until there are plenty of candidates (or it is clear there are few).
        let per_round = (2 * threads as u32).max(8);
        for round in 0..64u64 {
            let options = MatchOptions {
                games: per_round,
                opening_plies: None,
                seed: args.seed.wrapping_add(round.wrapping_mul(0x9E37_79B9)),
                threads,
                max_plies: DEFAULT_MAX_PLIES,
            };
            let games =
                play_match(&make, &make, &options, &|_| {}).map_err(|e| anyhow::anyhow!(e))?;
            for g in &games {
                candidates(&g.game, lo, hi, &mut pool_of_positions);
            }
            eprint!(
                "\rgames: {} played, {} candidate positions   ",
                (round + 1) * per_round as u64,
                pool_of_positions.len()
            );
            if pool_of_positions.len() >= 4 * wanted {
                break;
            }
        }
        eprintln!();
    }
    if pool_of_positions.is_empty() {
        anyhow::bail!("no live position with {lo}..={hi} seeds in the games");
    }
    let mut rng = SmallRng::seed_from_u64(args.seed);
    pool_of_positions.shuffle(&mut rng);
    pool_of_positions.truncate(wanted);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the threads")?;
    let done = AtomicU32::new(0);
    let total = pool_of_positions.len();
    let verdicts: Vec<Verdict> = pool.install(|| {
        pool_of_positions
            .par_iter()
            .enumerate()
            .map(|(i, game)| -> anyhow::Result<Verdict> {
                let analysis = tables
                    .analyse(game)
                    .context("a candidate position is covered by the tables")?;
                let mut player = builder.build(args.seed ^ (i as u64).wrapping_mul(0x51ED))?;
                let choice = player
                    .choose(game, Limits::default())
                    .with_context(|| format!("{} choosing a move", player.name()))?;
                let v = judge(&analysis, choice.mv).with_context(|| {
                    format!("{} chose {}, not a legal move", player.name(), choice.mv)
                })?;
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                if d.is_multiple_of(10) || d as usize == total {
                    eprint!("\rjudged {d}/{total}   ");
                    let _ = std::io::stderr().flush(); // progress only
                }
                Ok(v)
            })
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    eprintln!();

    let mut per: BTreeMap<u8, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    for v in &verdicts {
        per.entry(v.seeds).or_default().add(v);
        all.add(v);
    }
    if args.json {
        let by_seeds: Vec<Value> = per
            .iter()
            .map(|(n, t)| {
                let mut j = t.json();
                j["seeds"] = json!(n);
                j
            })
            .collect();
        let out = json!({
            "player": args.player.to_string(),
            "egtb": args.egtb.display().to_string(),
            "seeds": [lo, hi],
            "total": all.json(),
            "per_seeds": by_seeds,
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} judged on {} positions with {lo}..={hi} seeds (tables in {})",
        args.player,
        all.positions,
        args.egtb.display()
    );
    println!("seeds  positions  optimal (of decided)  seeds lost/move  result thrown");
    let line = |label: String, t: &Tally| {
        let n = t.positions.max(1) as f64;
        let share = if t.decided() > 0 {
            format!(
                "{:5.1}% of {:>4}",
                100.0 * t.optimal as f64 / t.decided() as f64,
                t.decided()
            )
        } else {
            "    - of    0".to_string()
        };
        println!(
            "{label:>5}  {:>9}  {share:>20}  {:>6.2}..{:<6.2}  {:>5}",
            t.positions,
            t.lost_lo as f64 / n,
            t.lost_hi as f64 / n,
            t.throws
        );
    };
    for (n, t) in &per {
        line(n.to_string(), t);
    }
    line("all".to_string(), &all);
    Ok(ExitCode::SUCCESS)
}
