//! # oware-arena
//!
//! Match play and what is measured from it: matches between two players (random openings,
//! each played twice with colours swapped, games in parallel, network sides batched), Elo
//! with its 95% interval ([`elo`]), Bradley–Terry ratings of many players ([`ratings`]), and
//! a training run's evaluation log ([`eval_log`]) with the rating against its anchor
//! ([`anchor`]).
//!
//! It may use the rules engine (`oware-engine`) and nothing else of the workspace: a side of
//! a match is a [`Contestant`], built by the caller (the players crate turns spec strings
//! into them), so match play never needs to know how a player is made.

pub mod anchor;
pub mod elo;
pub mod eval_log;
pub mod judge;
pub mod ladder;
mod matches;
pub mod ratings;

pub use elo::MatchScore;
pub use matches::*;
