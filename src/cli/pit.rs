//! `oware pit`: many games between two players, in parallel, with paired openings, and the
//! verdict with an error bar (its JSON: `docs/file-formats.md`).
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

use super::matches::MatchArgs;
use anyhow::Context;
use oware_arena::elo::MatchScore;
use oware_arena::{GameOutcome, MatchSummary, games_in_flight, play_contest};
use oware_engine::bounds::MAX_GAMES;
use oware_players::spec::PlayerSpec;
use oware_players::{PlayerBuilder, contestant};
use oware_report::status::MatchStatus;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `oware pit`.
#[derive(clap::Args, Debug)]
#[command(after_help = oware_players::spec::SPEC_KEYS_HELP)]
pub(super) struct Args {
    /// Player A, whose results are reported (e.g. `alphabeta:depth=6`).
    a: PlayerSpec,
    /// Player B (e.g. `random`).
    b: PlayerSpec,
    /// Games to play: each opening twice with colours swapped (an odd count plays the last
    /// opening once); at most 100000.
    #[arg(long, default_value_t = 100,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_GAMES)))]
    games: u32,
    #[command(flatten)]
    matches: MatchArgs,
    /// Write every game to FILE, one per line: moves, a tab, then the result.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Print the result as one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Play network players one game at a time per thread, as the other players, instead of
    /// batched (many games in flight per thread, one network call for all of them): the same
    /// games, slower; for comparison.
    #[arg(long)]
    unbatched: bool,
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
        text.push_str(&g.record_line(&a, &b));
        text.push('\n');
    }
    oware_engine::atomic_file::write_atomic(path, text.as_bytes())
        .with_context(|| format!("--record {}", path.display()))
}

/// Runs `oware pit`.
pub(super) fn run(args: Args) -> anyhow::Result<ExitCode> {
    // Fail on unbuildable players (and load their networks once) before any game starts.
    let device = args.matches.device;
    let builder_a = PlayerBuilder::new(&args.a, device).context("player A")?;
    let builder_b = PlayerBuilder::new(&args.b, device).context("player B")?;
    builder_a.build(0).context("player A")?;
    builder_b.build(0).context("player B")?;
    let pairs = args.games.div_ceil(2);
    let started = Instant::now();
    let progress = MatchStatus::new(u64::from(args.games), false);
    let options = args.matches.options(args.games, args.matches.seed);
    let threads = options.threads;
    let make_a = |seed: u64| builder_a.build(seed).map_err(|e| format!("{e:#}"));
    let make_b = |seed: u64| builder_b.build(seed).map_err(|e| format!("{e:#}"));
    let (net_a, net_b) = if args.unbatched {
        (None, None)
    } else {
        (
            builder_a.network_side().context("player A")?,
            builder_b.network_side().context("player B")?,
        )
    };
    let batched = [net_a.is_some(), net_b.is_some()];
    let all: Vec<u32> = (0..args.games).collect();
    let games = play_contest(
        &contestant(&net_a, &make_a),
        &contestant(&net_b, &make_b),
        &options,
        &all,
        &|g| progress.game_done(g.a_points()),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    progress.line().finish();
    let (a, b) = (&args.a, &args.b);
    let seconds = started.elapsed().as_secs_f64();
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
            "plies": s.plies,
            "moves": s.a_moves + s.b_moves,
            "a_moves": s.a_moves,
            "b_moves": s.b_moves,
            "moves_per_sec": (s.a_moves + s.b_moves) as f64 / seconds.max(1e-9),
            "a_ms_per_move": s.a_ms_per_move,
            "b_ms_per_move": s.b_ms_per_move,
            "batched": { "a": batched[0], "b": batched[1] },
            "threads": threads,
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
        let who = match batched {
            [true, true] => Some("A and B"),
            [true, false] => Some("A"),
            [false, true] => Some("B"),
            [false, false] => None,
        };
        if let Some(who) = who {
            println!(
                "network searches of {who} batched: up to {} games in flight per thread",
                games_in_flight(args.games as usize, threads)
            );
        }
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
            "mean game length {:.1} plies; time per move A {:.2} ms, B {:.2} ms; {seconds:.1} s in all, {:.0} moves/s",
            s.mean_plies,
            s.a_ms_per_move,
            s.b_ms_per_move,
            (s.a_moves + s.b_moves) as f64 / seconds.max(1e-9)
        );
    }
    Ok(ExitCode::SUCCESS)
}
