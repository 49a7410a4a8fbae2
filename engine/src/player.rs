//! The player interface shared by `pit`, `play` and `engine`, and the simplest player.

use crate::evaluator::EvalError;
use crate::game::Game;
use crate::moves::Move;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Per-call limits a caller may impose on a search (`go sims N`, `go depth N`, `go ms N`).
/// `None` means: use the player's own setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Simulations for MCTS players.
    pub sims: Option<u32>,
    /// Depth in plies for alpha-beta.
    pub depth: Option<u32>,
    /// Time budget in milliseconds.
    pub millis: Option<u64>,
}

/// A player's decision and what it thinks of the position.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The move chosen; always legal in the game it was asked about.
    pub mv: Move,
    /// Expected result for the side to move, in [-1, 1], when the player has an opinion.
    pub value: Option<f32>,
    /// A short human-readable summary of the search (depth, nodes, principal variation, …).
    pub info: String,
}

/// Why a player could not choose a move.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PlayerError {
    /// The game is already over: there is no move to choose.
    #[error("asked for a move in a finished game")]
    GameOver,
    /// The evaluator behind the search failed (e.g. a network that outputs NaN); the player
    /// does not fall back to a made-up move.
    #[error("evaluation failed: {0}")]
    Evaluator(#[from] EvalError),
}

/// Anything that picks moves: random, alpha-beta, MCTS with or without a network, a person.
pub trait Player: Send {
    /// The spec string or a readable name of this player.
    fn name(&self) -> String;

    /// Chooses a move in `game`. The move is legal; a finished game or a failing evaluator is
    /// an error.
    fn choose(&mut self, game: &Game, limits: Limits) -> Result<Choice, PlayerError>;

    /// Forgets per-game state (search trees, caches) before a new game. The default does
    /// nothing.
    fn new_game(&mut self) {}
}

/// Picks a uniformly random legal move.
#[derive(Debug)]
pub struct RandomPlayer {
    rng: SmallRng,
}

impl RandomPlayer {
    /// A random player with a fixed seed, so games are reproducible.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer {
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn choose(&mut self, game: &Game, _limits: Limits) -> Result<Choice, PlayerError> {
        let moves = game.legal_moves();
        if moves.is_empty() {
            return Err(PlayerError::GameOver);
        }
        let mv = moves.as_slice()[self.rng.random_range(0..moves.len())];
        Ok(Choice {
            mv,
            value: None,
            info: String::new(),
        })
    }
}
