//! A game: a position plus what a position alone cannot know (history for repetitions, the ply
//! count and limit) and the result with its reason.

use crate::moves::{Move, MoveList, ParseMoveError};
use crate::position::{MoveEffect, PlayError, Position};
use crate::side::Side;
use std::fmt;

/// The default limit on plies before the game is adjudicated.
pub const DEFAULT_MAX_PLIES: u32 = 1000;

/// Who won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Winner {
    /// A side won.
    Side(Side),
    /// 24–24.
    Draw,
}

impl Winner {
    /// `"south"`, `"north"` or `"draw"`.
    pub const fn name(self) -> &'static str {
        match self {
            Winner::Side(s) => s.name(),
            Winner::Draw => "draw",
        }
    }
}

/// Why the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// A side captured 25 or more.
    Captured25,
    /// The side to move had no legal move.
    NoMove,
    /// A position occurred for the second time.
    Repetition,
    /// The ply limit was reached.
    MaxPlies,
}

impl EndReason {
    /// The name used in JSON: `captured-25`, `no-move`, `repetition`, `max-plies`.
    pub const fn name(self) -> &'static str {
        match self {
            EndReason::Captured25 => "captured-25",
            EndReason::NoMove => "no-move",
            EndReason::Repetition => "repetition",
            EndReason::MaxPlies => "max-plies",
        }
    }
}

/// The end of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameResult {
    /// Who won.
    pub winner: Winner,
    /// Why the game ended.
    pub reason: EndReason,
    /// Final totals (South, North), seeds collected at the end included.
    pub score: [u8; 2],
}

impl GameResult {
    /// The result for `side`: 1 win, 0 draw, -1 loss.
    pub fn value_for(&self, side: Side) -> f32 {
        match self.winner {
            Winner::Draw => 0.0,
            Winner::Side(s) if s == side => 1.0,
            Winner::Side(_) => -1.0,
        }
    }

    /// The result from South's side as in game records: `1-0`, `0-1` or `1/2-1/2`.
    pub const fn notation(&self) -> &'static str {
        match self.winner {
            Winner::Side(Side::South) => "1-0",
            Winner::Side(Side::North) => "0-1",
            Winner::Draw => "1/2-1/2",
        }
    }

    /// `side`'s final seeds minus the opponent's.
    pub fn margin_for(&self, side: Side) -> i32 {
        self.score[side.index()] as i32 - self.score[(!side).index()] as i32
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.reason {
            EndReason::Captured25 => "25 seeds captured",
            EndReason::NoMove => "no legal move",
            EndReason::Repetition => "position repeated",
            EndReason::MaxPlies => "ply limit reached",
        };
        match self.winner {
            Winner::Draw => write!(f, "draw {}-{} ({why})", self.score[0], self.score[1]),
            Winner::Side(s) => write!(f, "{s} wins {}-{} ({why})", self.score[0], self.score[1]),
        }
    }
}

/// Decides the winner from final totals.
fn result_from(pos: &Position, reason: EndReason) -> GameResult {
    let score = pos.captured();
    let winner = match score[0].cmp(&score[1]) {
        std::cmp::Ordering::Greater => Winner::Side(Side::South),
        std::cmp::Ordering::Less => Winner::Side(Side::North),
        std::cmp::Ordering::Equal => Winner::Draw,
    };
    GameResult {
        winner,
        reason,
        score,
    }
}

/// Decides whether `pos`, reached after a move, ends the game, given the keys of the positions
/// seen since the last capture (not including `pos`) and the ply count. On an ending that
/// collects the board, `pos` is settled in place. This is the one place every ending is decided.
pub fn adjudicate(
    pos: &mut Position,
    seen: &[u128],
    ply: u32,
    max_plies: u32,
) -> Option<GameResult> {
    if pos.has_winning_capture() {
        return Some(result_from(pos, EndReason::Captured25));
    }
    let reason = if pos.legal_moves().is_empty() {
        EndReason::NoMove
    } else if seen.contains(&pos.key()) {
        EndReason::Repetition
    } else if ply >= max_plies {
        EndReason::MaxPlies
    } else {
        return None;
    };
    pos.collect_rows();
    Some(result_from(pos, reason))
}

/// An illegal move in a game, with the ply at which it was tried.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The token is not a move.
    #[error("ply {ply}: {source}")]
    Parse {
        /// Ply index (0 for the first move).
        ply: u32,
        /// What was wrong.
        source: ParseMoveError,
    },
    /// The move is illegal in the position.
    #[error("ply {ply}: move {mv} is illegal: {source}")]
    Illegal {
        /// Ply index (0 for the first move).
        ply: u32,
        /// The move tried.
        mv: Move,
        /// Why it is illegal.
        source: PlayError,
    },
}

/// A game in progress or finished.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    position: Position,
    moves: Vec<Move>,
    /// Keys of positions since the last capture, the current one included.
    seen: Vec<u128>,
    max_plies: u32,
    result: Option<GameResult>,
}

impl Default for Game {
    fn default() -> Self {
        Game::new()
    }
}

impl Game {
    /// A new game from the start position with the default ply limit.
    pub fn new() -> Game {
        Game::from_position(Position::start(), DEFAULT_MAX_PLIES)
    }

    /// A new game from the start position with ply limit `max_plies`.
    pub fn with_max_plies(max_plies: u32) -> Game {
        Game::from_position(Position::start(), max_plies)
    }

    /// A game starting from any position (ply 0 there). If that position is already over
    /// (25 captured, or no legal move), the game is over at once.
    pub fn from_position(start: Position, max_plies: u32) -> Game {
        let mut position = start;
        let result = adjudicate(&mut position, &[], 0, u32::MAX);
        Game {
            start,
            position,
            moves: Vec::new(),
            seen: vec![start.key()],
            max_plies,
            result,
        }
    }

    /// Replays `moves` from `start` with ply limit `max_plies`, checking each, and calls
    /// `after_each(game, move, effect)` after every ply. This is the one function that rebuilds
    /// a game from its moves (records, the engine protocol, `undo`, openings).
    pub fn replay_from(
        start: Position,
        max_plies: u32,
        moves: impl IntoIterator<Item = Move>,
        mut after_each: impl FnMut(&Game, Move, MoveEffect),
    ) -> Result<Game, GameError> {
        let mut game = Game::from_position(start, max_plies);
        for mv in moves {
            let effect = game.play(mv)?;
            after_each(&game, mv, effect);
        }
        Ok(game)
    }

    /// Parses and replays move tokens (`c F a B`) from the start position with the default ply
    /// limit, calling `after_each` after every ply as [`Game::replay_from`] does. Moves are
    /// parsed as they are played, so the error is the first fault in ply order, naming its ply.
    pub fn replay_tokens<'a>(
        tokens: impl IntoIterator<Item = &'a str>,
        after_each: impl FnMut(&Game, Move, MoveEffect),
    ) -> Result<Game, GameError> {
        let mut bad = None;
        let moves =
            tokens
                .into_iter()
                .enumerate()
                .map_while(|(ply, token)| match token.parse::<Move>() {
                    Ok(mv) => Some(mv),
                    Err(source) => {
                        bad = Some(GameError::Parse {
                            ply: ply as u32,
                            source,
                        });
                        None
                    }
                });
        let game = Game::replay_from(Position::start(), DEFAULT_MAX_PLIES, moves, after_each)?;
        match bad {
            Some(e) => Err(e),
            None => Ok(game),
        }
    }

    /// Parses and replays move tokens from the start position (default ply limit).
    pub fn replay<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Result<Game, GameError> {
        Game::replay_tokens(tokens, |_, _, _| {})
    }

    /// The current position.
    #[inline]
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The position the game started from.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Plies played so far.
    #[inline]
    pub fn ply(&self) -> u32 {
        self.moves.len() as u32
    }

    /// The ply limit.
    pub fn max_plies(&self) -> u32 {
        self.max_plies
    }

    /// The result, once the game is over.
    #[inline]
    pub fn result(&self) -> Option<GameResult> {
        self.result
    }

    /// Whether the game is over.
    #[inline]
    pub fn is_over(&self) -> bool {
        self.result.is_some()
    }

    /// The side to move.
    pub fn to_move(&self) -> Side {
        self.position.to_move()
    }

    /// Legal moves now; empty once the game is over.
    pub fn legal_moves(&self) -> MoveList {
        if self.is_over() {
            MoveList::new()
        } else {
            self.position.legal_moves()
        }
    }

    /// Keys of the positions since the last capture, the current one included.
    pub fn seen_since_capture(&self) -> &[u128] {
        &self.seen
    }

    /// Plays a move, checking it; decides any ending it causes.
    pub fn play(&mut self, mv: Move) -> Result<MoveEffect, GameError> {
        let ply = self.ply();
        if self.is_over() {
            return Err(GameError::Illegal {
                ply,
                mv,
                source: PlayError::GameOver,
            });
        }
        let (next, effect) = self
            .position
            .play(mv)
            .map_err(|source| GameError::Illegal { ply, mv, source })?;
        self.advance(mv, next, effect);
        Ok(effect)
    }

    /// Plays a move known to be legal (from [`Game::legal_moves`]) without checking it.
    #[inline]
    pub fn play_unchecked(&mut self, mv: Move) -> MoveEffect {
        let mut next = self.position;
        let effect = next.play_unchecked(mv);
        self.advance(mv, next, effect);
        effect
    }

    fn advance(&mut self, mv: Move, mut next: Position, effect: MoveEffect) {
        self.moves.push(mv);
        if effect.captured > 0 {
            self.seen.clear();
        }
        self.result = adjudicate(&mut next, &self.seen, self.ply(), self.max_plies);
        self.position = next;
        self.seen.push(next.key());
    }

    /// The game after its first `keep` moves (all of them when `keep` is larger), replayed from
    /// its start, and the last of those moves with its effect.
    pub fn truncated(&self, keep: usize) -> (Game, Option<(Move, MoveEffect)>) {
        let mut last = None;
        let moves = self.moves[..keep.min(self.moves.len())].iter().copied();
        let replayed = Game::replay_from(self.start, self.max_plies, moves, |_, mv, effect| {
            last = Some((mv, effect));
        });
        match replayed {
            Ok(game) => (game, last),
            // Every move of a game was legal when played (`play` checks it, and
            // `play_unchecked` requires it), so the same moves replay.
            Err(e) => unreachable!("the moves of a game replay: {e}"),
        }
    }

    /// Takes back the last move by replaying the game from its start without it. Returns the
    /// move taken back, or `None` at the start.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = *self.moves.last()?;
        *self = self.truncated(self.moves.len() - 1).0;
        Some(mv)
    }

    /// The move list in notation, separated by spaces (the format `oware replay` reads).
    pub fn record(&self) -> String {
        crate::moves::moves_text(&self.moves)
    }
}
