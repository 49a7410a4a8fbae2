//! The player interface shared by `pit`, `play` and `engine`, and the simplest player.

use crate::evaluator::EvalError;
use oware_engine::Game;
use oware_engine::Move;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Per-call limits a caller may impose on a search (`go sims N`, `go depth N`, `go ms N`).
/// `None` means: use the player's own setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
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
    fn choose(&mut self, game: &Game, limits: Budget) -> Result<Choice, PlayerError>;

    /// Forgets per-game state (search trees, caches) before a new game. The default does
    /// nothing.
    fn new_game(&mut self) {}

    /// Gives the player a flag that ends its searches early once set (a stopped search
    /// returns the best move found so far); `None` takes it away. Alpha-beta and MCTS with an
    /// evaluator look at it as they search; the default ignores it (such a player always
    /// searches to its own limits).
    fn set_stop(&mut self, stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        let _ = stop;
    }

    /// As [`Player::choose`], calling `progress` with reports of the search while it runs (the
    /// engine protocol's `info` lines): alpha-beta once per completed iteration, MCTS about
    /// every [`PROGRESS_MILLIS`] and once at the end. The default reports nothing.
    fn choose_reporting(
        &mut self,
        game: &Game,
        limits: Budget,
        progress: &mut dyn FnMut(&SearchInfo),
    ) -> Result<Choice, PlayerError> {
        let _ = progress;
        self.choose(game, limits)
    }
}

/// How often (in milliseconds) an MCTS search reports its progress.
pub const PROGRESS_MILLIS: u64 = 100;

/// A search score for the side to move, in the engine protocol's UCI-like form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// `score cp N`: alpha-beta's heuristic seed margin in hundredths of a seed (a proven draw
    /// is 0); for MCTS, 100 × the expected result in [-1, 1], so -100..=100.
    Cp(i32),
    /// `score mate P`: alpha-beta proved the game ends in `|P|` plies, won when `P > 0` and lost
    /// when `P < 0`.
    Mate(i32),
}

/// One report of a search in progress: `info depth D score cp S nodes N time MS pv m1 m2 ...`
/// (alpha-beta) or `info sims N score cp S nodes N time MS pv m1 m2 ...` (MCTS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchInfo {
    /// Alpha-beta: the depth of the iteration just completed.
    pub depth: Option<u32>,
    /// MCTS: the simulations run so far.
    pub sims: Option<u32>,
    /// The score for the side to move.
    pub score: Score,
    /// Nodes searched (alpha-beta) or in the tree (MCTS).
    pub nodes: u64,
    /// Milliseconds since the search began.
    pub millis: u64,
    /// The principal variation, best move first.
    pub pv: Vec<Move>,
}

impl std::fmt::Display for SearchInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("info")?;
        if let Some(d) = self.depth {
            write!(f, " depth {d}")?;
        }
        if let Some(s) = self.sims {
            write!(f, " sims {s}")?;
        }
        match self.score {
            Score::Cp(c) => write!(f, " score cp {c}")?,
            Score::Mate(p) => write!(f, " score mate {p}")?,
        }
        write!(f, " nodes {} time {} pv", self.nodes, self.millis)?;
        for m in &self.pv {
            write!(f, " {m}")?;
        }
        Ok(())
    }
}

impl Score {
    /// An MCTS value in [-1, 1] as `score cp` (rounded 100 × value; NaN reads as 0).
    pub fn from_value(value: f32) -> Score {
        let v = if value.is_finite() {
            value.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        Score::Cp((v * 100.0).round() as i32)
    }
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

    fn choose(&mut self, game: &Game, _limits: Budget) -> Result<Choice, PlayerError> {
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
