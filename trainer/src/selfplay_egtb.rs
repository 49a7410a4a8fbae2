//! Endgame tables in self-play (`selfplay.egtb = "DIR"`): a game that enters the tables with
//! an exact value is finished by perfect play from the tables, and the value targets of
//! positions inside the tables are held to what the tables prove.
//!
//! # Ending a game in the tables
//! The record format has no "adjudicated" ending, so a game is not cut off with an invented
//! reason: once the position (with the game's own history, [`Tables::analyse`]) has an exact
//! value, both sides play table moves that keep it — each time a move whose interval starts at
//! the position's value, or one proven to keep it from the real history — until the game really
//! ends; when no move can be shown to keep it within the proofs' budget, the game is left to the
//! search. Exactness carries over from one position
//! to the next (see [`play_out`]), so the game ends with the final score the tables give (by
//! capture of 25, no move, or repetition, whichever perfect play reaches; the 25-seed ending
//! can stop the count early but never changes the result), and its record line replays like any
//! other game. Only the ply limit, which the tables do not model, can end it otherwise.
//!
//! # Value targets
//! A recorded position whose board the tables cover gets, at the moment it is searched, the
//! interval of results its history allows. When the game ends, its value target (the game's
//! result for the mover) is clamped into that interval: where the interval is exact the target
//! becomes the exact result; where it is cycle-dependent, a result outside the bound is moved
//! to the nearest result inside it, and one inside stays. The margin target stays the game's.

use anyhow::Context;
use oware_egtb::{Analysis, Prover, Tables, keeping_move};
use oware_engine::{Game, Move, Position, Side};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The `selfplay.egtb` value that asks for the tables of 0..=[`AUTO_TABLE_SEEDS`] seeds in the
/// per-user cache ([`auto_dir`]), built there the first time.
pub const AUTO: &str = "auto";

/// The largest tables `selfplay.egtb = "auto"` builds: 0..=14 seeds are 8.8 M positions, about
/// 20 MB on disk, built with every entry exact in about 67 seconds on 2 cores
/// (`docs/results/2026-12-07-selfplay-exact-tables.md`); the 15-minute runs that made the tables part
/// of the default used these (`docs/results/2026-12-05-changes-harvest-levers.md`).
pub const AUTO_TABLE_SEEDS: usize = 14;

/// The tables of `selfplay.egtb = "auto"` settle their open entries by exact search up to
/// [`AUTO_TABLE_SEEDS`] seeds: since the shared proofs every entry of tables 0..=14 comes out
/// exact, in about 67 s on 2 cores, and self-play with them scored 46.8% and 51.7% against the
/// yardstick where tables exact to 6 seeds scored 41.2% and 38.5%
/// (`docs/results/2026-12-07-selfplay-exact-tables.md`). At 60 minutes one pair went the other
/// way (43.0% head to head): with every entry exact more games start a play-out and its proofs,
/// and the run made 30% fewer learner steps
/// (`docs/results/2026-12-07-sixty-minutes-exact-tables.md`).
pub const AUTO_EXACT_UP_TO: u8 = AUTO_TABLE_SEEDS as u8;

/// The file in [`auto_dir`] that says up to how many seeds the cached tables were searched
/// exactly (one number). A cache without it was built when that was 6 seeds.
pub const AUTO_MARKER: &str = "exact-up-to";

/// Up to how many seeds the tables of a cache without [`AUTO_MARKER`] are kept: every entry up
/// to 5 seeds was exact in every build with entry values, but table 6 of an older build can
/// hold open entries, and tables built on those make the exact search of the larger ones many
/// times slower.
const UNMARKED_EXACT_UP_TO: u8 = 5;

/// Up to how many seeds the tables cached in `dir` were searched exactly: the number in its
/// [`AUTO_MARKER`], or [`UNMARKED_EXACT_UP_TO`] when there is none or it cannot be read (a
/// damaged marker only costs a rebuild).
fn cached_exact_up_to(dir: &Path) -> u8 {
    std::fs::read_to_string(dir.join(AUTO_MARKER))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(UNMARKED_EXACT_UP_TO)
}

/// Removes the tables cached in `dir` that an exact search up to [`AUTO_EXACT_UP_TO`] seeds
/// would make better: those above `cached`, the seeds the cache was searched exactly up to
/// ([`cached_exact_up_to`]; a larger table is built from the smaller ones' entry values, so
/// every table above the first one replaced goes too). Returns the seed counts removed.
///
/// # Errors
/// A table file that exists and cannot be removed.
fn remove_outdated(dir: &Path, cached: u8) -> anyhow::Result<Vec<usize>> {
    let done = cached.min(AUTO_EXACT_UP_TO) as usize;
    let mut removed = Vec::new();
    if done >= AUTO_EXACT_UP_TO as usize {
        return Ok(removed);
    }
    for n in done + 1..=AUTO_TABLE_SEEDS {
        let path = oware_egtb::table_path(dir, n);
        match std::fs::remove_file(&path) {
            Ok(()) => removed.push(n),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "removing {} to rebuild it with exact entries",
                        path.display()
                    )
                });
            }
        }
    }
    Ok(removed)
}

/// The directory of `selfplay.egtb = "auto"`: `$XDG_CACHE_HOME/oware/egtb`, else
/// `$HOME/.cache/oware/egtb`.
///
/// # Errors
/// Neither variable is set (or both are empty).
pub fn auto_dir() -> anyhow::Result<PathBuf> {
    auto_dir_of(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")).context(
        "selfplay.egtb = \"auto\" keeps its tables under $XDG_CACHE_HOME or $HOME, and neither \
         is set: give a directory built by `oware egtb build` instead, or \"\" for none",
    )
}

/// [`auto_dir`] from the two variables' values; `None` when neither is set (an empty value
/// counts as unset, as the XDG specification says).
fn auto_dir_of(xdg_cache: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(cache) = set(xdg_cache) {
        return Some(cache.join("oware").join("egtb"));
    }
    set(home).map(|home| home.join(".cache").join("oware").join("egtb"))
}

/// The tables of `selfplay.egtb = "auto"`: those of 0..=[`AUTO_TABLE_SEEDS`] seeds in
/// [`auto_dir`], built there when missing or unusable (tables already there are checked and
/// kept, so this is quick after the first time; each file is written atomically, so a killed
/// build, or two processes building at once, leave no damaged table). Tables of a cache
/// searched exactly up to fewer seeds ([`AUTO_MARKER`]) are rebuilt once. A table being built
/// is announced on standard error.
///
/// # Errors
/// No cache directory, or one that cannot be written.
pub fn load_auto() -> anyhow::Result<Tables> {
    let dir = auto_dir()?;
    let announce = |event: oware_egtb::BuildEvent<'_>| {
        if let oware_egtb::BuildEvent::Started { n, positions } = event {
            eprintln!(
                "selfplay.egtb = \"auto\": building the endgame table of {n} seeds \
                 ({positions} positions) in {} (once per machine)",
                dir.display()
            );
        }
    };
    let cached = cached_exact_up_to(&dir);
    let removed = remove_outdated(&dir, cached)?;
    if let (Some(first), Some(last)) = (removed.first(), removed.last()) {
        eprintln!(
            "selfplay.egtb = \"auto\": the cached tables of {first}..={last} seeds were built \
             before every entry was searched exactly; rebuilding them (once)"
        );
    }
    // Every table left in the cache now is as good as a new one, and every table built from
    // here on is searched up to AUTO_EXACT_UP_TO seeds: the marker can say so before the
    // build, so a build killed half-way keeps what it made.
    if cached != AUTO_EXACT_UP_TO {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let marker = dir.join(AUTO_MARKER);
        oware_engine::atomic_file::write_atomic(
            &marker,
            format!("{AUTO_EXACT_UP_TO}\n").as_bytes(),
        )
        .with_context(|| format!("writing {}", marker.display()))?;
    }
    let options = oware_egtb::SolveOptions::exact_up_to(AUTO_EXACT_UP_TO);
    let (_, tables) = oware_egtb::build_tables_with(&dir, AUTO_TABLE_SEEDS, &options, &announce)
        .with_context(|| {
            format!(
                "building the endgame tables of selfplay.egtb = \"auto\" in {}",
                dir.display()
            )
        })?;
    Ok(Tables::from_tables(&dir, tables))
}

/// Loads the tables of `selfplay.egtb`: `None` when it is empty (off), the cached tables of
/// [`load_auto`] for `"auto"`, else those of the directory.
///
/// # Errors
/// A missing, damaged or mismatched table file, named in the message; for `"auto"`, a cache
/// that cannot be made.
pub fn load(dir: &str) -> anyhow::Result<Option<Arc<Tables>>> {
    if dir.is_empty() {
        return Ok(None);
    }
    if dir == AUTO {
        return Ok(Some(Arc::new(load_auto()?)));
    }
    let tables = Tables::load(Path::new(dir))
        .with_context(|| format!("loading the endgame tables of selfplay.egtb = \"{dir}\""))?;
    Ok(Some(Arc::new(tables)))
}

/// The range of results (−1, 0 or 1 for the side to move) the tables allow at the game's
/// position given its history, or `None` when the board is not covered or the game is over.
pub fn result_range(tables: &Tables, game: &Game) -> Option<(f32, f32)> {
    let (worst, best) = tables.analyse(game)?.probe.outcomes();
    Some((worst.value(), best.value()))
}

/// Whether the game's position has an exact value in the tables (given its history).
pub fn is_exact(tables: &Tables, game: &Game) -> bool {
    tables
        .analyse(game)
        .is_some_and(|a| a.probe.bounds.is_exact())
}

/// The most nodes a thorough [`play_out`] lets one proof of a quiet move visit (the tests of
/// the play-out use it: nearly every exact start is played out).
pub const PLAY_OUT_PROOF_NODES: u64 = 200_000;

/// The most nodes self-play's [`play_out`] lets one proof visit. The proofs are most of a
/// worker's time with a larger budget: measured with tables of 0..=14 seeds, 60-second runs of
/// the default config (`docs/results/2026-12-05-egtb-selfplay-budget.md`), 200,000 nodes gave
/// 2,280 positions a second (9,025 without tables) and 2,000 nodes 8,492, with more games
/// played out (46% against 49%, but 1,357 against 458). A play-out that gives up leaves the
/// game to the search, which the tables still bound.
pub const SELFPLAY_PROOF_NODES: u64 = 2_000;

/// One ply of a [`play_out`]: the position before it, and the policy of perfect play there,
/// spread evenly over the moves the tables' intervals show to keep the value, or all on the
/// move played when only a proof showed it (`selfplay.table_samples` records these).
#[derive(Clone, Debug, PartialEq)]
pub struct TablePly {
    /// The position before the ply.
    pub position: Position,
    /// Its mover.
    pub side: Side,
    /// Perfect play's policy over the mover's six houses (sums to 1).
    pub policy: [f32; 6],
}

/// Finishes a game whose position has an exact value by perfect play from the tables; returns
/// the plies played ([`TablePly`]), or `None` (the game untouched) when no move could be
/// proven to keep the value with proofs of at most `proof_nodes` nodes each
/// ([`PLAY_OUT_PROOF_NODES`], [`SELFPLAY_PROOF_NODES`]).
///
/// At a position of exact value `v` (for its mover, given its history) every move's value lies
/// within `[0, v]` and some move's is `v`; that move's child then has the exact value
/// `n' − (v − c)` for its own mover (`c` seeds captured, `n'` left), so the value is carried
/// from one position to the next and each side secures its share. Each move is one that
/// [`keeping_move`] shows to keep the value (by its interval, a bounded [`Prover`] search from
/// the real history, or as the only move left once the others are shown to lose). The game ends because
/// positions since the last capture cannot repeat forever (and at the ply limit).
///
/// # Errors
/// A position the tables do not cover, or an illegal move — none of which a sound table allows.
pub fn play_out(
    tables: &Arc<Tables>,
    game: &mut Game,
    proof_nodes: u64,
) -> anyhow::Result<Option<Vec<TablePly>>> {
    let start = game.clone();
    let mut prover = Prover::new(Arc::clone(tables));
    let mut plies = Vec::new();
    let mut value: Option<u8> = None;
    while !game.is_over() {
        let analysis = tables.analyse(game).with_context(|| {
            format!(
                "playing out a table ending: the tables do not cover ply {}",
                game.ply()
            )
        })?;
        let v = match value {
            Some(v) => v,
            None if analysis.probe.bounds.is_exact() => analysis.probe.bounds.lo,
            None => anyhow::bail!("playing out a table ending: the start has no exact value"),
        };
        let n = analysis.probe.seeds;
        let Some(mv) = keeping_move(&analysis, game, v, &mut prover, proof_nodes) else {
            *game = start;
            return Ok(None);
        };
        plies.push(TablePly {
            position: *game.position(),
            side: game.to_move(),
            policy: perfect_policy(&analysis, v, mv),
        });
        game.play(mv)
            .context("playing out a table ending: an illegal table move")?;
        // The child's mover secures what the mover does not (see above).
        value = Some(n - v);
    }
    Ok(Some(plies))
}

/// The policy of perfect play at a position of exact value `v`: even over the moves whose
/// intervals start at `v` (each keeps it whatever the history since), else all on `played`,
/// the move a proof showed to keep it. No move is worth more than `v`, so those moves are the
/// securing ones ([`Analysis::securing_moves`]) exactly when the best low end is `v`.
fn perfect_policy(analysis: &Analysis, v: u8, played: Move) -> [f32; 6] {
    let keeping = if analysis.secured() == Some(v) {
        analysis.securing_moves()
    } else {
        vec![played]
    };
    let mut policy = [0.0f32; 6];
    let share = 1.0 / keeping.len() as f32;
    for m in keeping {
        policy[m.relative()] = share;
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_egtb::{Boards, Table, solve_table, table_len};
    use oware_engine::{Position, Side};

    #[test]
    fn a_cache_searched_exactly_up_to_fewer_seeds_loses_the_tables_above_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let touch = |n: usize| {
            std::fs::write(oware_egtb::table_path(dir.path(), n), b"").expect("write");
        };
        let present = || {
            (0..=AUTO_TABLE_SEEDS)
                .filter(|&n| oware_egtb::table_path(dir.path(), n).exists())
                .collect::<Vec<_>>()
        };
        // No marker: an older cache, whose tables are kept up to 5 seeds.
        (0..=AUTO_TABLE_SEEDS).for_each(touch);
        assert_eq!(cached_exact_up_to(dir.path()), UNMARKED_EXACT_UP_TO);
        let removed = remove_outdated(dir.path(), cached_exact_up_to(dir.path())).expect("removed");
        assert_eq!(removed, (6..=AUTO_TABLE_SEEDS).collect::<Vec<_>>());
        assert_eq!(present(), (0..=5).collect::<Vec<_>>());
        // A marker of 9 seeds: only the tables above 9 go (here 12 and 13 were never built).
        (0..=AUTO_TABLE_SEEDS).for_each(touch);
        for n in [12, 13] {
            std::fs::remove_file(oware_egtb::table_path(dir.path(), n)).expect("remove");
        }
        std::fs::write(dir.path().join(AUTO_MARKER), "9\n").expect("marker");
        assert_eq!(
            remove_outdated(dir.path(), cached_exact_up_to(dir.path())).expect("removed"),
            vec![10, 11, 14]
        );
        assert_eq!(present(), (0..=9).collect::<Vec<_>>());
        // A cache already searched as far as "auto" searches keeps everything.
        (0..=AUTO_TABLE_SEEDS).for_each(touch);
        std::fs::write(dir.path().join(AUTO_MARKER), format!("{AUTO_EXACT_UP_TO}"))
            .expect("marker");
        assert_eq!(
            remove_outdated(dir.path(), cached_exact_up_to(dir.path())).expect("removed"),
            Vec::<usize>::new()
        );
        assert_eq!(present().len(), AUTO_TABLE_SEEDS + 1);
        // A damaged marker counts as none.
        std::fs::write(dir.path().join(AUTO_MARKER), "x").expect("marker");
        assert_eq!(cached_exact_up_to(dir.path()), UNMARKED_EXACT_UP_TO);
    }

    /// The tables of 0..=`max` seeds, solved in memory.
    fn tiny_tables(max: u8) -> Tables {
        let mut tables: Vec<Table> = Vec::new();
        for n in 0..=max {
            let (t, _) = solve_table(n, &tables, &|_| {});
            tables.push(t);
        }
        Tables::from_tables(Path::new("memory"), tables)
    }

    /// Plays `game` out and checks the ending against what the tables said of its start:
    /// the result, the final score (unless the 25-seed ending stopped the count) and a record
    /// that replays. Returns whether it was played out; a play-out that gives up must leave
    /// the game untouched.
    fn check_play_out(tables: &Arc<Tables>, pos: Position, side: Side) -> bool {
        let mut game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
        // The interval with the game's (empty) history: what the play-out follows.
        let probe = tables.analyse(&game).expect("covered").probe;
        let outcome = probe.outcome().expect("an exact value decides the result");
        let (final_lo, _) = probe.final_seeds();
        let before = game.clone();
        let Some(plies) = play_out(tables, &mut game, PLAY_OUT_PROOF_NODES).expect("plays out")
        else {
            assert!(
                game.moves() == before.moves() && game.position() == before.position(),
                "a play-out that gives up leaves the game as it was"
            );
            return false;
        };
        // One ply per move played, each the position before it with a policy of perfect play
        // that holds the move played.
        assert_eq!(plies.len(), game.moves().len());
        let mut replay = before.clone();
        for (ply, &mv) in plies.iter().zip(game.moves()) {
            assert_eq!(ply.position, *replay.position());
            assert_eq!(ply.side, replay.to_move());
            assert!((ply.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(ply.policy[mv.relative()] > 0.0, "{:?}", ply.policy);
            for (i, &p) in ply.policy.iter().enumerate() {
                let legal = replay.legal_moves().iter().any(|m| m.relative() == i);
                assert!(p == 0.0 || legal, "policy on an illegal house {i}");
            }
            replay.play(mv).expect("legal");
        }
        let board = pos.board();
        let result = game.result().expect("the game is over");
        assert_eq!(result.value_for(side), outcome.value(), "{board:?} {side}");
        if result.reason != oware_engine::EndReason::Captured25 {
            // Without the early stop at 25 the mover ends with exactly its share.
            assert_eq!(result.score[side.index()] as u32, final_lo, "{board:?}");
        }
        // The record replays to the same result.
        let replayed = Game::replay_from(
            pos,
            oware_engine::DEFAULT_MAX_PLIES,
            game.moves().iter().copied(),
            |_, _, _| {},
        );
        assert_eq!(replayed.ok().and_then(|g| g.result()), Some(result));
        true
    }

    #[test]
    fn a_play_out_reaches_the_final_score_the_tables_give() {
        let tables = Arc::new(tiny_tables(6));
        // Every board of 4 to 6 seeds, South and North to move, with captured totals that
        // leave the result open: every 16th start exact after every history and every 64th
        // exact only by its entry value (the start of a game has an empty history) is tried.
        // A play-out may give up (its proofs from the real history have a budget); each one
        // played out must end as the tables said, and nearly all must be played out.
        let (mut all_history_seen, mut entry_seen) = (0, 0);
        // (start, its side, whether it is exact after every history): the play-outs then run
        // on every thread.
        let mut starts: Vec<(Position, Side, bool)> = Vec::new();
        for (n, board) in (4..=6usize)
            .flat_map(|n| Boards::new(n, 0, table_len(n)).map(move |(_, board)| (n as u8, board)))
        {
            for side in [Side::South, Side::North] {
                let south = (48 - n) / 2;
                let pos = Position::from_parts(board, [south, 48 - n - south], side)
                    .expect("valid position");
                let game = Game::from_position(pos, oware_engine::DEFAULT_MAX_PLIES);
                if game.is_over() || !is_exact(&tables, &game) {
                    continue;
                }
                if tables.bounds(&pos).is_some_and(|b| b.is_exact()) {
                    all_history_seen += 1;
                    if all_history_seen % 16 == 0 {
                        starts.push((pos, side, true));
                    }
                } else {
                    entry_seen += 1;
                    if entry_seen % 64 == 0 {
                        starts.push((pos, side, false));
                    }
                }
            }
        }
        let played: Vec<(bool, bool)> = {
            use rayon::prelude::*;
            starts
                .par_iter()
                .map(|&(pos, side, all)| (all, check_play_out(&tables, pos, side)))
                .collect()
        };
        let count = |all: bool, only_played: bool| {
            played
                .iter()
                .filter(|&&(a, p)| a == all && (p || !only_played))
                .count() as u32
        };
        let (all_history, all_history_played) = (count(true, false), count(true, true));
        let (entry_only, entry_played) = (count(false, false), count(false, true));
        eprintln!(
            "all-history exact: {all_history_played} of {all_history} played out; \
             entry-exact: {entry_played} of {entry_only}"
        );
        // The sharper all-history intervals (exits at entry values) make starts exact whose
        // children's stored intervals stay open, so these can need proofs too: 633 of the 634
        // tried were played out on 2026-12-06, and 372 of the 373 entry-exact ones.
        assert!(
            all_history >= 500 && all_history_played * 10 >= all_history * 9,
            "{all_history_played} of {all_history} starts exact after every history played out"
        );
        // Not vacuous: most entry-exact starts tried are played out within the budget.
        assert!(
            entry_played * 10 >= entry_only * 7 && entry_only >= 300,
            "{entry_played} of {entry_only} entry-exact starts played out"
        );
    }

    #[test]
    fn the_auto_tables_live_in_the_xdg_cache_else_under_home() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(
            auto_dir_of(os("/c"), os("/h")),
            Some(PathBuf::from("/c/oware/egtb"))
        );
        assert_eq!(
            auto_dir_of(os(""), os("/h")),
            Some(PathBuf::from("/h/.cache/oware/egtb"))
        );
        assert_eq!(
            auto_dir_of(None, os("/h")),
            Some(PathBuf::from("/h/.cache/oware/egtb"))
        );
        assert_eq!(auto_dir_of(None, os("")), None);
        assert_eq!(auto_dir_of(None, None), None);
    }

    #[test]
    fn an_empty_directory_setting_is_off_and_a_missing_one_is_an_error() {
        assert!(load("").expect("off").is_none());
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("none");
        let err = load(missing.to_str().expect("utf-8")).expect_err("no tables");
        let msg = format!("{err:#}");
        assert!(
            msg.contains("selfplay.egtb") && msg.contains("oware-00.egtb"),
            "{msg}"
        );
    }
}
