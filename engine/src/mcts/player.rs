//! Players built on the searches: plain UCT with rollouts, and MCTS with any evaluator.

use super::config::{ConfigError, MctsConfig};
use super::rollout::RolloutSearch;
use super::search::Search;
use crate::evaluator::Evaluator;
use crate::game::Game;
use crate::limits::{MAX_MILLIS, MAX_SIMS};
use crate::player::{Choice, Limits, Player, PlayerError};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::time::{Duration, Instant};

/// Simulations per round when searching against a clock.
const TIMED_CHUNK: u32 = 64;

/// Runs `step(sims)` for `sims` simulations, or, with only a time limit, repeatedly in chunks
/// until the time is spent (at least one chunk). Either way at most [`MAX_SIMS`] simulations
/// run, so a long time limit cannot grow the tree without bound. Returns the total run; stops
/// at the first error of `step`.
fn budgeted<E>(
    sims: u32,
    limits: Limits,
    mut step: impl FnMut(u32) -> Result<(), E>,
) -> Result<u32, E> {
    match (limits.sims, limits.millis) {
        (None, Some(ms)) => {
            let deadline = Instant::now() + Duration::from_millis(ms.min(MAX_MILLIS));
            let mut total = 0;
            loop {
                let chunk = TIMED_CHUNK.min(MAX_SIMS - total);
                step(chunk)?;
                total += chunk;
                if total >= MAX_SIMS || Instant::now() >= deadline {
                    return Ok(total);
                }
            }
        }
        (s, _) => {
            let n = s.unwrap_or(sims).clamp(1, MAX_SIMS);
            step(n)?;
            Ok(n)
        }
    }
}

/// Plain UCT with random rollouts (the `mcts:rollouts,sims=N` player). Picks the most visited
/// move; keeps its tree between moves of one game.
#[derive(Debug)]
pub struct RolloutMctsPlayer {
    search: RolloutSearch,
    sims: u32,
    rng: SmallRng,
    name: String,
}

impl RolloutMctsPlayer {
    /// A player running `sims` simulations per move with UCT constant `c`
    /// ([`super::DEFAULT_UCT_C`] is a good value), seeded for reproducible games.
    pub fn new(sims: u32, c: f32, seed: u64) -> RolloutMctsPlayer {
        RolloutMctsPlayer {
            search: RolloutSearch::new(c),
            sims: sims.max(1),
            rng: SmallRng::seed_from_u64(seed),
            name: format!("mcts:rollouts,sims={}", sims.max(1)),
        }
    }

    /// Replaces the name reported by [`Player::name`] (e.g. by the spec string).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

impl Player for RolloutMctsPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// Searches `limits.sims` simulations if given, else for `limits.millis` if given, else
    /// the player's own count.
    fn choose(&mut self, game: &Game, limits: Limits) -> Result<Choice, PlayerError> {
        self.search.set_game(game);
        let mut last = None;
        let search = &mut self.search;
        let rng = &mut self.rng;
        let total = budgeted(self.sims, limits, |n| {
            last = search.run(n, rng);
            Ok::<(), PlayerError>(())
        })?;
        let r = last.ok_or(PlayerError::GameOver)?;
        Ok(choice(r.mv, r.value, r.visits, total))
    }

    fn new_game(&mut self) {
        self.search.reset(&Game::new());
    }
}

/// MCTS guided by an evaluator (the `mcts:model=PATH,sims=N[,batch=B]` player with a network):
/// the configured search without exploration, the move greedy by visits (PUCT) or the
/// sequential-halving winner (Gumbel). The evaluator is called with up to `leaves_per_tree`
/// positions at once (virtual loss). Keeps its tree between moves of one game.
#[derive(Debug)]
pub struct MctsPlayer<E> {
    evaluator: E,
    search: Search,
    rng: SmallRng,
    name: String,
}

impl<E: Evaluator + Send> MctsPlayer<E> {
    /// A player searching with `config` (`sims` per move, `leaves_per_tree` = evaluator batch).
    pub fn new(evaluator: E, config: MctsConfig, seed: u64) -> Result<MctsPlayer<E>, ConfigError> {
        let name = format!("mcts:sims={}", config.sims);
        Ok(MctsPlayer {
            evaluator,
            search: Search::new(config)?,
            rng: SmallRng::seed_from_u64(seed),
            name,
        })
    }

    /// Replaces the name reported by [`Player::name`] (e.g. by the spec string).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &E {
        &self.evaluator
    }

    /// The search configuration.
    pub fn config(&self) -> &MctsConfig {
        self.search.config()
    }
}

impl<E: Evaluator + Send> Player for MctsPlayer<E> {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// Searches `limits.sims` simulations if given, else for `limits.millis` if given, else the
    /// configured `sims`. `Choice::value` is the root value for the side to move.
    /// A failing evaluator is an error ([`PlayerError::Evaluator`]), never a made-up move.
    fn choose(&mut self, game: &Game, limits: Limits) -> Result<Choice, PlayerError> {
        self.search.set_game(game);
        let sims = self.search.config().sims;
        let mut last = None;
        let search = &mut self.search;
        let rng = &mut self.rng;
        let evaluator = &self.evaluator;
        let total = budgeted(sims, limits, |n| {
            last = search.run(evaluator, n, false, rng)?;
            Ok::<(), PlayerError>(())
        })?;
        let r = last.ok_or(PlayerError::GameOver)?;
        Ok(choice(r.mv, r.value, r.visits, total))
    }

    fn new_game(&mut self) {
        self.search.reset(&Game::new());
    }
}

/// A player's answer from a search: the move, the root value and a one-line summary.
fn choice(mv: crate::moves::Move, value: f32, visits: [u32; 6], sims: u32) -> Choice {
    let v = visits;
    Choice {
        mv,
        value: Some(value),
        info: format!(
            "sims {sims} value {value:.3} visits {} {} {} {} {} {}",
            v[0], v[1], v[2], v[3], v[4], v[5]
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_time_limit_stops_at_the_simulation_bound() {
        // A day per move: the budget ends at MAX_SIMS simulations, not at the clock.
        let limits = Limits {
            millis: Some(MAX_MILLIS),
            ..Limits::default()
        };
        let mut run = 0u32;
        let total = budgeted(100, limits, |n| {
            run += n;
            Ok::<(), ()>(())
        });
        assert_eq!((total, run), (Ok(MAX_SIMS), MAX_SIMS));
        // An explicit count above the bound is cut to it; zero becomes one.
        let sims = |s: u32| Limits {
            sims: Some(s),
            ..Limits::default()
        };
        let none = |_| Ok::<(), ()>(());
        assert_eq!(budgeted(100, sims(u32::MAX), none), Ok(MAX_SIMS));
        assert_eq!(budgeted(100, sims(0), none), Ok(1));
        assert_eq!(budgeted(100, Limits::default(), none), Ok(100));
    }
}
