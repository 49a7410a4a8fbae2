//! `oware pit`: many games between two players, in parallel, with paired openings, and the
//! verdict with an error bar (DESIGN §3).
//!
//! Each random opening of K plies is played twice, A as South then A as North, so that
//! deterministic players do not repeat one game. With an odd `--games` the last opening is
//! played once, A as South.
//!
//! `--record FILE` writes one game per line, in game order: the moves separated by spaces (the
//! format `oware replay` reads; the opening included), a tab, then the result from South's
//! side (`1-0`, `0-1` or `1/2-1/2`), the reason (`captured-25`, `no-move`, `repetition`,
//! `max-plies`), the final seeds `S-N`, and `south=SPEC north=SPEC`. `oware replay` ignores
//! everything after the tab.

use super::device::parse_device;
use anyhow::Context;
use oware_engine::arena::{GameOutcome, MatchOptions, MatchSummary, play_match};
use oware_engine::elo::MatchScore;
use oware_engine::limits::{MAX_GAMES, MAX_THREADS};
use oware_engine::record::format_line;
use oware_engine::spec::PlayerSpec;
use oware_engine::{DEFAULT_MAX_PLIES, Side};
use oware_model::DeviceKind;
use oware_players::PlayerBuilder;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Arguments of `oware pit`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Player A, whose results are reported (e.g. `alphabeta:depth=6`).
    a: PlayerSpec,
    /// Player B (e.g. `random`).
    b: PlayerSpec,
    /// Games to play: each opening twice with colours swapped (an odd count plays the last
    /// opening once); at most 100000.
    #[arg(long, default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_GAMES)))]
    games: u32,
    /// Random plies before the players take over [default: 2 to 4, drawn per opening].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=200))]
    opening_plies: Option<u32>,
    /// Games played at once, at most 256 [default: the number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_THREADS)))]
    threads: Option<u32>,
    /// Seed of the openings and of the players' random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write every game to FILE, one per line: moves, a tab, then the result.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Print the result as one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Device for network players: cpu, wgpu or cuda.
    #[arg(long, default_value = "cpu", value_parser = parse_device)]
    device: DeviceKind,
}

fn wdl_json(m: &MatchScore) -> serde_json::Value {
    json!({ "wins": m.wins, "draws": m.draws, "losses": m.losses })
}

/// Writes the record file atomically, one [`format_line`] per game.
fn write_record(
    path: &Path,
    games: &[GameOutcome],
    a: &PlayerSpec,
    b: &PlayerSpec,
) -> anyhow::Result<()> {
    let (a, b) = (a.to_string(), b.to_string());
    let mut text = String::new();
    for g in games {
        let (south, north) = if g.a_side == Side::South {
            (&a, &b)
        } else {
            (&b, &a)
        };
        text.push_str(&format_line(
            g.game.moves(),
            Some(&g.result),
            Some((south, north)),
        ));
        text.push('\n');
    }
    oware_engine::atomic::write_atomic(path, text.as_bytes())
        .with_context(|| format!("--record {}", path.display()))
}

/// Live counts for the progress line.
struct Progress {
    done: AtomicU32,
    points2: AtomicU32,
    total: u32,
    started: Instant,
    out: Mutex<()>,
}

impl Progress {
    fn game_done(&self, points: f64) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let p2 = self
            .points2
            .fetch_add((points * 2.0).round() as u32, Ordering::SeqCst)
            + (points * 2.0).round() as u32;
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = elapsed / done as f64 * (self.total - done) as f64;
        let score = 50.0 * p2 as f64 / done as f64;
        if let Ok(_guard) = self.out.lock() {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r{done}/{} games, A scores {score:.1}%, {elapsed:.0} s elapsed, ETA {eta:.0} s   ",
                self.total
            );
            let _ = err.flush();
        }
    }
}

/// Runs `oware pit`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Fail on unbuildable players (and load their networks once) before any game starts.
    let builder_a = PlayerBuilder::new(&args.a, args.device).context("player A")?;
    let builder_b = PlayerBuilder::new(&args.b, args.device).context("player B")?;
    builder_a.build(0).context("player A")?;
    builder_b.build(0).context("player B")?;
    let threads = match args.threads {
        Some(t) => t as usize,
        None => {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS as usize))
        }
    };
    let pairs = args.games.div_ceil(2);
    let progress = Progress {
        done: AtomicU32::new(0),
        points2: AtomicU32::new(0),
        total: args.games,
        started: Instant::now(),
        out: Mutex::new(()),
    };
    let options = MatchOptions {
        games: args.games,
        opening_plies: args.opening_plies,
        seed: args.seed,
        threads,
        max_plies: DEFAULT_MAX_PLIES,
    };
    let make_a = |seed: u64| builder_a.build(seed).map_err(|e| format!("{e:#}"));
    let make_b = |seed: u64| builder_b.build(seed).map_err(|e| format!("{e:#}"));
    let games = play_match(&make_a, &make_b, &options, &|g| {
        progress.game_done(g.a_points())
    })
    .map_err(|e| anyhow::anyhow!(e))?;
    let (a, b) = (&args.a, &args.b);
    eprintln!();
    let seconds = progress.started.elapsed().as_secs_f64();
    if let Some(path) = &args.record {
        write_record(path, &games, a, b)?;
    }
    let s = MatchSummary::from_games(&games);
    let (lo, hi) = s.total.elo_ci95();
    if args.json {
        let value = json!({
            "a": a.to_string(),
            "b": b.to_string(),
            "games": s.total.games(),
            "wins": s.total.wins,
            "draws": s.total.draws,
            "losses": s.total.losses,
            "score": s.total.score(),
            "elo": s.total.elo(),
            "elo_ci95": [lo, hi],
            "a_as_south": wdl_json(&s.as_south),
            "a_as_north": wdl_json(&s.as_north),
            "mean_plies": s.mean_plies,
            "seconds": seconds,
        });
        println!("{value}");
    } else {
        let t = &s.total;
        println!(
            "A = {a}, B = {b}: {} games ({pairs} opening{}, colours swapped), {threads} thread{}",
            t.games(),
            if pairs == 1 { "" } else { "s" },
            if threads == 1 { "" } else { "s" }
        );
        println!(
            "A: {} wins, {} draws, {} losses; score {:.1}%",
            t.wins,
            t.draws,
            t.losses,
            100.0 * t.score()
        );
        println!(
            "Elo difference A - B: {:+.0} (95% interval {:+.0} to {:+.0})",
            t.elo(),
            lo,
            hi
        );
        let wdl = |m: &MatchScore| format!("+{} ={} -{}", m.wins, m.draws, m.losses);
        println!(
            "A as South: {}   A as North: {}",
            wdl(&s.as_south),
            wdl(&s.as_north)
        );
        println!(
            "mean game length {:.1} plies; time per move A {:.2} ms, B {:.2} ms; {seconds:.1} s in all",
            s.mean_plies, s.a_ms_per_move, s.b_ms_per_move
        );
    }
    Ok(ExitCode::SUCCESS)
}
