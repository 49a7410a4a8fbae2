//! Property tests over many seeded random games: the invariants of `docs/rules.md`, checked against
//! naive re-implementations where one is cheap.

use oware_engine::{EndReason, Game, Move, Position};
use rand::{Rng, SeedableRng, rngs::SmallRng};

const GAMES: usize = 3000;

/// Naive sowing, written independently of the engine: the board after lifting `house`'s seeds
/// and sowing them, before any capture, and the last house sown.
fn naive_sow(board: &[u8; 12], house: usize) -> ([u8; 12], usize) {
    let mut b = *board;
    let mut seeds = b[house];
    b[house] = 0;
    let mut h = house;
    while seeds > 0 {
        h = (h + 1) % 12;
        if h == house {
            continue;
        }
        b[h] += 1;
        seeds -= 1;
    }
    (b, h)
}

fn random_game(rng: &mut SmallRng) -> Game {
    let mut g = Game::new();
    while !g.is_over() {
        let moves = g.legal_moves();
        assert!(!moves.is_empty(), "a live game has a legal move");
        let m = moves.as_slice()[rng.random_range(0..moves.len())];
        g.play(m).expect("legal move plays");
    }
    g
}

#[test]
fn invariants_hold_in_random_games() {
    let mut rng = SmallRng::seed_from_u64(2024);
    let mut reasons = std::collections::HashMap::new();
    for _ in 0..GAMES {
        let g = random_game(&mut rng);
        *reasons.entry(g.result().expect("over").reason).or_insert(0) += 1;
        // Walk the game again, checking each move against the naive rules.
        let mut pos = Position::start();
        let mut since_capture: Vec<Position> = vec![pos];
        for (ply, &m) in g.moves().iter().enumerate() {
            let me = pos.to_move();
            assert_eq!(m.owner(), me);
            let (sown, last) = naive_sow(pos.board(), m.house());
            let (after, effect) = pos.play(m).expect("legal on replay");
            let total: u32 = after.board().iter().map(|&x| x as u32).sum::<u32>()
                + after.captured().iter().map(|&x| x as u32).sum::<u32>();
            assert_eq!(total, 48, "seeds conserved at ply {ply}");
            assert_eq!(after.board()[m.house()], 0, "origin empty after its move");
            // Every house that lost seeds relative to the sown board was captured: it is on the
            // opponent's row, now empty, held 2 or 3, and lies in a chain ending at `last`.
            let mut taken = 0u8;
            for (h, &seeds) in sown.iter().enumerate() {
                if after.board()[h] != seeds {
                    assert!(
                        !me.owns(h),
                        "captured from the mover's own row at ply {ply}"
                    );
                    assert_eq!(after.board()[h], 0);
                    assert!(seeds == 2 || seeds == 3);
                    assert!(h <= last && (h..=last).all(|x| !me.owns(x)));
                    taken += seeds;
                }
            }
            assert_eq!(taken, effect.captured);
            assert_eq!(
                after.captured()[me.index()],
                pos.captured()[me.index()] + taken
            );
            if effect.grand_slam {
                assert_eq!(after.board(), &sown, "grand slam leaves the sown board");
            }
            if effect.captured > 0 {
                since_capture.clear();
            }
            // The naive repetition check agrees with the game's.
            let repeated = since_capture.contains(&after);
            since_capture.push(after);
            pos = after;
            if ply + 1 == g.moves().len() {
                let r = g.result().expect("over");
                if r.reason == EndReason::Repetition {
                    assert!(repeated, "repetition reported without a repeat");
                }
            } else {
                assert!(!repeated, "a repeat at ply {ply} did not end the game");
                assert!(!pos.legal_moves().is_empty());
            }
        }
        // A finished game has no legal move, and replaying its record reproduces it.
        assert!(g.legal_moves().is_empty());
        let again = Game::replay(g.record().split_whitespace()).expect("record replays");
        assert_eq!(again.position(), g.position());
        assert_eq!(again.result(), g.result());
        let r = g.result().expect("over");
        let sum = r.score[0] as u32 + r.score[1] as u32;
        if r.reason == EndReason::Captured25 {
            assert!(r.score.iter().any(|&s| s >= 25));
        } else {
            assert_eq!(sum, 48, "collected endings account for every seed");
            assert_eq!(g.position().board(), &[0; 12]);
        }
    }
    assert!(
        reasons.len() >= 2,
        "random games reach several endings: {reasons:?}"
    );
}

#[test]
fn moves_of_the_wrong_side_never_play() {
    let mut rng = SmallRng::seed_from_u64(5);
    for _ in 0..200 {
        let g = random_game(&mut rng);
        let mut replay = Game::new();
        for &m in g.moves() {
            let other = Move::new((m.house() + 6) % 12).expect("in range");
            assert!(replay.clone().play(other).is_err());
            replay.play(m).expect("legal");
        }
    }
}
