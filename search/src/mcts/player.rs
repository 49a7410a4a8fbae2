//! Players built on the searches: plain UCT with rollouts, and MCTS with any evaluator.

use super::config::{ConfigError, MctsConfig};
use super::rollout::RolloutSearch;
use super::search::Search;
use crate::evaluator::Evaluator;
use crate::player::{Budget, Choice, PROGRESS_MILLIS, Player, PlayerError, Score, SearchInfo};
use crate::table_root::{restrict_to, table_root_moves};
use oware_egtb::{Prover, Tables};
use oware_engine::Game;
use oware_engine::Move;
use oware_engine::bounds::{MAX_MILLIS, MAX_SIMS};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most simulations of one round of a timed search (the clock is read between rounds).
const TIMED_CHUNK: u32 = 64;
/// The simulations of a timed rollout search's first round, which measures the simulation
/// rate; also the least first plan of a timed network search whose rate is not known yet.
const TIMED_PROBE: u32 = 8;

/// A player's own time per move (`ms=` in its spec) and the simulation cap (`sims=` next to
/// it), used when a move is asked without limits.
pub type OwnTime = Option<(u64, Option<u32>)>;

/// What one move's search may spend.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SimBudget {
    /// Exactly this many simulations.
    Sims(u32),
    /// Simulations until `millis` have passed, at most `cap`.
    Timed { millis: u64, cap: u32 },
}

/// The budget of one move: the asked simulations, else the asked time, else the player's own
/// time (`own_time`), else its own simulations. At most [`MAX_SIMS`] simulations either way,
/// so a long time limit cannot grow the tree without bound.
fn budget(own_sims: u32, own_time: OwnTime, limits: Budget) -> SimBudget {
    match (limits.sims, limits.millis, own_time) {
        (Some(s), _, _) => SimBudget::Sims(s.clamp(1, MAX_SIMS)),
        (None, Some(ms), _) => SimBudget::Timed {
            millis: ms.min(MAX_MILLIS),
            cap: MAX_SIMS,
        },
        (None, None, Some((ms, cap))) => SimBudget::Timed {
            millis: ms.min(MAX_MILLIS),
            cap: cap.unwrap_or(MAX_SIMS).clamp(1, MAX_SIMS),
        },
        (None, None, None) => SimBudget::Sims(own_sims.clamp(1, MAX_SIMS)),
    }
}

/// Spends `budget` by calling `step(sims)`; returns the simulations run, stopping at the first
/// error of `step`.
///
/// A timed budget (an anytime search) first runs [`TIMED_PROBE`] simulations to measure the
/// rate, then rounds of about half the simulations the time left allows (at most
/// [`TIMED_CHUNK`]), until less than one simulation's time is left: the search ends within
/// about one simulation of the deadline.
fn spend<E>(budget: SimBudget, mut step: impl FnMut(u32) -> Result<(), E>) -> Result<u32, E> {
    let (millis, cap) = match budget {
        SimBudget::Sims(n) => {
            step(n)?;
            return Ok(n);
        }
        SimBudget::Timed { millis, cap } => (millis, cap),
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
        if affordable < 1.0 {
            return Ok(total);
        }
        chunk = ((affordable / 2.0) as u32).clamp(1, TIMED_CHUNK);
    }
}

/// The longest principal variation an `info` report shows.
const PV_LEN: usize = 12;

/// Passes at the start of a timed network search after each of which the plan is re-made
/// from the rate measured so far; later it is re-made every [`REPLANS`]th of the time.
const EARLY_REPLANS: u32 = 4;
/// How many times (at most, after the early ones) a timed network search re-plans its budget.
const REPLANS: u32 = 16;

/// The clock of one timed network search: it sizes the budget from the simulation rate
/// measured in this search, re-plans it as the rate estimate changes, and ends it at the
/// deadline.
#[derive(Debug)]
struct Clock {
    start: Instant,
    deadline: Instant,
    cap: u32,
    every: Duration,
    last: Instant,
    passes: u32,
}

impl Clock {
    fn new(millis: u64, cap: u32) -> Clock {
        let start = Instant::now();
        let span = Duration::from_millis(millis);
        Clock {
            start,
            deadline: start + span,
            cap,
            every: span / REPLANS,
            last: start,
            passes: 0,
        }
    }

    /// The new total for the search after a pass (or with the budget `spent`) when
    /// `started` simulations have begun: `Some(started)` ends it.
    fn plan(&mut self, started: u32, spent: bool) -> Option<u32> {
        let now = Instant::now();
        if now >= self.deadline || started >= self.cap {
            return Some(started);
        }
        self.passes += 1;
        let due = spent || self.passes <= EARLY_REPLANS || now - self.last >= self.every;
        if !due || started == 0 {
            // Nothing measured yet (the pass evaluated a fresh root) or not due.
            return None;
        }
        self.last = now;
        let rate = f64::from(started) / now.duration_since(self.start).as_secs_f64().max(1e-9);
        let more = rate * self.deadline.duration_since(now).as_secs_f64();
        if more < 1.0 {
            return Some(started);
        }
        Some((f64::from(started) + more).min(f64::from(self.cap)) as u32)
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
    fn choose(&mut self, game: &Game, limits: Budget) -> Result<Choice, PlayerError> {
        self.choose_reporting(game, limits, &mut |_| {})
    }

    /// Reports after rounds of a timed search about every [`crate::player::PROGRESS_MILLIS`],
    /// and once at the end.
    fn choose_reporting(
        &mut self,
        game: &Game,
        limits: Budget,
        progress: &mut dyn FnMut(&SearchInfo),
    ) -> Result<Choice, PlayerError> {
        let start = Instant::now();
        self.search.set_game(game);
        let mut last = None;
        let mut reported = Duration::ZERO;
        let mut sims = 0u32;
        let search = &mut self.search;
        let rng = &mut self.rng;
        let total = spend(budget(self.sims, self.time, limits), |n| {
            last = search.run(n, rng);
            sims += n;
            let elapsed = start.elapsed();
            if elapsed >= reported + Duration::from_millis(PROGRESS_MILLIS) {
                reported = elapsed;
                if let (Some(r), Some(pv)) = (&last, search.principal_variation(PV_LEN)) {
                    progress(&info(sims, r.value, search.tree_size(), elapsed, pv));
                }
            }
            Ok::<(), PlayerError>(())
        })?;
        let r = last.ok_or(PlayerError::GameOver)?;
        let pv = self.search.principal_variation(PV_LEN).unwrap_or_default();
        let nodes = self.search.tree_size();
        progress(&info(total, r.value, nodes, start.elapsed(), pv));
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
    /// Simulations per second of the last timed search, for the next one's first plan.
    rate: Option<f64>,
    /// Ends a search early once set ([`Player::set_stop`]).
    stop: Option<Arc<AtomicBool>>,
    rng: SmallRng,
    name: String,
    /// The prover of the root proofs over the endgame tables ([`MctsPlayer::with_tables`]).
    prover: Option<Prover>,
}

impl<E: Evaluator + Send> MctsPlayer<E> {
    /// A player searching with `config` (`sims` per move, `leaves_per_tree` = evaluator batch).
    pub fn new(evaluator: E, config: MctsConfig, seed: u64) -> Result<MctsPlayer<E>, ConfigError> {
        let name = format!("mcts:sims={}", config.sims);
        Ok(MctsPlayer {
            evaluator,
            search: Search::new(config)?,
            time: None,
            rate: None,
            stop: None,
            rng: SmallRng::seed_from_u64(seed),
            name,
            prover: None,
        })
    }

    /// Plays endgames by the tables as alpha-beta does: at a root the tables cover, proofs from
    /// the game's real history pick the moves worth playing ([`table_root_moves`]), and the
    /// search's choice stands only among them (else the one of them it visited most). A timed
    /// search gives the proofs at most half its time. The evaluator should also know the
    /// tables ([`crate::TableEvaluator`]).
    pub fn with_tables(mut self, tables: Arc<Tables>) -> Self {
        self.prover = Some(Prover::new(tables));
        self
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
    /// the player's own time if it has one, else the configured `sims`. A timed search sizes
    /// its budget (a Gumbel root: its sequential halving) from the simulation rate it measures,
    /// re-plans as the estimate changes and ends at the clock. `Choice::value` is the root
    /// value for the side to move. A failing evaluator is an error
    /// ([`PlayerError::Evaluator`]), never a made-up move.
    fn choose(&mut self, game: &Game, limits: Budget) -> Result<Choice, PlayerError> {
        self.choose_reporting(game, limits, &mut |_| {})
    }

    /// Reports about every [`crate::player::PROGRESS_MILLIS`] while searching and once at the
    /// end.
    fn choose_reporting(
        &mut self,
        game: &Game,
        limits: Budget,
        progress: &mut dyn FnMut(&SearchInfo),
    ) -> Result<Choice, PlayerError> {
        let start = Instant::now();
        self.search.set_game(game);
        let leaves = self.search.config().leaves_per_tree;
        let sim_budget = budget(self.search.config().sims, self.time, limits);
        let allowed = self.prover.as_mut().and_then(|prover| {
            let deadline = match sim_budget {
                SimBudget::Timed { millis, .. } => Some(start + Duration::from_millis(millis / 2)),
                SimBudget::Sims(_) => None,
            };
            table_root_moves(prover, game, deadline)
        });
        let proofs_took = start.elapsed();
        let (first_plan, mut clock) = match sim_budget {
            SimBudget::Sims(n) => (n, None),
            SimBudget::Timed { millis, cap } => {
                let spent = u64::try_from(proofs_took.as_millis()).unwrap_or(u64::MAX);
                let millis = millis.saturating_sub(spent).max(1);
                // The first plan: from the rate of the last timed search, else enough passes
                // that the first few (after which the plan is re-made) stay in the first
                // halving phase.
                let guess = match self.rate {
                    Some(rate) => rate * millis as f64 / 1000.0,
                    None => f64::from(TIMED_PROBE.max(4 * leaves)),
                };
                let plan = guess.clamp(1.0, f64::from(cap)) as u32;
                (plan, Some(Clock::new(millis, cap)))
            }
        };
        let mut reported = Duration::ZERO;
        let every = Duration::from_millis(PROGRESS_MILLIS);
        let evaluator = &self.evaluator;
        let stop = self.stop.clone();
        let result = self.search.run_steered(
            evaluator,
            first_plan,
            false,
            &mut self.rng,
            &mut |search, spent| {
                let elapsed = start.elapsed();
                if !spent && elapsed >= reported + every {
                    reported = elapsed;
                    if let Some((value, pv)) = search.progress(PV_LEN) {
                        let sims = search.sims_started();
                        progress(&info(sims, value, search.tree_size(), elapsed, pv));
                    }
                }
                if stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                    // Stopped from outside: end with the simulations begun.
                    return Some(search.sims_started());
                }
                clock.as_mut()?.plan(search.sims_started(), spent)
            },
        )?;
        let mut r = result.ok_or(PlayerError::GameOver)?;
        if let Some(allowed) = &allowed {
            r.mv = restrict_to(allowed, r.mv, &r.visits);
        }
        let elapsed = start.elapsed();
        if clock.is_some() && r.sims > 0 {
            let searching = elapsed.saturating_sub(proofs_took);
            self.rate = Some(f64::from(r.sims) / searching.as_secs_f64().max(1e-9));
        }
        let mut pv = self
            .search
            .progress(PV_LEN)
            .map(|p| p.1)
            .unwrap_or_default();
        if pv.first() != Some(&r.mv) {
            pv = vec![r.mv];
        }
        progress(&info(r.sims, r.value, self.search.tree_size(), elapsed, pv));
        Ok(choice(r.mv, r.value, r.visits, r.sims))
    }

    fn new_game(&mut self) {
        self.search.reset(&Game::new());
    }

    fn set_stop(&mut self, stop: Option<Arc<AtomicBool>>) {
        self.stop = stop;
    }
}

/// An MCTS `info` report.
fn info(sims: u32, value: f32, nodes: usize, elapsed: Duration, pv: Vec<Move>) -> SearchInfo {
    SearchInfo {
        depth: None,
        sims: Some(sims),
        score: Score::from_value(value),
        nodes: nodes as u64,
        millis: elapsed.as_millis().try_into().unwrap_or(u64::MAX),
        pv,
    }
}

/// A player's answer from a search: the move, the root value and a one-line summary.
fn choice(mv: Move, value: f32, visits: [u32; 6], sims: u32) -> Choice {
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
        let limits = Budget {
            millis: Some(MAX_MILLIS),
            ..Budget::default()
        };
        let mut run = 0u32;
        let total = spend(budget(100, None, limits), |n| {
            run += n;
            Ok::<(), ()>(())
        });
        assert_eq!((total, run), (Ok(MAX_SIMS), MAX_SIMS));
        // An explicit count above the bound is cut to it; zero becomes one.
        let sims = |s: u32| Budget {
            sims: Some(s),
            ..Budget::default()
        };
        let none = |_| Ok::<(), ()>(());
        assert_eq!(spend(budget(100, None, sims(u32::MAX)), none), Ok(MAX_SIMS));
        assert_eq!(spend(budget(100, None, sims(0)), none), Ok(1));
        assert_eq!(spend(budget(100, None, Budget::default()), none), Ok(100));
    }

    #[test]
    fn asked_limits_come_before_the_players_own_time() {
        let own = Some((50, Some(300)));
        let timed = |millis, cap| SimBudget::Timed { millis, cap };
        assert_eq!(budget(100, own, Budget::default()), timed(50, 300));
        assert_eq!(
            budget(100, Some((50, None)), Budget::default()),
            timed(50, MAX_SIMS)
        );
        let go_ms = Budget {
            millis: Some(7),
            ..Budget::default()
        };
        assert_eq!(budget(100, own, go_ms), timed(7, MAX_SIMS));
        let go_sims = Budget {
            sims: Some(9),
            ..Budget::default()
        };
        assert_eq!(budget(100, own, go_sims), SimBudget::Sims(9));
    }

    #[test]
    fn a_timed_search_stops_at_its_cap() {
        // The cap ends a long timed search.
        let mut calls = Vec::new();
        let total = spend(timed(60_000, 20), |n| {
            calls.push(n);
            Ok::<(), ()>(())
        });
        assert_eq!(total, Ok(20));
        assert_eq!(calls.iter().sum::<u32>(), 20);
    }

    #[test]
    fn a_clock_grows_the_plan_by_the_rate_and_ends_it_at_the_deadline() {
        let mut clock = Clock::new(200, MAX_SIMS);
        // A fresh root's pass measures nothing.
        assert_eq!(clock.plan(0, false), None);
        std::thread::sleep(Duration::from_millis(20));
        // 100 simulations in about 20 ms: about 900 more fit in the 180 ms left.
        let plan = clock.plan(100, false).expect("an early pass re-plans");
        assert!((101..=1100).contains(&plan), "plan {plan}");
        // The cap bounds the plan; reaching it ends the search.
        let mut capped = Clock::new(200, 150);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(capped.plan(100, false), Some(150));
        assert_eq!(capped.plan(150, false), Some(150));
        // Past the deadline the search ends where it is.
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(clock.plan(700, true), Some(700));
    }

    fn timed(millis: u64, cap: u32) -> SimBudget {
        SimBudget::Timed { millis, cap }
    }
}
