//! Players built on the searches: plain UCT with rollouts, and MCTS with any evaluator.

use super::config::{ConfigError, MctsConfig, RootAlgorithm};
use super::rollout::RolloutSearch;
use super::search::Search;
use crate::evaluator::Evaluator;
use crate::game::Game;
use crate::limits::{MAX_MILLIS, MAX_SIMS};
use crate::player::{Choice, Limits, Player, PlayerError};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::time::{Duration, Instant};

/// The most simulations of one round of a timed search (the clock is read between rounds).
const TIMED_CHUNK: u32 = 64;
/// The simulations of a timed search's first round, which measures the simulation rate.
const TIMED_PROBE: u32 = 8;
/// A Gumbel root's one sequential halving, sized from the measured rate, is given this share
/// of the time left, so that a slower second half does not overrun the clock.
const SIZED_SHARE: f64 = 0.9;

/// A player's own time per move (`ms=` in its spec) and the simulation cap (`sims=` next to
/// it), used when a move is asked without limits.
pub type OwnTime = Option<(u64, Option<u32>)>;

/// What one move's search may spend.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Budget {
    /// Exactly this many simulations.
    Sims(u32),
    /// Simulations until `millis` have passed, at most `cap`.
    Timed { millis: u64, cap: u32 },
}

/// The budget of one move: the asked simulations, else the asked time, else the player's own
/// time (`own_time`), else its own simulations. At most [`MAX_SIMS`] simulations either way,
/// so a long time limit cannot grow the tree without bound.
fn budget(own_sims: u32, own_time: OwnTime, limits: Limits) -> Budget {
    match (limits.sims, limits.millis, own_time) {
        (Some(s), _, _) => Budget::Sims(s.clamp(1, MAX_SIMS)),
        (None, Some(ms), _) => Budget::Timed {
            millis: ms.min(MAX_MILLIS),
            cap: MAX_SIMS,
        },
        (None, None, Some((ms, cap))) => Budget::Timed {
            millis: ms.min(MAX_MILLIS),
            cap: cap.unwrap_or(MAX_SIMS).clamp(1, MAX_SIMS),
        },
        (None, None, None) => Budget::Sims(own_sims.clamp(1, MAX_SIMS)),
    }
}

/// Spends `budget` by calling `step(sims)`; returns the simulations run, stopping at the first
/// error of `step`.
///
/// A timed budget (an anytime search) first runs [`TIMED_PROBE`] simulations to measure the
/// rate. Then either (`sized_once`, for a Gumbel root whose sequential halving needs its budget
/// in advance) one more call sized from that rate to end at the clock, or rounds of about half
/// the simulations the time left allows (at most [`TIMED_CHUNK`]), until less than one
/// simulation's time is left: the search ends within about one simulation of the deadline.
fn spend<E>(
    budget: Budget,
    sized_once: bool,
    mut step: impl FnMut(u32) -> Result<(), E>,
) -> Result<u32, E> {
    let (millis, cap) = match budget {
        Budget::Sims(n) => {
            step(n)?;
            return Ok(n);
        }
        Budget::Timed { millis, cap } => (millis, cap),
    };
    let start = Instant::now();
    let deadline = start + Duration::from_millis(millis);
    let mut total = 0u32;
    let mut chunk = TIMED_PROBE;
    loop {
        let n = chunk.min(cap - total).max(1);
        step(n)?;
        total += n;
        let now = Instant::now();
        if total >= cap || now >= deadline {
            return Ok(total);
        }
        let rate = f64::from(total) / now.duration_since(start).as_secs_f64().max(1e-9);
        let affordable = rate * deadline.duration_since(now).as_secs_f64();
        if sized_once {
            let n = (affordable * SIZED_SHARE).min(f64::from(cap - total)) as u32;
            if n >= 1 {
                step(n)?;
                total += n;
            }
            return Ok(total);
        }
        if affordable < 1.0 {
            return Ok(total);
        }
        chunk = ((affordable / 2.0) as u32).clamp(1, TIMED_CHUNK);
    }
}

/// Plain UCT with random rollouts (the `mcts:rollouts,sims=N` player). Picks the most visited
/// move; keeps its tree between moves of one game.
#[derive(Debug)]
pub struct RolloutMctsPlayer {
    search: RolloutSearch,
    sims: u32,
    time: OwnTime,
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
            time: None,
            rng: SmallRng::seed_from_u64(seed),
            name: format!("mcts:rollouts,sims={}", sims.max(1)),
        }
    }

    /// Gives the player its own time per move (`Some((millis, cap))`, `ms=` and `sims=` of its
    /// spec), used when a move is asked without limits.
    pub fn with_time(mut self, time: OwnTime) -> Self {
        self.time = time;
        self
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
    /// for the player's own time if it has one, else the player's own count.
    fn choose(&mut self, game: &Game, limits: Limits) -> Result<Choice, PlayerError> {
        self.search.set_game(game);
        let mut last = None;
        let search = &mut self.search;
        let rng = &mut self.rng;
        let total = spend(budget(self.sims, self.time, limits), false, |n| {
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
    time: OwnTime,
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
            time: None,
            rng: SmallRng::seed_from_u64(seed),
            name,
        })
    }

    /// Gives the player its own time per move (`Some((millis, cap))`, `ms=` and `sims=` of its
    /// spec), used when a move is asked without limits.
    pub fn with_time(mut self, time: OwnTime) -> Self {
        self.time = time;
        self
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

    /// Searches `limits.sims` simulations if given, else for `limits.millis` if given, else for
    /// the player's own time if it has one, else the configured `sims`. A Gumbel root sizes its
    /// one sequential halving from the simulation rate measured in the first few milliseconds.
    /// `Choice::value` is the root value for the side to move.
    /// A failing evaluator is an error ([`PlayerError::Evaluator`]), never a made-up move.
    fn choose(&mut self, game: &Game, limits: Limits) -> Result<Choice, PlayerError> {
        self.search.set_game(game);
        let config = self.search.config();
        let budget = budget(config.sims, self.time, limits);
        let sized_once = config.root == RootAlgorithm::Gumbel;
        let mut last = None;
        let search = &mut self.search;
        let rng = &mut self.rng;
        let evaluator = &self.evaluator;
        let total = spend(budget, sized_once, |n| {
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
        let total = spend(budget(100, None, limits), false, |n| {
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
        assert_eq!(
            spend(budget(100, None, sims(u32::MAX)), false, none),
            Ok(MAX_SIMS)
        );
        assert_eq!(spend(budget(100, None, sims(0)), false, none), Ok(1));
        assert_eq!(
            spend(budget(100, None, Limits::default()), false, none),
            Ok(100)
        );
    }

    #[test]
    fn asked_limits_come_before_the_players_own_time() {
        let own = Some((50, Some(300)));
        let timed = |millis, cap| Budget::Timed { millis, cap };
        assert_eq!(budget(100, own, Limits::default()), timed(50, 300));
        assert_eq!(
            budget(100, Some((50, None)), Limits::default()),
            timed(50, MAX_SIMS)
        );
        let go_ms = Limits {
            millis: Some(7),
            ..Limits::default()
        };
        assert_eq!(budget(100, own, go_ms), timed(7, MAX_SIMS));
        let go_sims = Limits {
            sims: Some(9),
            ..Limits::default()
        };
        assert_eq!(budget(100, own, go_sims), Budget::Sims(9));
    }

    #[test]
    fn a_timed_search_stops_at_its_cap_and_a_sized_one_calls_twice() {
        // The cap ends a long timed search.
        let mut calls = Vec::new();
        let total = spend(timed(60_000, 20), false, |n| {
            calls.push(n);
            Ok::<(), ()>(())
        });
        assert_eq!(total, Ok(20));
        assert_eq!(calls.iter().sum::<u32>(), 20);
        // A sized search: the probe, then one call for (most of) the rest of the time.
        let mut calls = Vec::new();
        let total = spend(timed(200, MAX_SIMS), true, |n| {
            calls.push(n);
            std::thread::sleep(Duration::from_micros(200 * u64::from(n)));
            Ok::<(), ()>(())
        });
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0], TIMED_PROBE);
        assert_eq!(total, Ok(calls[0] + calls[1]));
    }

    fn timed(millis: u64, cap: u32) -> Budget {
        Budget::Timed { millis, cap }
    }
}
