//! # oware-engine
//!
//! The rules of Oware (Abapa), exactly as `docs/rules.md` states them: sides, moves, positions,
//! the game with its repetition rule and endings, notation and records, perft, random playouts,
//! and the small tools every layer shares (input bounds, atomic file writes, checksums, bounded
//! line reading). It is the bottom layer and uses no other crate of the workspace; the endgame
//! tables are the `oware-egtb` crate above it.
//!
//! Houses are indexed `a b c d e f A B C D E F` = 0..12; South owns `a`–`f` and moves first.

pub mod atomic_file;
pub mod bounded_lines;
pub mod bounds;
pub mod checksum;
mod game;
mod moves;
pub mod panic;
mod perft;
mod playout;
mod position;
pub mod record;
mod side;

pub use game::{DEFAULT_MAX_PLIES, EndReason, Game, GameError, GameResult, Winner, adjudicate};
pub use moves::{Move, MoveList, ParseMoveError};
pub use perft::{perft, perft_divide};
pub use playout::random_playout;
pub use position::{MoveEffect, PlayError, Position, PositionError, TOTAL_SEEDS, WINNING_CAPTURE};
pub use side::{ParseSideError, Side};
