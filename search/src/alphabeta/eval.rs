//! The heuristic evaluation of a live position, in centiseeds (100 = one captured seed), from
//! the point of view of the side to move.
//!
//! Beyond the captured difference it scores the features known from Awari programs: seeds in
//! hand on each row, large houses (12+ seeds) that lap the board, weak houses (0–2 seeds) and
//! those the opponent can actually capture next move, the best capture available right now,
//! and mobility (non-empty houses).

use oware_engine::Position;
use oware_engine::Side;

/// One captured seed, in evaluation units.
pub const SEED: i32 = 100;

/// The weights of the evaluation features, in evaluation units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalWeights {
    /// Per seed on the side's own row.
    pub row_seed: i32,
    /// Per house holding 12 or more seeds (it laps the board and can capture widely).
    pub big_house: i32,
    /// Per seed above 12 in such a house.
    pub big_house_seed: i32,
    /// Per non-empty house (mobility).
    pub mobility: i32,
    /// Per own house holding 0–2 seeds (a future target).
    pub weak_house: i32,
    /// Per seed of the best capture the side to move can make now.
    pub capture_now: i32,
    /// Per seed of the best capture the opponent threatens (could make if it were to move).
    /// 0 by default: in self-play matches it did not help, since the mover can parry.
    pub capture_threat: i32,
}

impl EvalWeights {
    /// The weights the engine uses, tuned by matches of depth-6 and depth-4 searches against
    /// each other (material alone scores about 5% against them at depth 4).
    pub const DEFAULT: EvalWeights = EvalWeights {
        row_seed: 12,
        big_house: 60,
        big_house_seed: 6,
        mobility: 20,
        weak_house: 6,
        capture_now: 35,
        capture_threat: 0,
    };
}

impl Default for EvalWeights {
    fn default() -> Self {
        EvalWeights::DEFAULT
    }
}

/// The seeds that sowing from `house` (which must hold fewer than 12 seeds and belong to the side
/// to move in `pos`, or to the side given) would capture, computed without playing the move.
/// Exact for moves that do not lap the board, grand slam included; 0 for lapping moves.
#[inline]
pub fn capture_gain(board: &[u8; 12], side: Side, house: usize) -> u32 {
    let s = board[house] as usize;
    if s == 0 || s >= 12 {
        return 0;
    }
    let t = house + s;
    let (opp_start, last) = match side {
        Side::South if (6..12).contains(&t) => (6, t),
        Side::North if (12..18).contains(&t) => (0, t - 12),
        _ => return 0,
    };
    // Every opponent house from `opp_start` to `last` received one seed.
    let mut total = 0u32;
    let mut k = last;
    loop {
        let after = board[k] + 1;
        if after != 2 && after != 3 {
            break;
        }
        total += after as u32;
        if k == opp_start {
            break;
        }
        k -= 1;
    }
    if total == 0 {
        return 0;
    }
    let opp_row: u32 = board[opp_start..opp_start + 6]
        .iter()
        .map(|&x| x as u32)
        .sum::<u32>()
        + (last - opp_start + 1) as u32;
    if total == opp_row { 0 } else { total }
}

/// Per-side features gathered in one pass.
#[derive(Clone, Copy, Default)]
struct SideFeatures {
    row: i32,
    big: i32,
    big_seeds: i32,
    non_empty: i32,
    weak: i32,
    best_capture: i32,
}

#[inline]
fn features(board: &[u8; 12], side: Side, captures: bool) -> SideFeatures {
    let start = side.row_start();
    let mut f = SideFeatures::default();
    for house in start..start + 6 {
        let s = board[house] as i32;
        f.row += s;
        if s > 0 {
            f.non_empty += 1;
        }
        if s <= 2 {
            f.weak += 1;
        }
        if s >= 12 {
            f.big += 1;
            f.big_seeds += s - 12;
        }
        if captures {
            let g = capture_gain(board, side, house) as i32;
            if g > f.best_capture {
                f.best_capture = g;
            }
        }
    }
    f
}

/// The evaluation of `pos` for the side to move with the given weights. `pos` should be live
/// (not a finished game); finished games are scored exactly by the search instead.
#[inline]
pub fn evaluate_with(pos: &Position, w: &EvalWeights) -> i32 {
    let me = pos.to_move();
    let them = !me;
    let cap = pos.captured();
    let board = pos.board();
    let a = features(board, me, w.capture_now != 0);
    let b = features(board, them, w.capture_threat != 0);
    SEED * (cap[me.index()] as i32 - cap[them.index()] as i32)
        + w.row_seed * (a.row - b.row)
        + w.big_house * (a.big - b.big)
        + w.big_house_seed * (a.big_seeds - b.big_seeds)
        + w.mobility * (a.non_empty - b.non_empty)
        - w.weak_house * (a.weak - b.weak)
        + w.capture_now * a.best_capture
        - w.capture_threat * b.best_capture
}

/// The evaluation of `pos` for the side to move with the default weights.
#[inline]
pub fn evaluate(pos: &Position) -> i32 {
    evaluate_with(pos, &EvalWeights::DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play_gain(pos: &Position, house: usize) -> u32 {
        let mut p = *pos;
        let m = oware_engine::Move::new(house).expect("house in range");
        p.play_unchecked(m).captured as u32
    }

    #[test]
    fn capture_gain_matches_playing_the_move() {
        // Random positions reached by play: the predicted gain equals the real one for every
        // non-lapping move.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let mut checked = 0;
        for _ in 0..300 {
            let mut pos = Position::start();
            for _ in 0..rng.random_range(0..60) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves.as_slice()[rng.random_range(0..moves.len())];
                pos.play_unchecked(m);
            }
            for m in &pos.legal_moves() {
                if pos.board()[m.house()] < 12 {
                    assert_eq!(
                        capture_gain(pos.board(), pos.to_move(), m.house()),
                        play_gain(&pos, m.house()),
                        "{pos}\nmove {m}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 500);
    }

    #[test]
    fn start_is_balanced_and_captures_count() {
        assert_eq!(evaluate(&Position::start()), 0);
        let ahead = Position::from_parts([4; 12], [0, 0], Side::South).expect("valid");
        assert_eq!(evaluate(&ahead), 0);
        let mut board = [4u8; 12];
        board[0] = 0;
        board[1] = 0;
        let up = Position::from_parts(board, [8, 0], Side::South).expect("valid");
        assert!(evaluate(&up) > 5 * SEED, "{}", evaluate(&up));
        let down = Position::from_parts(board, [0, 8], Side::South).expect("valid");
        assert!(evaluate(&down) < -5 * SEED);
    }
}
