//! A match between two alpha-beta players over the same runner `oware pit` uses
//! (`play_games`: the same openings, colour pairs and seeds), without the network crates:
//! `ab_match A_OPTS B_OPTS GAMES SEED THREADS [OPENING_PLIES] [BOOK]`, where each OPTS is
//! `depth=N|ms=N[,qdepth=N][,book]` (book: the file BOOK). Prints a JSON line like `pit --json`.

use oware_arena::{MatchOptions, MatchSummary, play_games};
use oware_search::alphabeta::{AlphaBetaOptions, Book};
use oware_search::{AlphaBetaPlayer, Player};
use std::sync::Arc;

fn player(opts: &str, seed: u64, book: &Option<Arc<Book>>) -> Result<AlphaBetaPlayer, String> {
    let (mut depth, mut ms) = (None, None);
    let mut o = AlphaBetaOptions::default();
    let bad = |kv: &str| format!("bad option '{kv}' (depth=N, ms=N, qdepth=N, book)");
    for kv in opts.split(',') {
        match kv.split_once('=') {
            Some(("depth", v)) => depth = Some(v.parse().map_err(|_| bad(kv))?),
            Some(("ms", v)) => ms = Some(v.parse().map_err(|_| bad(kv))?),
            Some(("qdepth", v)) => o.qdepth = v.parse().map_err(|_| bad(kv))?,
            None if kv == "book" => o.book = book.clone(),
            _ => return Err(bad(kv)),
        }
    }
    Ok(AlphaBetaPlayer::with_options(depth, ms, seed, &o).with_name(opts.to_string()))
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T, String> {
    args.get(i)
        .ok_or_else(|| format!("missing {what}; usage: {USAGE}"))?
        .parse()
        .map_err(|_| format!("{what} '{}' is not valid; usage: {USAGE}", args[i]))
}

const USAGE: &str = "ab_match A_OPTS B_OPTS GAMES SEED THREADS [OPENING_PLIES] [BOOK]";

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let (a, b): (String, String) = (arg(&args, 1, "A_OPTS")?, arg(&args, 2, "B_OPTS")?);
    let games: u32 = arg(&args, 3, "GAMES")?;
    let seed: u64 = arg(&args, 4, "SEED")?;
    let threads: usize = arg(&args, 5, "THREADS")?;
    let opening_plies = if args.len() > 6 {
        Some(arg(&args, 6, "OPENING_PLIES")?)
    } else {
        None
    };
    let book = match args.get(7) {
        Some(p) => Some(Arc::new(Book::load(std::path::Path::new(p))?)),
        None => None,
    };
    // Check both specs before the match.
    player(&a, 0, &book)?;
    player(&b, 0, &book)?;
    let options = MatchOptions {
        games,
        opening_plies,
        seed,
        threads,
        max_plies: oware_engine::DEFAULT_MAX_PLIES,
    };
    let make_a = |s: u64| player(&a, s, &book).map(|p| Box::new(p) as Box<dyn Player>);
    let make_b = |s: u64| player(&b, s, &book).map(|p| Box::new(p) as Box<dyn Player>);
    let all: Vec<u32> = (0..games).collect();
    let started = std::time::Instant::now();
    let out = play_games(&make_a, &make_b, &options, &all, &|_| {})?;
    let s = MatchSummary::from_games(&out);
    let (lo, hi) = s.total.elo_ci95();
    println!(
        "{{\"a\":\"{a}\",\"b\":\"{b}\",\"games\":{games},\"wins\":{},\"draws\":{},\"losses\":{},\"score\":{:.4},\"elo\":{:.0},\"elo_ci95\":[{lo:.0},{hi:.0}],\"mean_plies\":{:.1},\"a_ms_per_move\":{:.2},\"b_ms_per_move\":{:.2},\"seconds\":{:.0}}}",
        s.total.wins,
        s.total.draws,
        s.total.losses,
        s.total.score(),
        s.total.elo(),
        s.mean_plies,
        s.a_ms_per_move,
        s.b_ms_per_move,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
