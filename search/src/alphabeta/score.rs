//! Search scores: exact scores of finished games, their storage in the table, and the mapping
//! to a value in [-1, 1].

use oware_engine::GameResult;
use oware_engine::Side;

/// The score of a win at the root itself; a win `p` plies away scores `MATE - 64·p + margin`.
pub const MATE: i32 = 30_000;
/// Scores at least this large (in absolute value) are proven wins or losses.
pub const WIN_THRESHOLD: i32 = 20_000;
/// Score lost per ply of distance to a finished game, larger than any seed margin, so that a
/// faster win (a slower loss) always scores better, and between equally fast ones the margin
/// decides.
pub const PLY_STEP: i32 = 64;

/// The exact score of a finished game for the side with final seed `margin` (own minus the
/// opponent's), `ply` plies from the root: a win is above [`WIN_THRESHOLD`], a draw 0, a loss
/// below `-WIN_THRESHOLD`.
#[inline]
pub const fn terminal_score(margin: i32, ply: u32) -> i32 {
    let dist = ply as i32 * PLY_STEP;
    if margin > 0 {
        MATE - dist + margin
    } else if margin < 0 {
        -MATE + dist + margin
    } else {
        0
    }
}

/// The exact score of a finished game for `side`, `ply` plies from the root.
pub fn result_score(result: &GameResult, side: Side, ply: u32) -> i32 {
    terminal_score(result.margin_for(side), ply)
}

/// Whether the score is a proven win or loss.
#[inline]
pub const fn is_decisive(score: i32) -> bool {
    score >= WIN_THRESHOLD || score <= -WIN_THRESHOLD
}

/// For a decisive score: the plies to the end of the game from where the score was taken.
pub const fn plies_to_end(score: i32) -> Option<u32> {
    if !is_decisive(score) {
        return None;
    }
    let a = if score < 0 { -score } else { score };
    // a = MATE - 64·p + |margin| with 1 ≤ |margin| ≤ 48 < 64.
    Some(((MATE - a + PLY_STEP - 1) / PLY_STEP) as u32)
}

/// A score as stored in the table: win distances counted from the node, not the root.
#[inline]
pub(crate) fn to_table(score: i32, ply: usize) -> i16 {
    let s = if score >= WIN_THRESHOLD {
        score + ply as i32 * PLY_STEP
    } else if score <= -WIN_THRESHOLD {
        score - ply as i32 * PLY_STEP
    } else {
        score
    };
    s.clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

/// A stored score back at a node `ply` plies from the root.
#[inline]
pub(crate) fn from_table(score: i16, ply: usize) -> i32 {
    let s = score as i32;
    if s >= WIN_THRESHOLD {
        s - ply as i32 * PLY_STEP
    } else if s <= -WIN_THRESHOLD {
        s + ply as i32 * PLY_STEP
    } else {
        s
    }
}

/// Maps a score to an expected result in [-1, 1]: ±1 for proven wins and losses, 0 for a
/// proven draw, otherwise `tanh(score / 800)` (eight seeds ahead ≈ 0.76).
pub fn score_to_value(score: i32) -> f32 {
    if score >= WIN_THRESHOLD {
        1.0
    } else if score <= -WIN_THRESHOLD {
        -1.0
    } else {
        (score as f32 / 800.0).tanh()
    }
}

/// A score for people: `+1.25` (seeds, heuristic), `win in 7` / `loss in 7` (plies), or `0.00`.
pub fn format_score(score: i32) -> String {
    match plies_to_end(score) {
        Some(p) if score > 0 => format!("win in {p}"),
        Some(p) => format!("loss in {p}"),
        None => format!("{:+.2}", score as f64 / 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faster_wins_and_slower_losses_score_better() {
        assert!(terminal_score(1, 3) > terminal_score(48, 5));
        assert!(terminal_score(10, 3) > terminal_score(2, 3));
        assert!(terminal_score(-1, 9) > terminal_score(-48, 3));
        assert!(terminal_score(-2, 3) > terminal_score(-10, 3));
        assert_eq!(terminal_score(0, 7), 0);
        assert_eq!(plies_to_end(terminal_score(20, 7)), Some(7));
        assert_eq!(plies_to_end(terminal_score(-1, 12)), Some(12));
        assert_eq!(plies_to_end(500), None);
        assert!(is_decisive(terminal_score(1, 120)));
    }

    #[test]
    fn table_scores_round_trip() {
        for &(s, ply) in &[
            (terminal_score(3, 9), 4),
            (terminal_score(-7, 20), 20),
            (123, 5),
        ] {
            assert_eq!(from_table(to_table(s, ply), ply), s);
        }
        // Stored relative to the node: the same win seen from a node 2 plies deeper is 2 closer.
        let s = terminal_score(5, 10);
        assert_eq!(from_table(to_table(s, 4), 6), terminal_score(5, 12));
    }

    #[test]
    fn values_stay_in_range() {
        assert_eq!(score_to_value(terminal_score(3, 2)), 1.0);
        assert_eq!(score_to_value(terminal_score(-3, 2)), -1.0);
        assert_eq!(score_to_value(0), 0.0);
        let v = score_to_value(800);
        assert!(v > 0.7 && v < 0.8);
        assert_eq!(format_score(terminal_score(4, 5)), "win in 5");
        assert_eq!(format_score(-250), "-2.50");
    }
}
