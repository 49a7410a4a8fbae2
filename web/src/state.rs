//! What the page is shown: a position in the JSON of `oware replay --json` (`docs/file-formats.md`), the
//! last move as a sowing path to animate, and the whole state of a table.

use oware_engine::{Game, Move, MoveEffect, Position, Side};
use serde::Serialize;

/// A game's result as `oware replay --json` writes it, with the reasons a person can add:
/// `resignation` and `agreement`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResultView {
    /// `south`, `north` or `draw`.
    pub winner: &'static str,
    /// `captured-25`, `no-move`, `repetition`, `max-plies`, `resignation` or `agreement`.
    pub reason: &'static str,
}

/// A state of a game, exactly the object `oware replay --json` writes for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PositionView {
    /// Seeds in each house, `a`..`f` then `A`..`F`.
    pub board: [u8; 12],
    /// Seeds captured by South and North.
    pub captured: [u8; 2],
    /// `south` or `north`.
    pub to_move: &'static str,
    /// Plies played.
    pub ply: u32,
    /// The legal moves.
    pub legal: Vec<char>,
    /// Whether the game is over.
    pub terminal: bool,
    /// The result, once over.
    pub result: Option<ResultView>,
}

impl PositionView {
    /// The state of `game` now.
    pub fn of(game: &Game) -> PositionView {
        let pos = game.position();
        PositionView {
            board: *pos.board(),
            captured: pos.captured(),
            to_move: pos.to_move().name(),
            ply: game.ply(),
            legal: game.legal_moves().iter().map(Move::letter).collect(),
            terminal: game.is_over(),
            result: game.result().map(|r| ResultView {
                winner: r.winner.name(),
                reason: r.reason.name(),
            }),
        }
    }
}

/// The last move, for highlighting, the sowing animation and the capture notices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LastMoveView {
    /// The house sown from.
    #[serde(rename = "move")]
    pub mv: char,
    /// The side that moved.
    pub side: &'static str,
    /// The board before the move.
    pub before: [u8; 12],
    /// The houses (0..12) that received a seed, in sowing order.
    pub path: Vec<u8>,
    /// The houses captured, in the order they were taken.
    pub captured_houses: Vec<u8>,
    /// Seeds captured.
    pub captured: u8,
    /// Whether a capture was cancelled because it would have emptied the opponent's row.
    pub grand_slam: bool,
}

/// The houses that receive a seed when `origin` is sown with `seeds` seeds, in order: sowing
/// runs `a→…→f→A→…→F→a` and skips the origin on every lap (`docs/rules.md`, rule 1).
pub fn sowing_path(origin: usize, seeds: u8) -> Vec<u8> {
    let mut path = Vec::with_capacity(seeds as usize);
    let mut house = origin;
    for _ in 0..seeds {
        house = (house + 1) % 12;
        if house == origin {
            house = (house + 1) % 12;
        }
        path.push(house as u8);
    }
    path
}

impl LastMoveView {
    /// The view of `mv` played in `before` (a position where it is legal). The captured houses
    /// come from the engine's own result of the move: houses of the opponent that received
    /// seeds and are empty afterwards.
    pub fn new(before: &Position, mv: Move) -> Option<LastMoveView> {
        let (after, effect): (Position, MoveEffect) = before.play(mv).ok()?;
        let origin = mv.house();
        let path = sowing_path(origin, before.board()[origin]);
        let mover = before.to_move();
        let mut captured_houses = Vec::new();
        if effect.captured > 0 {
            // Captures run backwards from the last seed; keep that order for the animation.
            for &h in path.iter().rev() {
                let h = h as usize;
                if !mover.owns(h) && after.board()[h] == 0 && !captured_houses.contains(&(h as u8))
                {
                    captured_houses.push(h as u8);
                }
            }
        }
        Some(LastMoveView {
            mv: mv.letter(),
            side: mover.name(),
            before: *before.board(),
            path,
            captured_houses,
            captured: effect.captured,
            grand_slam: effect.grand_slam,
        })
    }
}

/// Who sits in a seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeatView {
    /// `human` or `ai`.
    pub player: &'static str,
    /// The AI's spec or label, or `""` for a person.
    pub name: String,
    /// Whether someone is connected to this seat now (always true for the AI).
    pub connected: bool,
}

/// The whole state of a table, sent after every change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableView {
    /// The current position.
    #[serde(flatten)]
    pub position: PositionView,
    /// `ai`, `local` or `room`.
    pub kind: &'static str,
    /// The room code (rooms only).
    pub code: Option<String>,
    /// The moves so far.
    pub moves: Vec<char>,
    /// The last move.
    pub last: Option<LastMoveView>,
    /// Final totals (South, North) once the game is over.
    pub score: Option<[u8; 2]>,
    /// The result in words, once over (e.g. "South wins 26–22: 25 seeds captured").
    pub ending: Option<String>,
    /// South's and North's seats.
    pub seats: [SeatView; 2],
    /// How many watch.
    pub watchers: usize,
    /// The side that offers a draw.
    pub draw_offer: Option<&'static str>,
    /// The side that asks for a rematch.
    pub rematch_offer: Option<&'static str>,
    /// Whether the AI is searching its move.
    pub ai_thinking: bool,
    /// Whether `undo` can take something back now.
    pub can_undo: bool,
    /// The game record in the format `oware replay` reads (moves, then the result after a tab
    /// once over).
    pub record: String,
}

/// The side's name with a capital, for messages.
pub fn side_title(side: Side) -> &'static str {
    match side {
        Side::South => "South",
        Side::North => "North",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn paths_skip_the_origin() {
        assert_eq!(sowing_path(2, 3), vec![3, 4, 5]);
        assert_eq!(sowing_path(10, 3), vec![11, 0, 1]);
        let lap = sowing_path(0, 13);
        assert_eq!(lap.len(), 13);
        assert!(!lap.contains(&0));
        assert_eq!(&lap[10..], &[11, 1, 2]);
    }

    /// The animation's arithmetic agrees with the engine on random games: the board before,
    /// plus one seed per path step, minus the captured houses, is the board after.
    #[test]
    fn last_move_views_agree_with_the_engine() {
        let mut rng = SmallRng::seed_from_u64(5);
        let mut captures = 0;
        for _ in 0..200 {
            let mut game = Game::new();
            while !game.is_over() {
                let moves = game.legal_moves();
                let mv = moves.as_slice()[rng.random_range(0..moves.len())];
                let before = *game.position();
                let view = LastMoveView::new(&before, mv).expect("legal move");
                let (after, effect) = before.play(mv).expect("legal move");
                let mut board = *before.board();
                board[mv.house()] = 0;
                for &h in &view.path {
                    board[h as usize] += 1;
                }
                let mut taken = 0;
                for &h in &view.captured_houses {
                    taken += board[h as usize];
                    board[h as usize] = 0;
                }
                assert_eq!(&board, after.board(), "{} {mv}", game.record());
                assert_eq!(taken, effect.captured);
                captures += usize::from(taken > 0);
                game.play(mv).expect("legal move");
            }
        }
        assert!(captures > 100, "random games capture often: {captures}");
    }
}
