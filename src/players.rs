//! Building players from spec strings.
//!
//! Temporary, minimal version for the `play` branch: only `random` is supported here; the full
//! version (alpha-beta, MCTS, …) replaces this file and keeps [`build_player_from_str`].

use oware_engine::{Player, RandomPlayer};

/// Builds the player described by `spec` (e.g. `random`); `seed` makes random choices
/// reproducible.
pub fn build_player_from_str(spec: &str, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    match spec.trim() {
        "random" => Ok(Box::new(RandomPlayer::new(seed))),
        other => anyhow::bail!(
            "unknown or unsupported player spec '{other}' (this build knows only 'random')"
        ),
    }
}
