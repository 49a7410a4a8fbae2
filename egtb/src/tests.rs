//! The tables against an exact brute-force solver of the real game, and hand-built positions.

use super::brute::{BruteSolver, random_history, sampled_game, south_to_move};
use super::probe::repeat_rows;
use super::*;
use oware_engine::Game;
use oware_engine::Move;
use oware_engine::Position;
use oware_engine::Side;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;

/// What the tests' tables search exactly: up to 6 seeds, within a budget that keeps them quick.
const TEST_OPTIONS: SolveOptions = SolveOptions {
    exact_up_to: 6,
    node_budget: 200_000,
    proof_budget: 0,
    shared_proofs: true,
};

/// [`TEST_OPTIONS`] with the path search alone (no shared proofs), for the tests of it.
const PATH_SEARCH_ONLY: SolveOptions = SolveOptions {
    shared_proofs: false,
    ..TEST_OPTIONS
};

/// The tables of 0..=8 seeds, solved once for all tests.
fn tables() -> &'static [Table] {
    static T: OnceLock<Vec<Table>> = OnceLock::new();
    T.get_or_init(|| {
        let mut tables = Vec::new();
        for n in 0..=8 {
            let (t, s) = solve_table_with(n, &tables, &TEST_OPTIONS, &|_| {});
            eprintln!(
                "table {n}: {} entries exact of {}, {} searched, {} settled, {} nodes, {:?}",
                s.entry_exact, s.positions, s.searched, s.settled, s.search_nodes, s.elapsed
            );
            tables.push(t);
        }
        tables
    })
}

fn set() -> Tables {
    Tables::from_tables(std::path::Path::new("mem"), tables().to_vec())
}

fn south(board: [u8; 12]) -> Position {
    south_to_move(board)
}

/// The smallest tables where the exhaustive solver is quick.
const SOLVED_BY_BRUTE_FORCE: u8 = 3;

#[test]
fn every_interval_holds_the_real_games_value_and_every_exact_value_is_it() {
    let mut solver = BruteSolver::new();
    let mut checked = 0u64;
    let mut exact = 0u64;
    for n in 0..=SOLVED_BY_BRUTE_FORCE {
        let t = &tables()[n as usize];
        for (i, board) in Boards::new(n as usize, 0, t.len()) {
            let b = t.at(i);
            let v = solver.value(&board, n);
            assert!(
                b.lo <= v && v <= b.hi,
                "n={n} {board:?}: the real game gives {v}, the table {b:?}"
            );
            checked += 1;
            exact += b.is_exact() as u64;
        }
    }
    assert_eq!(checked, 1 + 12 + 78 + 364);
    // Not a vacuous check: many are exact, and many are not.
    assert!(exact > 100 && exact < checked - 100, "{exact} of {checked}");
}

#[test]
fn entry_intervals_hold_the_value_after_a_capture_and_narrow_the_stored_ones() {
    // Right after a capture (an empty history) the value is the brute-force solver's; the
    // entry interval holds it and lies inside the stored one.
    let mut solver = BruteSolver::new();
    let mut narrower = 0;
    for n in 0..=SOLVED_BY_BRUTE_FORCE {
        let t = &tables()[n as usize];
        for (i, board) in Boards::new(n as usize, 0, t.len()) {
            let stored = t.at(i);
            let entry = entry_bounds(tables(), n, i);
            let v = solver.value(&board, n);
            assert!(
                entry.lo <= v && v <= entry.hi,
                "n={n} {board:?}: {v} vs {entry:?}"
            );
            assert!(stored.lo <= entry.lo && entry.hi <= stored.hi);
            narrower += (entry != stored) as u32;
        }
    }
    assert!(narrower > 0);
    // Not vacuous on larger tables either: many entry intervals are narrower.
    for n in 4..=8u8 {
        let t = &tables()[n as usize];
        for i in 0..t.len() {
            let (stored, entry) = (t.at(i), entry_bounds(tables(), n, i));
            assert!(stored.lo <= entry.lo && entry.hi <= stored.hi);
            narrower += (entry != stored) as u32;
        }
    }
    assert!(narrower > 1000, "{narrower}");
}

#[test]
fn intervals_hold_after_histories_and_their_ends_are_reached() {
    let mut solver = BruteSolver::new();
    let mut rng = SmallRng::seed_from_u64(12);
    let (mut histories, mut lo_reached, mut hi_reached, mut inexact) = (0u64, 0u64, 0u64, 0u64);
    for n in 2..=SOLVED_BY_BRUTE_FORCE {
        let t = &tables()[n as usize];
        for (i, board) in Boards::new(n as usize, 0, t.len()) {
            let b = t.at(i);
            let (mut saw_lo, mut saw_hi) = (false, false);
            for _ in 0..12 {
                let Some((start, houses)) = random_history(&board, n, &mut rng) else {
                    continue;
                };
                histories += 1;
                // The value after this history v: lo ≤ v ≤ hi.
                assert!(
                    solver.secures_after(&start, n, b.lo, &houses),
                    "n={n} {board:?} {houses:?}"
                );
                assert!(
                    !solver.secures_after(&start, n, b.hi + 1, &houses),
                    "n={n} {board:?} {houses:?}"
                );
                saw_lo |= !solver.secures_after(&start, n, b.lo + 1, &houses);
                saw_hi |= solver.secures_after(&start, n, b.hi, &houses);
            }
            if !b.is_exact() {
                inexact += 1;
                lo_reached += saw_lo as u64;
                hi_reached += saw_hi as u64;
            }
        }
    }
    assert!(histories > 3000, "{histories}");
    // The intervals are not loose: a dozen random histories already reach their lower end in
    // over half of the cycle-dependent positions, their upper end in over a third.
    assert!(
        lo_reached * 2 > inexact && hi_reached * 3 > inexact,
        "{lo_reached} {hi_reached} of {inexact}"
    );
}

#[test]
fn intervals_after_a_history_hold_the_real_games_value() {
    // Every board of 2 and 3 seeds after random quiet histories: the entry interval widened by
    // the rows a repetition of the history would give holds the value after that history.
    let tb = set();
    let mut solver = BruteSolver::new();
    let mut rng = SmallRng::seed_from_u64(21);
    let (mut histories, mut narrower) = (0u64, 0u64);
    for n in 2..=SOLVED_BY_BRUTE_FORCE {
        let t = &tables()[n as usize];
        for (_, board) in Boards::new(n as usize, 0, t.len()) {
            for _ in 0..12 {
                let Some((start, houses)) = random_history(&board, n, &mut rng) else {
                    continue;
                };
                let mut game = Game::from_position(south(start), u32::MAX);
                for &h in &houses {
                    game.play(Move::from_relative(game.to_move(), h))
                        .expect("legal");
                }
                let pos = *game.position();
                let seen = game.seen_since_capture();
                let repeats = repeat_rows(&seen[..seen.len() - 1], pos.to_move());
                let b = tb.bounds_after(&pos, repeats).expect("covered");
                histories += 1;
                assert!(
                    solver.secures_after(&start, n, b.lo, &houses),
                    "n={n} {start:?} {houses:?} {b:?}"
                );
                assert!(
                    !solver.secures_after(&start, n, b.hi + 1, &houses),
                    "n={n} {start:?} {houses:?} {b:?}"
                );
                narrower += u64::from(b != tb.bounds(&pos).expect("covered"));
            }
        }
    }
    eprintln!("{narrower} of {histories} intervals narrower than the stored one");
    assert!(histories > 3000, "{histories}");
    // The history narrows the interval that holds after every history in many of them.
    assert!(narrower * 20 > histories, "{narrower} of {histories}");
}

#[test]
fn results_follow_from_the_interval_for_every_split_of_the_captured_seeds() {
    // The real game, 25-seed ending included, against Probe::outcome.
    let mut solver = BruteSolver::new();
    let tb = set();
    let mut decided = 0;
    for n in 1..=SOLVED_BY_BRUTE_FORCE {
        for (_, board) in Boards::new(n as usize, 0, table_len(n as usize)) {
            for own in 0..=(48 - n) {
                let other = 48 - n - own;
                if own >= 25 || other >= 25 {
                    continue;
                }
                let pos = Position::from_parts(board, [own, other], Side::South).expect("valid");
                let game = Game::from_position(pos, u32::MAX);
                if game.is_over() {
                    continue;
                }
                let probe = tb.probe(&pos).expect("covered");
                let (worst, best) = probe.outcomes();
                let real = solver.outcome(&game);
                assert!(
                    worst <= real && real <= best,
                    "{board:?} {own}-{other}: {real:?} vs {probe:?}"
                );
                if let Some(o) = probe.outcome() {
                    assert_eq!(o, real);
                    decided += 1;
                }
            }
        }
    }
    assert!(decided > 500, "{decided}");
}

#[test]
fn a_forced_capture_chain() {
    // South sows f (2 seeds): A becomes 2, B 3, both are taken (5); North keeps F and must
    // give it to South's a, where South cannot feed back and collects it: all 6 for South.
    let pos = south([0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 1]);
    let tb = set();
    assert_eq!(tb.bounds(&pos), Some(Bounds::exact(6)));
    let a = tb
        .analyse(&Game::from_position(pos, 1000))
        .expect("covered");
    assert_eq!(a.optimal_moves(), vec![Move::from_relative(Side::South, 5)]);
    assert_eq!(BruteSolver::new().value(&super::movers_board(&pos), 6), 6);
}

#[test]
fn a_grand_slam_saves_the_defender() {
    // The same chain would take all of North's seeds: it is cancelled, South's row is empty
    // after the move and North, unable to feed it, collects all five.
    let pos = south([0, 0, 0, 0, 0, 2, 1, 2, 0, 0, 0, 0]);
    let (next, effect) = pos
        .play(Move::from_relative(Side::South, 5))
        .expect("legal");
    assert!(effect.grand_slam && effect.captured == 0);
    assert!(next.legal_moves().is_empty());
    assert_eq!(set().bounds(&pos), Some(Bounds::exact(0)));
    // North to move there (the table is seen from North's side): North keeps its 5.
    assert_eq!(set().bounds(&next), Some(Bounds::exact(5)));
}

#[test]
fn must_feed_and_no_move_endings() {
    let tb = set();
    // North's row is empty and no South house reaches it: South collects its row.
    let stuck = south([1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(stuck.legal_moves().is_empty());
    assert_eq!(tb.bounds(&stuck), Some(Bounds::exact(2)));
    // South's row is empty: North collects.
    let empty = south([0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 1]);
    assert_eq!(tb.bounds(&empty), Some(Bounds::exact(0)));
    // North's row is empty: only f, which feeds it, is legal, although c has seeds.
    let feed = south([0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    let a = tb
        .analyse(&Game::from_position(feed, 1000))
        .expect("covered");
    let moves: Vec<_> = a.moves.iter().map(|m| m.mv.to_string()).collect();
    assert_eq!(moves, ["f"]);
    let v = BruteSolver::new().value(&super::movers_board(&feed), 2);
    let b = tb.bounds(&feed).expect("covered");
    assert!(b.lo <= v && v <= b.hi);
}

#[test]
fn the_game_history_narrows_the_interval_and_stays_sound() {
    // Along random games of up to 8 seeds, the interval of the game's position given its
    // history lies inside the stored one, and repeating moves are exact.
    let tb = set();
    let mut rng = SmallRng::seed_from_u64(3);
    let mut repeats = 0;
    for _ in 0..300 {
        let n = rng.random_range(2..=8u8);
        let mut board = [0u8; 12];
        for _ in 0..n {
            board[rng.random_range(0..12)] += 1;
        }
        let mut game = Game::from_position(south(board), 1000);
        for _ in 0..60 {
            let Some(a) = tb.analyse(&game) else { break };
            let stored = tb.bounds(game.position()).expect("covered");
            assert!(stored.lo <= a.probe.bounds.lo && a.probe.bounds.hi <= stored.hi);
            repeats += a.moves.iter().filter(|m| m.repeats).count();
            let m = a.moves[rng.random_range(0..a.moves.len())].mv;
            game.play(m).expect("legal");
        }
    }
    assert!(repeats > 0);
}

#[test]
fn every_proof_agrees_with_the_real_game() {
    // Right after a capture and after sampled histories, what the prover settles is what the
    // exhaustive solver of the real game says; and it settles most questions.
    let tb = std::sync::Arc::new(set());
    let mut prover = Prover::new(tb.clone());
    let mut solver = BruteSolver::new();
    let (mut settled, mut asked) = (0u32, 0u32);
    for n in 1..=SOLVED_BY_BRUTE_FORCE {
        for (_, board) in Boards::new(n as usize, 0, table_len(n as usize)) {
            for t in 1..=n {
                let pos = Position::from_parts(board, [25 - t, 48 - n - (25 - t)], Side::South)
                    .expect("valid");
                let p = prover.secures(&pos, &[pos.key()], t as i32, 64, 1 << 20, None);
                let real = solver.secures(&board, n, t);
                asked += 1;
                match p {
                    Proof::Yes => assert!(real, "n={n} {board:?} t={t}: proved, but loses"),
                    Proof::No => assert!(!real, "n={n} {board:?} t={t}: refuted, but secures"),
                    Proof::Unknown => continue,
                }
                settled += 1;
            }
        }
    }
    assert!(settled * 10 >= asked * 9, "{settled} of {asked} settled");
    // With a history: the position reached by quiet moves from a sampled start.
    let mut rng = SmallRng::seed_from_u64(11);
    let mut with_history = 0;
    for _ in 0..400 {
        let Some((start, houses, game)) =
            sampled_game(&mut rng, SOLVED_BY_BRUTE_FORCE, |n, rng| {
                25 - rng.random_range(1..=n)
            })
        else {
            continue;
        };
        let n: u8 = game.position().board().iter().sum();
        let t = 25 - game.position().captured()[game.to_move().index()];
        let p = prover.secures(
            game.position(),
            game.seen_since_capture(),
            t as i32,
            64,
            1 << 20,
            None,
        );
        let real = solver.secures_after(&start, n, t, &houses);
        match p {
            Proof::Yes => assert!(real, "{start:?} {houses:?} t={t}: proved, but loses"),
            Proof::No => assert!(!real, "{start:?} {houses:?} t={t}: refuted, but secures"),
            Proof::Unknown => continue,
        }
        with_history += 1;
    }
    assert!(with_history > 100, "{with_history}");
}

/// Checks the entry values of the table of `n` seeds at the boards `boards` against the
/// brute-force solver of the real game from an empty history, for each board the solver
/// settles within `limit` nodes: every entry interval (and every all-history one) holds the
/// real value, and every exact entry value is it. Returns how many boards were checked and
/// how many of them were exact.
fn check_entries(n: u8, boards: impl Iterator<Item = (u64, [u8; 12])>, limit: u64) -> (u64, u64) {
    check_entries_in(tables(), n, boards, limit)
}

/// [`check_entries`] on the table of `n` seeds of `tables`.
fn check_entries_in(
    tables: &[Table],
    n: u8,
    boards: impl Iterator<Item = (u64, [u8; 12])>,
    limit: u64,
) -> (u64, u64) {
    let t = &tables[n as usize];
    let mut solver = BruteSolver::new();
    let (mut checked, mut exact) = (0u64, 0u64);
    for (i, board) in boards {
        let Some(v) = solver.try_value(&board, n, limit) else {
            continue;
        };
        let all = t.at(i);
        let e = t.entry(i).expect("built with entry values");
        assert!(
            all.lo <= v && v <= all.hi,
            "n={n} {board:?}: all-history {all:?}, real {v}"
        );
        assert!(
            e.lo <= v && v <= e.hi,
            "n={n} {board:?}: entry {e:?}, real {v}"
        );
        assert!(all.lo <= e.lo && e.hi <= all.hi);
        checked += 1;
        exact += e.is_exact() as u64;
    }
    (checked, exact)
}

#[test]
fn every_exact_entry_value_is_the_real_games_after_an_empty_history_up_to_3_seeds() {
    for n in 0..=SOLVED_BY_BRUTE_FORCE {
        let len = table_len(n as usize);
        let (checked, exact) = check_entries(n, Boards::new(n as usize, 0, len), u64::MAX);
        assert_eq!(checked, len);
        // Within the tests' exact limit and budget, every entry is settled.
        assert_eq!(exact, len, "n={n}: {exact} of {len} entries exact");
    }
}

/// `count` boards of the table of `n` seeds drawn with `seed`.
fn sample(n: u8, count: usize, seed: u64) -> Vec<(u64, [u8; 12])> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let len = table_len(n as usize);
    (0..count)
        .map(|_| {
            let i = rng.random_range(0..len);
            (i, unrank(i, n as usize).expect("in range"))
        })
        .collect()
}

/// The brute-force solver's node limit per board in the quick tests: the boards it cannot
/// settle cost it the whole limit, most of the test's time.
const QUICK_LIMIT: u64 = 20_000;

#[test]
fn sampled_exact_entry_values_are_the_real_games_at_4_and_5_seeds() {
    for n in 4..=5u8 {
        let started = std::time::Instant::now();
        let (checked, exact) =
            check_entries(n, sample(n, 100, 4 + n as u64).into_iter(), QUICK_LIMIT);
        // Every entry of these tables is exact; the solver settles some of the sampled boards within its limit.
        assert_eq!(exact, checked, "n={n}");
        assert!(
            checked >= 15,
            "n={n}: only {checked} of 100 boards settled by brute force"
        );
        eprintln!(
            "n={n}: {checked} of 100 boards settled by brute force, all equal, in {:?}",
            started.elapsed()
        );
    }
}

#[test]
#[ignore = "slow: the brute-force solver on every board of 4 and 5 seeds (run with --ignored)"]
fn every_exact_entry_value_is_the_real_games_at_4_and_5_seeds() {
    for n in 4..=5u8 {
        let len = table_len(n as usize);
        let (checked, exact) = check_entries(n, Boards::new(n as usize, 0, len), 50_000_000);
        assert_eq!(exact, checked, "n={n}");
        eprintln!("n={n}: {checked} of {len} boards settled by brute force, all equal");
    }
}

/// The brute-force solver's node limit per board at 6 to 8 seeds: each board it cannot settle
/// costs the whole limit (at 5,000,000 the test had not finished the 6-seed boards in 25
/// minutes). At this limit it settles 20, 14 and 7 of the 200 sampled boards of 6, 7 and 8
/// seeds, and the test takes about 13 minutes on 2 cores (2026-12-07). The boards it settles
/// are those with short quiet manoeuvres; the hard ones are checked against the path search
/// instead (`shared_proofs_settle_every_entry_of_tables_6_and_7_as_the_path_search_bounds_them`).
const SAMPLED_LIMIT: u64 = 200_000;

/// Boards sampled per table at 6 to 8 seeds.
const SAMPLED_BOARDS: usize = 200;

#[test]
#[ignore = "slow: the default build of tables 0..=8 and the brute-force solver on sampled boards of 6 to 8 seeds (run with --ignored)"]
fn sampled_entry_values_are_the_real_games_at_6_to_8_seeds() {
    // The tables as `oware egtb build` makes them (every entry exact up to 8 seeds), not the
    // quicker test tables.
    let mut built: Vec<Table> = Vec::new();
    for n in 0..=8 {
        let (t, _) = solve_table_with(n, &built, &SolveOptions::default(), &|_| {});
        built.push(t);
    }
    for n in 6..=8u8 {
        let started = std::time::Instant::now();
        let (checked, exact) = check_entries_in(
            &built,
            n,
            sample(n, SAMPLED_BOARDS, 60 + n as u64).into_iter(),
            SAMPLED_LIMIT,
        );
        assert_eq!(
            exact, checked,
            "n={n}: every entry is exact in the default build"
        );
        assert!(
            checked >= 5,
            "n={n}: only {checked} boards settled by brute force"
        );
        eprintln!(
            "n={n}: {checked} of {SAMPLED_BOARDS} sampled boards settled by brute force, each equal to its exact entry value, in {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn entry_values_are_mostly_exact_and_never_looser_than_the_old_entry_bounds() {
    for n in 0..=8u8 {
        let t = &tables()[n as usize];
        let mut exact = 0u64;
        for i in 0..t.len() {
            let e = t.entry(i).expect("entry values");
            let old = entry_bounds(tables(), n, i);
            assert!(
                old.lo <= e.lo && e.hi <= old.hi,
                "n={n} i={i}: {e:?} vs {old:?}"
            );
            exact += e.is_exact() as u64;
        }
        assert_eq!(Some(exact), t.entry_exact_count());
        eprintln!("n={n}: {exact} of {} entries exact", t.len());
        // The fixpoints alone decide most entries (at least 70% of them up to 8 seeds); with
        // the search every entry is exact up to 6 seeds (the tables' `exact_up_to`).
        assert!(exact * 10 >= t.len() * 7, "n={n}: {exact} of {}", t.len());
        if n <= 6 {
            assert_eq!(exact, t.len(), "n={n}");
        }
    }
}

#[test]
fn open_entries_met_inside_another_entrys_search_are_settled_there() {
    // Table 6 again, from the shared smaller tables: its exact search settles entries inside
    // other entries' searches (results that no repetition above the node touched), and every
    // entry exact either way matches the shared table's, which the brute-force checks cover.
    let (t, s) = solve_table_with(6, &tables()[..6], &PATH_SEARCH_ONLY, &|_| {});
    assert!(
        s.searched > 0,
        "table 6 has entries the fixpoints leave open"
    );
    assert!(
        s.harvested > 0,
        "no entry settled inside another's search: {s:?}"
    );
    assert!(s.harvested + s.settled <= s.positions);
    let shared = &tables()[6];
    for i in 0..t.len() {
        let (a, b) = (t.entry(i).expect("entry"), shared.entry(i).expect("entry"));
        if a.is_exact() && b.is_exact() {
            assert_eq!(a, b, "board {i}: the two builds disagree");
        }
    }
}

/// Two sound builds of one entry (board `i`): each exact value lies in the other's interval.
fn assert_each_exact_inside_the_other(i: u64, a: Bounds, b: Bounds) {
    for (x, y) in [(a, b), (b, a)] {
        if x.is_exact() {
            assert!(
                y.lo <= x.lo && x.hi <= y.hi,
                "board {i}: {x:?} outside {y:?}"
            );
        }
    }
}

#[test]
fn entries_whose_lines_meet_open_entries_are_settled_soundly() {
    // Table 6 without the exact search keeps entries open, and so does table 7; table 8's
    // search meets them (a capture takes two or three seeds a house, so table 8 captures into
    // table 6 and below) and counts them at one end of their interval at a time. It is built
    // again over the shared tables (table 6 searched: nearly all exact), and the two builds
    // must agree: every exact entry of one lies in the other's interval.
    let options = SolveOptions {
        exact_up_to: 8,
        node_budget: 2_000,
        proof_budget: 0,
        shared_proofs: false,
    };
    let mut partial: Vec<Table> = tables()[..6].to_vec();
    let stop_at_5 = SolveOptions {
        exact_up_to: 5,
        ..options
    };
    let (t6, s6) = solve_table_with(6, &partial, &stop_at_5, &|_| {});
    assert!(s6.entry_exact < s6.positions, "table 6 keeps open entries");
    partial.push(t6);
    partial.push(tables()[7].clone());
    let (loose, s) = solve_table_with(8, &partial, &options, &|_| {});
    assert!(
        s.settled_past_open > 0,
        "no entry settled past an open one: {s:?}"
    );
    let (tight, _) = solve_table_with(8, &tables()[..8], &options, &|_| {});
    let mut both = 0u64;
    for i in 0..loose.len() {
        let (a, b) = (
            loose.entry(i).expect("entry"),
            tight.entry(i).expect("entry"),
        );
        assert_each_exact_inside_the_other(i, a, b);
        both += (a.is_exact() && b.is_exact()) as u64;
    }
    eprintln!(
        "table 8 over inexact tables 6 and 7: {} settled, {} of them past open entries; {both} of {} exact in both builds",
        s.settled,
        s.settled_past_open,
        loose.len()
    );
}

#[test]
fn the_proof_pass_settles_open_entries_as_the_exact_search_does() {
    // Table 6 with an exact search too small to settle much: the proof-number pass takes the
    // entries it leaves open. Where the shared table 6 (a search of 200,000 nodes an entry)
    // is exact too, the two independent methods must agree, and every interval of one must
    // hold the other's exact values.
    let weak = SolveOptions {
        exact_up_to: 6,
        node_budget: 50,
        proof_budget: 0,
        shared_proofs: false,
    };
    let (before, _) = solve_table_with(6, &tables()[..6], &weak, &|_| {});
    let proved = SolveOptions {
        proof_budget: 50_000,
        ..weak
    };
    let (after, s) = solve_table_with(6, &tables()[..6], &proved, &|_| {});
    let open = before.len() - before.entry_exact_count().expect("entries");
    assert_eq!(s.proof_searched, open, "{s:?}");
    assert!(s.proof_settled > 0, "the proof pass settled nothing: {s:?}");
    assert_eq!(
        after.entry_exact_count(),
        Some(s.entry_exact),
        "the stats count the proved entries"
    );
    assert_eq!(before.codes(), after.codes(), "only entries change");
    let shared = &tables()[6];
    let mut agree = 0u64;
    for i in 0..after.len() {
        let (a, b, old) = (
            after.entry(i).expect("entry"),
            shared.entry(i).expect("entry"),
            before.entry(i).expect("entry"),
        );
        assert!(
            old.lo <= a.lo && a.hi <= old.hi,
            "board {i}: {a:?} left {old:?}"
        );
        assert_each_exact_inside_the_other(i, a, b);
        agree += (a.is_exact() && b.is_exact() && !old.is_exact()) as u64;
    }
    assert!(agree > 0);
    eprintln!(
        "table 6: {open} entries open after a search of 50 nodes, {} settled by proofs ({} nodes), {agree} of them exact in the shared table too",
        s.proof_settled, s.proof_nodes
    );
}

#[test]
fn shared_proofs_settle_every_entry_of_tables_6_and_7_as_the_path_search_bounds_them() {
    // Tables 6 and 7 with the search that shares proofs between lines: every entry exact
    // (the path search alone, with a budget far larger than the shared search needs, leaves
    // some open). Every exact value of either build lies in the other's interval, and where
    // both are exact they agree; the brute-force checks cover table 6's shared build through
    // `tables()` (up to 5 seeds on every board, and sampled boards of 6 to 8 seeds).
    let shared = SolveOptions {
        exact_up_to: 7,
        ..TEST_OPTIONS
    };
    let path_only = SolveOptions {
        exact_up_to: 7,
        ..PATH_SEARCH_ONLY
    };
    let mut with: Vec<Table> = tables()[..6].to_vec();
    let mut without: Vec<Table> = tables()[..6].to_vec();
    for n in 6..=7u8 {
        let (a, s) = solve_table_with(n, &with, &shared, &|_| {});
        assert_eq!(
            s.entry_exact, s.positions,
            "table {n}: shared proofs leave entries open: {s:?}"
        );
        assert!(s.shared_settled > 0 && s.shared_reused > 0, "{s:?}");
        let (b, p) = solve_table_with(n, &without, &path_only, &|_| {});
        assert_eq!(p.shared_searched, 0, "the path search alone: {p:?}");
        let mut both = 0u64;
        for i in 0..a.len() {
            let (x, y) = (a.entry(i).expect("entry"), b.entry(i).expect("entry"));
            assert_each_exact_inside_the_other(i, x, y);
            both += y.is_exact() as u64;
        }
        eprintln!(
            "table {n}: shared proofs {} exact ({} settled, {} nodes, {} reused); the path search alone {both} exact",
            s.entry_exact, s.shared_settled, s.shared_nodes, s.shared_reused
        );
        with.push(a);
        without.push(b);
    }
}

#[test]
fn perfect_moves_keep_the_real_games_value_up_to_3_seeds() {
    let tables = std::sync::Arc::new(set());
    let mut solver = BruteSolver::new();
    let mut played = 0;
    for n in 1..=SOLVED_BY_BRUTE_FORCE {
        for (_, board) in Boards::new(n as usize, 0, table_len(n as usize)) {
            let game = Game::from_position(south(board), oware_engine::DEFAULT_MAX_PLIES);
            let Some((mv, probe)) = perfect_move(&tables, &game, 200_000) else {
                continue;
            };
            let v = probe.bounds.lo;
            assert!(probe.bounds.is_exact());
            assert_eq!(
                v,
                solver.value(&board, n),
                "{board:?}: the position's value"
            );
            let mut child = game.clone();
            let effect = child.play(mv).expect("a legal move");
            if child.is_over() {
                continue;
            }
            let c = effect.captured;
            let left = n - c;
            // The child's mover secures exactly what the mover leaves it: n − v of the board
            // before the move, of which the capture took none of its own.
            let share = left - (v - c);
            if c > 0 {
                let child_board = movers_board(child.position());
                assert_eq!(solver.value(&child_board, left), share, "{board:?} {mv}");
            } else {
                let h = mv.relative();
                assert!(
                    solver.secures_after(&board, n, share, &[h]),
                    "{board:?} {mv}"
                );
                assert!(
                    !solver.secures_after(&board, n, share + 1, &[h]),
                    "{board:?} {mv}"
                );
            }
            played += 1;
        }
    }
    assert!(played > 200, "only {played} perfect moves checked");
}
