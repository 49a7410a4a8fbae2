//! An exact, history-aware brute-force solver of the real [`Game`], independent of the tables:
//! it plays every line with `Game::play` and reads the endings (25 captured, no move,
//! repetition since the last capture) from `Game::result`, as a game does. Only the ply limit
//! is set out of reach.
//!
//! It answers one yes/no question at a time — does the side to move win? — by AND-OR search.
//! Asked of a table position with the captured totals chosen so that winning means securing at
//! least `t` of the board's seeds (25 − t captured already), it decides "value ≥ t" under the
//! real rules, the 25-seed ending included.

use super::index::{rank, table_len, unrank};
use super::successors::{Successor, successors};
use super::unmove;
use oware_engine::Move;
use oware_engine::Position;
use oware_engine::Side;
use oware_engine::{Game, Winner};
use rand::Rng;
use rand::rngs::SmallRng;
use std::collections::HashMap;

/// Answers kept for positions with a history before the store is emptied.
const HISTORY_MEMO_LIMIT: usize = 1 << 18;

/// Decides wins by exhaustive search, remembering positions reached by a capture (whose history
/// is empty, so their result does not depend on the path) and, without a ply limit in reach,
/// every other position with the set of positions seen since the last capture (what is left
/// of the game depends on that set, not on the order it was played in).
#[derive(Debug, Default)]
pub struct BruteSolver {
    after_capture: HashMap<u128, bool>,
    /// Answers of positions with a non-empty history, keyed by the side asked about, the
    /// position and the set of positions seen since the last capture: the rest of the game
    /// depends on that set only, not on the order it was played in.
    with_history: HashMap<(bool, u128, Vec<u128>), bool>,
    /// Nodes visited so far.
    pub nodes: u64,
    /// The node count at which the current question is given up ([`BruteSolver::try_value`]).
    limit: Option<u64>,
    /// The current question was given up: its answers mean nothing.
    exhausted: bool,
}

impl BruteSolver {
    /// A solver with an empty memory.
    pub fn new() -> BruteSolver {
        BruteSolver::default()
    }

    /// Whether `side` wins the game `game` (which may carry a history) with best play.
    pub fn wins(&mut self, game: &Game, side: Side) -> bool {
        if self.exhausted {
            return false;
        }
        self.nodes += 1;
        if self.limit.is_some_and(|l| self.nodes > l) {
            self.exhausted = true;
            return false;
        }
        if let Some(r) = game.result() {
            return r.winner == Winner::Side(side);
        }
        let mover = game.to_move() == side;
        for m in &game.legal_moves() {
            let mut child = game.clone();
            let effect = child.play_unchecked(m);
            let w = if effect.captured > 0 && child.result().is_none() {
                let key = child.position().key() ^ ((side as u128) << 120);
                match self.after_capture.get(&key) {
                    Some(&w) => w,
                    None => {
                        let fresh = Game::from_position(*child.position(), u32::MAX);
                        let w = self.wins(&fresh, side);
                        if !self.exhausted {
                            self.after_capture.insert(key, w);
                        }
                        w
                    }
                }
            } else if child.result().is_some() || child.max_plies() != u32::MAX {
                // A ply limit in reach makes the answer depend on the ply count too.
                self.wins(&child, side)
            } else {
                let mut seen = child.seen_since_capture().to_vec();
                seen.sort_unstable();
                let key = (side == Side::South, child.position().key(), seen);
                match self.with_history.get(&key) {
                    Some(&w) => w,
                    None => {
                        let w = self.wins(&child, side);
                        if !self.exhausted {
                            if self.with_history.len() >= HISTORY_MEMO_LIMIT {
                                self.with_history.clear();
                            }
                            self.with_history.insert(key, w);
                        }
                        w
                    }
                }
            };
            if w == mover {
                return w;
            }
        }
        !mover
    }

    /// Whether the side to move in the table position `board` (mover's order, `n` seeds)
    /// secures at least `t` of its seeds, starting with an empty history, judged by playing
    /// the real game with 25 − t seeds already captured by the mover.
    pub fn secures(&mut self, board: &[u8; 12], n: u8, t: u8) -> bool {
        self.secures_after(board, n, t, &[])
    }

    /// As [`BruteSolver::secures`], after first playing the quiet `moves` (houses of the side
    /// to move, 0..6) from the position, so that the question is asked of the position reached
    /// with that history; `t` counts seeds of its mover. The moves must be legal and must not
    /// end the game.
    pub fn secures_after(&mut self, board: &[u8; 12], n: u8, t: u8, moves: &[usize]) -> bool {
        if t == 0 {
            return true;
        }
        if t > n {
            return false;
        }
        // The side to move after `moves` has 25 − t captured; the other holds the rest
        // (48 − n − (25 − t) ≥ 0).
        let mine = 25 - t;
        let theirs = 48 - n - mine;
        let captured = if moves.len().is_multiple_of(2) {
            [mine, theirs]
        } else {
            [theirs, mine]
        };
        let pos = match Position::from_parts(*board, captured, Side::South) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        let mut game = Game::from_position(pos, u32::MAX);
        for &h in moves {
            let side = game.to_move();
            match game.play(oware_engine::Move::from_relative(side, h)) {
                Ok(_) => {}
                Err(e) => panic!("{e}"),
            }
        }
        let side = game.to_move();
        self.wins(&game, side)
    }

    /// The result for the side to move in `game` with best play: it wins, the other side
    /// wins, or neither (a draw).
    pub fn outcome(&mut self, game: &Game) -> super::Outcome {
        let side = game.to_move();
        if self.wins(game, side) {
            super::Outcome::Win
        } else if self.wins(game, !side) {
            super::Outcome::Loss
        } else {
            super::Outcome::Draw
        }
    }

    /// [`BruteSolver::value`] within `limit` more nodes, or `None` when it needs more (the
    /// exhaustive search of the paths inside a large component can take very long).
    pub fn try_value(&mut self, board: &[u8; 12], n: u8, limit: u64) -> Option<u8> {
        self.limit = Some(self.nodes.saturating_add(limit));
        let v = self.value(board, n);
        let done = !self.exhausted;
        self.exhausted = false;
        self.limit = None;
        done.then_some(v)
    }

    /// The exact number of the board's seeds the mover of `board` secures from an empty
    /// history, by bisection over [`BruteSolver::secures`].
    pub fn value(&mut self, board: &[u8; 12], n: u8) -> u8 {
        let (mut lo, mut hi) = (0u8, n);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.secures(board, n, mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

/// A position from South's side: South's houses a..f, North's A..F, South to move, the
/// captured seeds split as evenly as the board allows.
pub fn south_to_move(board: [u8; 12]) -> Position {
    let n: u8 = board.iter().sum();
    let south = (48 - n) / 2;
    Position::from_parts(board, [south, 48 - n - south], Side::South).expect("valid")
}

/// Plays back from `board` along random quiet un-moves and returns the start of that history
/// with the houses played from it to reach `board` (`None` when the walk repeats a position).
pub fn random_history(
    board: &[u8; 12],
    n: u8,
    rng: &mut SmallRng,
) -> Option<([u8; 12], Vec<usize>)> {
    let mut path = vec![*board];
    for _ in 0..rng.random_range(1..24) {
        let mut parents = Vec::new();
        unmove::quiet_parents(path.last().expect("non-empty"), n, |p| parents.push(p));
        if parents.is_empty() {
            break;
        }
        let p = parents[rng.random_range(0..parents.len())];
        path.push(unrank(p, n as usize).expect("in range"));
    }
    path.reverse();
    let mut houses = Vec::new();
    let mut game = Game::from_position(south_to_move(path[0]), u32::MAX);
    for w in path.windows(2) {
        let mut succ = [Successor::Quiet {
            house: 0,
            index: 0,
            row: 0,
        }; 6];
        let k = successors(&w[0], n, &mut succ);
        let target = rank(&w[1]);
        let h = succ[..k]
            .iter()
            .find(|s| matches!(s, Successor::Quiet { index, .. } if *index == target))
            .expect("an un-move is a move backwards")
            .house() as usize;
        if game.is_over() {
            return None;
        }
        game.play(Move::from_relative(game.to_move(), h))
            .expect("legal");
        houses.push(h);
    }
    (!game.is_over()).then_some((path[0], houses))
}

/// A live game in a random table position of 2 to `max_seeds` seeds, reached by
/// a sampled history of quiet moves from its start (returned with the houses played), where
/// the side to move then holds `mover_total(n, rng)` captured seeds and the other the rest.
pub fn sampled_game(
    rng: &mut SmallRng,
    max_seeds: u8,
    mover_total: impl Fn(u8, &mut SmallRng) -> u8,
) -> Option<([u8; 12], Vec<usize>, Game)> {
    let n = rng.random_range(2..=max_seeds);
    let i = rng.random_range(0..table_len(n as usize));
    let board = unrank(i, n as usize).expect("in range");
    let (start, houses) = random_history(&board, n, rng)?;
    let mine = mover_total(n, rng);
    let theirs = 48 - n - mine;
    let captured = if houses.len().is_multiple_of(2) {
        [mine, theirs]
    } else {
        [theirs, mine]
    };
    let mut game = Game::from_position(
        Position::from_parts(start, captured, Side::South).expect("valid"),
        u32::MAX,
    );
    for &h in &houses {
        game.play(Move::from_relative(game.to_move(), h))
            .expect("legal");
    }
    (!game.is_over()).then_some((start, houses, game))
}
