//! The rules of `docs/rules.md`, one test per rule text.

use oware_engine::{EndReason, Game, Move, PlayError, Position, Side, Winner, perft};

fn mv(s: &str) -> Move {
    s.parse().expect("test move")
}

/// A position with `board`, the remaining seeds split between the captured totals (South gets
/// the larger half unless `captured` is given).
fn pos(board: [u8; 12], captured: Option<[u8; 2]>, to_move: Side) -> Position {
    let on_board: u8 = board.iter().sum();
    let captured = captured.unwrap_or_else(|| {
        let rest = 48 - on_board;
        [rest - rest / 2, rest / 2]
    });
    Position::from_parts(board, captured, to_move).expect("valid test position")
}

#[test]
fn start_position() {
    let p = Position::start();
    assert_eq!(p.board(), &[4; 12]);
    assert_eq!(p.to_move(), Side::South);
    let legal: Vec<String> = p.legal_moves().iter().map(|m| m.to_string()).collect();
    assert_eq!(legal, ["a", "b", "c", "d", "e", "f"]);
}

#[test]
fn notation_round_trips_and_rejects_junk() {
    for (i, s) in ["a", "b", "c", "d", "e", "f", "A", "B", "C", "D", "E", "F"]
        .iter()
        .enumerate()
    {
        let m = mv(s);
        assert_eq!(m.house(), i);
        assert_eq!(m.to_string(), *s);
    }
    for bad in ["", "g", "G", "aa", "1", " a", "é"] {
        assert!(bad.parse::<Move>().is_err(), "{bad:?} parsed");
    }
}

#[test]
fn sowing_is_counter_clockwise() {
    // South c with 4: d e f A get one each.
    let (p, e) = Position::start().play(mv("c")).expect("legal");
    assert_eq!(p.board(), &[4, 4, 0, 5, 5, 5, 5, 4, 4, 4, 4, 4]);
    assert_eq!(e.captured, 0);
    assert_eq!(p.to_move(), Side::North);
    // North F with 4 wraps to a b c d.
    let (p, _) = p.play(mv("F")).expect("legal");
    assert_eq!(p.board(), &[5, 5, 1, 6, 5, 5, 5, 4, 4, 4, 4, 0]);
}

#[test]
fn worked_capture_example() {
    // South e holds 3; North A=1, B=2, seeds elsewhere on North's row.
    let board = [1, 1, 1, 1, 3, 1, 1, 2, 4, 4, 4, 4];
    let p = pos(board, None, Side::South);
    let (after, effect) = p.play(mv("e")).expect("legal");
    assert_eq!(effect.captured, 5, "B=3 then A=2");
    assert!(!effect.grand_slam);
    assert_eq!(after.board()[6], 0);
    assert_eq!(after.board()[7], 0);
    assert_eq!(
        after.board()[5],
        2,
        "f received a seed and is South's own: not captured"
    );
    assert_eq!(after.captured()[0], p.captured()[0] + 5);
}

#[test]
fn capture_chain_stops_at_other_count() {
    // Last seed on C (makes 3), B would make 5 (not captured), A holds 1 → 2 but chain broke.
    let board = [0, 0, 0, 0, 0, 4, 1, 4, 2, 0, 0, 6];
    let p = pos(board, None, Side::South);
    let (after, effect) = p.play(mv("f")).expect("legal");
    // f sows A(2) B(5) C(3) D(1): last is D=1, no capture.
    assert_eq!(effect.captured, 0);
    assert_eq!(after.board()[6..10], [2, 5, 3, 1]);
    // Now a move ending exactly on C.
    let board = [0, 0, 0, 0, 0, 3, 1, 4, 2, 0, 0, 6];
    let p = pos(board, None, Side::South);
    let (_, effect) = p.play(mv("f")).expect("legal");
    // A=2, B=5, C=3: C captured, B=5 stops the chain.
    assert_eq!(effect.captured, 3);
}

#[test]
fn capture_only_on_opponent_row() {
    // South a with 1 lands on b making 2: own row, no capture.
    let board = [1, 1, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4];
    let p = pos(board, None, Side::South);
    let (_, effect) = p.play(mv("a")).expect("legal");
    assert_eq!(effect.captured, 0);
}

#[test]
fn grand_slam_cancels_capture() {
    // Same move as the worked example, but A and B are North's only seeds.
    let board = [1, 1, 1, 1, 3, 1, 1, 2, 0, 0, 0, 0];
    let p = pos(board, None, Side::South);
    let (after, effect) = p.play(mv("e")).expect("legal");
    assert!(effect.grand_slam);
    assert_eq!(effect.captured, 0);
    assert_eq!(after.board()[6], 2);
    assert_eq!(after.board()[7], 3);
    assert_eq!(after.captured(), p.captured());
}

#[test]
fn twelve_or_more_seeds_skip_the_origin() {
    // 12 seeds from a: b..F get one (11 houses), then the 12th skips a and lands on b.
    let board = [12, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1];
    let p = pos(board, None, Side::South);
    let (after, _) = p.play(mv("a")).expect("legal");
    assert_eq!(after.board()[0], 0, "origin stays empty");
    assert_eq!(after.board()[1], 2);
    assert_eq!(&after.board()[2..6], &[1, 1, 1, 1]);
    assert_eq!(&after.board()[6..12], &[2, 2, 2, 2, 2, 2]);
    // 23 seeds: two full laps of the 11 others, then one more on the next house.
    let board = [0, 0, 23, 0, 0, 0, 1, 1, 1, 1, 1, 1];
    let p = pos(board, None, Side::South);
    let (after, e) = p.play(mv("c")).expect("legal");
    assert_eq!(after.board()[2], 0);
    assert_eq!(after.board()[3], 3);
    assert_eq!(after.board()[0], 2);
    // The last seed on d (South's own): no capture.
    assert_eq!(e.captured, 0);
}

#[test]
fn feeding_table() {
    // North's row empty: house n (1..6 from a) feeds with at least 7 - n seeds.
    for n in 1..=6usize {
        let need = 7 - n;
        for seeds in 1..=7u8 {
            let mut board = [0u8; 12];
            board[n - 1] = seeds;
            // Another South house so the position is not otherwise special.
            let other = if n == 1 { 1 } else { 0 };
            board[other] = 1;
            let p = pos(board, None, Side::South);
            let legal = p.legal_moves();
            let m = Move::from_relative(Side::South, n - 1);
            assert_eq!(
                legal.contains(m),
                seeds as usize >= need,
                "house {n} seeds {seeds}"
            );
            if (seeds as usize) < need {
                assert_eq!(p.check(m), Err(PlayError::MustFeed(m)));
            }
        }
    }
}

#[test]
fn illegal_move_errors() {
    let p = Position::start();
    assert!(matches!(
        p.play(mv("A")),
        Err(PlayError::NotYourHouse { .. })
    ));
    let (p, _) = p.play(mv("c")).expect("legal");
    let (p, _) = p.play(mv("A")).expect("legal");
    assert_eq!(p.play(mv("c")), Err(PlayError::EmptyHouse(mv("c"))));
    let won = pos(
        [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
        Some([25, 21]),
        Side::South,
    );
    assert_eq!(won.play(mv("f")), Err(PlayError::GameOver));
}

#[test]
fn captured_25_ends_without_collecting() {
    // South has 23; capturing 2 on A ends the game, the rest stays on the board.
    let board = [0, 0, 0, 0, 0, 1, 1, 0, 0, 3, 3, 3];
    let p = pos(board, Some([23, 14]), Side::South);
    let mut g = Game::from_position(p, 1000);
    g.play(mv("f")).expect("legal");
    let r = g.result().expect("over");
    assert_eq!(r.reason, EndReason::Captured25);
    assert_eq!(r.winner, Winner::Side(Side::South));
    assert_eq!(g.position().captured(), [25, 14]);
    assert_eq!(
        g.position().board().iter().map(|&x| x as u32).sum::<u32>(),
        9
    );
    assert!(g.legal_moves().is_empty());
}

#[test]
fn no_move_ending_collects_rows() {
    // South f=1 sows onto A making 3: captured, since North keeps seeds on B..E. Then South's
    // row is empty and North must feed it, but B (1 seed) needs 5, C needs 4, D 3, E 2: North
    // has no move, so each side takes the seeds on its own row.
    let board = [0, 0, 0, 0, 0, 1, 2, 1, 1, 1, 1, 0];
    let p = pos(board, Some([20, 21]), Side::South);
    let mut g = Game::from_position(p, 1000);
    let e = g.play(mv("f")).expect("legal");
    assert_eq!(e.captured, 3);
    let r = g.result().expect("no move");
    assert_eq!(r.reason, EndReason::NoMove);
    assert_eq!(r.score, [23, 25], "North keeps its 4 seeds");
    assert_eq!(r.winner, Winner::Side(Side::North));
    assert_eq!(g.position().board(), &[0; 12]);
    assert!(g.legal_moves().is_empty());
}

#[test]
fn no_move_with_seeds_on_the_movers_opponent_row() {
    // North to move with an empty row: South's seeds go to South.
    let board = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    let p = pos(board, Some([23, 23]), Side::North);
    let g = Game::from_position(p, 1000);
    let r = g.result().expect("over at once");
    assert_eq!(r.reason, EndReason::NoMove);
    assert_eq!(r.score, [25, 23]);
}

#[test]
fn draw_24_24() {
    // North to move with an empty row, South holds one seed: 23 + 1 against 24.
    let board = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let p = pos(board, Some([23, 24]), Side::North);
    let r = Game::from_position(p, 1000).result().expect("over at once");
    assert_eq!(r.score, [24, 24]);
    assert_eq!(r.winner, Winner::Draw);
    // The ply limit: each side takes its own row.
    let board = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let p = pos(board, Some([23, 23]), Side::South);
    let mut g = Game::from_position(p, 1);
    g.play(mv("a")).expect("legal");
    let r = g.result().expect("ply limit");
    assert_eq!(r.reason, EndReason::MaxPlies);
    assert_eq!(r.score, [24, 24]);
    assert_eq!(r.winner, Winner::Draw);
}

#[test]
fn repetition_ends_and_collects() {
    // Two lone seeds chasing each other round the ring: random play soon repeats a position.
    use rand::{Rng, SeedableRng, rngs::SmallRng};
    let mut rng = SmallRng::seed_from_u64(1);
    let mut found = false;
    for _ in 0..2000 {
        let board = [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        let p = pos(board, Some([23, 23]), Side::South);
        let mut g = Game::from_position(p, 1000);
        while !g.is_over() {
            let moves = g.legal_moves();
            let m = moves.as_slice()[rng.random_range(0..moves.len())];
            g.play(m).expect("legal");
        }
        let r = g.result().expect("over");
        if r.reason == EndReason::Repetition {
            assert_eq!(r.score[0] as u32 + r.score[1] as u32, 48);
            assert_eq!(g.position().board(), &[0; 12]);
            found = true;
            break;
        }
    }
    assert!(found, "a two-seed chase repeats");
}

#[test]
fn undo_restores_history() {
    let mut g = Game::replay(["c", "F", "a", "B"]).expect("legal");
    let before = *g.position();
    g.play(mv("d")).expect("legal");
    assert_eq!(g.undo(), Some(mv("d")));
    assert_eq!(*g.position(), before);
    assert_eq!(g.record(), "c F a B");
}

#[test]
fn perft_small_depths() {
    assert_eq!(perft(&Position::start(), 1), 6);
    assert_eq!(perft(&Position::start(), 3), 190);
}
