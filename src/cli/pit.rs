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

use crate::players::build_player;
use anyhow::{Context, bail};
use oware_engine::elo::MatchScore;
use oware_engine::spec::PlayerSpec;
use oware_engine::{Game, GameResult, Limits, Move, Side, Winner};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::json;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Arguments of `oware pit`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Player A, whose results are reported (e.g. `alphabeta:depth=6`).
    a: PlayerSpec,
    /// Player B (e.g. `random`).
    b: PlayerSpec,
    /// Games to play: each opening twice with colours swapped (an odd count plays the last
    /// opening once).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Random plies before the players take over [default: 2 to 4, drawn per opening].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=200))]
    opening_plies: Option<u32>,
    /// Games played at once [default: the number of CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
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
}

/// One finished game.
struct Played {
    a_south: bool,
    moves: String,
    result: GameResult,
    plies: u32,
    a_time: Duration,
    a_moves: u32,
    b_time: Duration,
    b_moves: u32,
}

impl Played {
    /// A's result: 1 win, 0.5 draw, 0 loss.
    fn a_points(&self) -> f64 {
        let a_side = if self.a_south {
            Side::South
        } else {
            Side::North
        };
        (self.result.value_for(a_side) as f64 + 1.0) / 2.0
    }
}

/// A 64-bit mix, so that nearby seeds give unrelated streams.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `pairs` random openings, distinct where the number of plies allows, none of which ends the
/// game.
fn openings(pairs: u32, plies: Option<u32>, seed: u64) -> anyhow::Result<Vec<Vec<Move>>> {
    let mut rng = SmallRng::seed_from_u64(mix(seed));
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(pairs as usize);
    for pair in 0..pairs {
        let mut chosen = None;
        for attempt in 0..200 {
            let k = plies.unwrap_or_else(|| rng.random_range(2..=4));
            let mut game = Game::new();
            let mut moves = Vec::with_capacity(k as usize);
            while moves.len() < k as usize && !game.is_over() {
                let legal = game.legal_moves();
                let m = legal.as_slice()[rng.random_range(0..legal.len())];
                game.play_unchecked(m);
                moves.push(m);
            }
            if game.is_over() {
                continue;
            }
            if seen.insert(moves.clone()) || attempt >= 50 {
                chosen = Some(moves);
                break;
            }
        }
        match chosen {
            Some(m) => out.push(m),
            None => bail!(
                "could not find a random opening of {} plies that does not end the game \
                 (opening {pair}); use fewer --opening-plies",
                plies.unwrap_or(4)
            ),
        }
    }
    Ok(out)
}

/// Plays one game of A against B from `opening`.
fn play_game(
    a: &PlayerSpec,
    b: &PlayerSpec,
    opening: &[Move],
    a_south: bool,
    seed: u64,
) -> anyhow::Result<Played> {
    let mut pa = build_player(a, mix(seed ^ 0xA))?;
    let mut pb = build_player(b, mix(seed ^ 0xB))?;
    pa.new_game();
    pb.new_game();
    let mut game = Game::new();
    for &m in opening {
        game.play(m).context("replaying the opening")?;
    }
    let (mut a_time, mut b_time) = (Duration::ZERO, Duration::ZERO);
    let (mut a_moves, mut b_moves) = (0, 0);
    while !game.is_over() {
        let a_to_move = (game.to_move() == Side::South) == a_south;
        let t = Instant::now();
        let choice = if a_to_move {
            pa.choose(&game, Limits::default())
        } else {
            pb.choose(&game, Limits::default())
        };
        let spent = t.elapsed();
        if a_to_move {
            a_time += spent;
            a_moves += 1;
        } else {
            b_time += spent;
            b_moves += 1;
        }
        let who = if a_to_move { a } else { b };
        game.play(choice.mv)
            .with_context(|| format!("player {who} chose an illegal move"))?;
    }
    let result = match game.result() {
        Some(r) => r,
        None => bail!("the game loop ended before the game did"),
    };
    Ok(Played {
        a_south,
        moves: game.record(),
        result,
        plies: game.ply(),
        a_time,
        a_moves,
        b_time,
        b_moves,
    })
}

/// The whole match, summed up.
struct Summary {
    total: MatchScore,
    as_south: MatchScore,
    as_north: MatchScore,
    mean_plies: f64,
    a_ms_per_move: f64,
    b_ms_per_move: f64,
}

fn summarize(games: &[Played]) -> Summary {
    let mut s = Summary {
        total: MatchScore::default(),
        as_south: MatchScore::default(),
        as_north: MatchScore::default(),
        mean_plies: 0.0,
        a_ms_per_move: 0.0,
        b_ms_per_move: 0.0,
    };
    let (mut at, mut am, mut bt, mut bm, mut plies) = (0.0, 0u64, 0.0, 0u64, 0u64);
    for g in games {
        let p = g.a_points();
        s.total.add(p);
        if g.a_south {
            s.as_south.add(p);
        } else {
            s.as_north.add(p);
        }
        plies += g.plies as u64;
        at += g.a_time.as_secs_f64();
        bt += g.b_time.as_secs_f64();
        am += g.a_moves as u64;
        bm += g.b_moves as u64;
    }
    let per = |t: f64, n: u64| if n > 0 { 1000.0 * t / n as f64 } else { 0.0 };
    s.a_ms_per_move = per(at, am);
    s.b_ms_per_move = per(bt, bm);
    if !games.is_empty() {
        s.mean_plies = plies as f64 / games.len() as f64;
    }
    s
}

fn wdl_json(m: &MatchScore) -> serde_json::Value {
    json!({ "wins": m.wins, "draws": m.draws, "losses": m.losses })
}

fn result_text(r: &GameResult) -> &'static str {
    match r.winner {
        Winner::Side(Side::South) => "1-0",
        Winner::Side(Side::North) => "0-1",
        Winner::Draw => "1/2-1/2",
    }
}

/// Writes the record file atomically (temporary file, then rename).
fn write_record(
    path: &Path,
    games: &[Played],
    a: &PlayerSpec,
    b: &PlayerSpec,
) -> anyhow::Result<()> {
    let mut text = String::new();
    for g in games {
        let (south, north) = if g.a_south { (a, b) } else { (b, a) };
        text.push_str(&format!(
            "{}\t{} {} {}-{} south={south} north={north}\n",
            g.moves,
            result_text(&g.result),
            g.result.reason.name(),
            g.result.score[0],
            g.result.score[1],
        ));
    }
    let file_name = path
        .file_name()
        .with_context(|| format!("--record {}: not a file path", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(())
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
    // Fail on unbuildable players before any thread starts.
    build_player(&args.a, 0).context("player A")?;
    build_player(&args.b, 0).context("player B")?;
    let threads = match args.threads {
        Some(t) => t as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let pairs = args.games.div_ceil(2);
    let openings = openings(pairs, args.opening_plies, args.seed)?;
    let jobs: Vec<(u32, bool)> = (0..args.games).map(|g| (g, g.is_multiple_of(2))).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the thread pool")?;
    let progress = Progress {
        done: AtomicU32::new(0),
        points2: AtomicU32::new(0),
        total: args.games,
        started: Instant::now(),
        out: Mutex::new(()),
    };
    let (a, b, seed) = (&args.a, &args.b, args.seed);
    let games: Vec<Played> = pool.install(|| {
        jobs.par_iter()
            .map(|&(g, a_south)| {
                let opening = &openings[(g / 2) as usize];
                let played = play_game(a, b, opening, a_south, mix(seed) ^ g as u64)
                    .with_context(|| format!("game {}", g + 1))?;
                progress.game_done(played.a_points());
                Ok(played)
            })
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    eprintln!();
    let seconds = progress.started.elapsed().as_secs_f64();
    if let Some(path) = &args.record {
        write_record(path, &games, a, b)?;
    }
    let s = summarize(&games);
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
