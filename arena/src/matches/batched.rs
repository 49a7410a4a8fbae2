//! Matches with a network side, played as self-play plays: each driver thread keeps up to
//! [`super::GAMES_IN_FLIGHT`] games in flight and runs one [`BatchedSearch`] per network side over
//! them. A round of a driver: each network side searches, in one batched search (one evaluator
//! call per pass), every game where it is to move, and plays its moves; then the sides with
//! per-game players choose their moves in the games where they are to move, in parallel on the
//! match's rayon pool; finished games are handed out and their slots take the next games.
//!
//! The searches are those of [`oware_search::MctsPlayer`]: the same configuration without noise or
//! temperature, the same simulations, the subtree of each played move kept (with
//! `reuse_tree`), so with the same evaluations they choose the same moves.

use super::{
    Contestant, GameOutcome, GameStart, MatchOptions, NetworkSide, PlayerFactory, games_in_flight,
    mix, new_player, outcome, play_move,
};
use oware_egtb::Prover;
use oware_engine::Game;
use oware_engine::Move;
use oware_engine::Side;
use oware_search::mcts::{BatchedSearch, SlotParams};
use oware_search::{Player, restrict_to, table_root_moves};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rayon::ThreadPool;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What every driver of one match shares.
struct Shared<'a> {
    options: &'a MatchOptions,
    openings: &'a [Vec<Move>],
    indices: &'a [u32],
    /// The position in `indices` of the next game to start.
    next: AtomicUsize,
    /// Set when a driver fails: the others stop starting rounds.
    failed: AtomicBool,
    pool: &'a ThreadPool,
    on_game: &'a (dyn Fn(&GameOutcome) + Sync),
}

/// Plays the games `indices` of the match with sides `sides` (A, B), at least one of them a
/// [`Contestant::Network`]. Returns the games in the order of `indices`.
pub(super) fn play(
    sides: [&Contestant<'_>; 2],
    options: &MatchOptions,
    openings: &[Vec<Move>],
    indices: &[u32],
    pool: &ThreadPool,
    on_game: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>, String> {
    if indices.is_empty() {
        return Ok(Vec::new());
    }
    let drivers = options.threads.max(1).min(indices.len());
    let slots = games_in_flight(indices.len(), drivers);
    let shared = Shared {
        options,
        openings,
        indices,
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        pool,
        on_game,
    };
    let finished: Vec<Result<Vec<(usize, GameOutcome)>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..drivers)
            .map(|d| {
                let shared = &shared;
                scope.spawn(move || {
                    let played = Driver::new(sides, slots, mix(options.seed ^ d as u64))
                        .and_then(|driver| driver.run(shared));
                    if played.is_err() {
                        shared.failed.store(true, Ordering::SeqCst);
                    }
                    played
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|payload| {
                    Err(oware_engine::panic::panic_message(&*payload)
                        .unwrap_or_else(|| "a match thread panicked".to_string()))
                })
            })
            .collect()
    });
    let mut games = Vec::with_capacity(indices.len());
    for driver in finished {
        games.extend(driver?);
    }
    if games.len() != indices.len() {
        return Err(format!(
            "the match threads finished {} of {} games",
            games.len(),
            indices.len()
        ));
    }
    games.sort_by_key(|(order, _)| *order);
    Ok(games.into_iter().map(|(_, g)| g).collect())
}

/// One side as a driver plays it.
enum SideState<'a> {
    /// Per-game players from this factory.
    Player(&'a PlayerFactory<'a>),
    /// The network's batched search over the driver's slots.
    Network {
        side: &'a NetworkSide,
        search: BatchedSearch,
    },
}

/// A game in flight.
struct Live {
    /// Where the game is in the match's `indices`.
    order: usize,
    index: u32,
    a_side: Side,
    opening_plies: usize,
    game: Game,
    /// The per-game players of A and B (`None` for a network side).
    players: [Option<Box<dyn Player>>; 2],
    /// The root provers of A and B (a network side with tables only), kept for the game as
    /// an [`oware_search::MctsPlayer`] keeps its own.
    provers: [Option<Prover>; 2],
    times: [(Duration, u32); 2],
}

impl Live {
    /// The side to move: 0 for A, 1 for B.
    fn mover(&self) -> usize {
        usize::from(self.game.to_move() != self.a_side)
    }

    /// Whether side `k` is to move in a game that is not over.
    fn waits_for(&self, k: usize) -> bool {
        !self.game.is_over() && self.mover() == k
    }
}

/// One thread's games in flight and the sides' searches over them.
struct Driver<'a> {
    sides: [SideState<'a>; 2],
    slots: Vec<Option<Live>>,
    rng: SmallRng,
}

impl<'a> Driver<'a> {
    fn new(sides: [&Contestant<'a>; 2], slots: usize, seed: u64) -> Result<Driver<'a>, String> {
        let state = |c: &Contestant<'a>| -> Result<SideState<'a>, String> {
            Ok(match *c {
                Contestant::Player(factory) => SideState::Player(factory),
                Contestant::Network(side) => {
                    let mut search = BatchedSearch::new(side.config.clone(), slots)
                        .map_err(|e| format!("the search of player {}: {e}", side.name))?;
                    let params = SlotParams {
                        sims: side.config.sims,
                        noise: false,
                        temperature: false,
                    };
                    for slot in 0..slots {
                        search.set_params(slot, params);
                    }
                    SideState::Network { side, search }
                }
            })
        };
        Ok(Driver {
            sides: [state(sides[0])?, state(sides[1])?],
            slots: (0..slots).map(|_| None).collect(),
            rng: SmallRng::seed_from_u64(seed),
        })
    }

    /// Plays rounds until the match has no game left to start and every slot is empty (or
    /// another driver failed). Returns the finished games with their places in `indices`.
    fn run(mut self, shared: &Shared<'_>) -> Result<Vec<(usize, GameOutcome)>, String> {
        let mut done = Vec::new();
        while !shared.failed.load(Ordering::SeqCst) {
            self.fill(shared)?;
            if self.slots.iter().all(Option::is_none) {
                break;
            }
            for k in 0..2 {
                self.network_moves(k, shared.pool)?;
            }
            self.player_moves(shared.pool)?;
            for slot in self.slots.iter_mut() {
                if !slot.as_ref().is_some_and(|live| live.game.is_over()) {
                    continue;
                }
                let Some(live) = slot.take() else { continue };
                let index = live.index;
                let game = outcome(
                    index,
                    live.a_side,
                    live.opening_plies,
                    live.game,
                    live.times,
                )
                .map_err(|e| format!("game {}: {e}", index + 1))?;
                (shared.on_game)(&game);
                done.push((live.order, game));
            }
        }
        Ok(done)
    }

    /// Starts the match's next games in the empty slots.
    fn fill(&mut self, shared: &Shared<'_>) -> Result<(), String> {
        for slot in 0..self.slots.len() {
            if self.slots[slot].is_some() {
                continue;
            }
            let order = shared.next.fetch_add(1, Ordering::SeqCst);
            let Some(&index) = shared.indices.get(order) else {
                return Ok(());
            };
            let live = self
                .start(shared, order, index)
                .map_err(|e| format!("game {}: {e}", index + 1))?;
            for side in &mut self.sides {
                if let SideState::Network { search, .. } = side {
                    search.reset(slot, live.game.clone());
                }
            }
            self.slots[slot] = Some(live);
        }
        Ok(())
    }

    /// Game `index` after its opening, with fresh players for the sides that have them.
    fn start(&self, shared: &Shared<'_>, order: usize, index: u32) -> Result<Live, String> {
        let opening = &shared.openings[(index / 2) as usize];
        let start = GameStart::new(shared.options, opening, index)?;
        let player = |k: usize| match self.sides[k] {
            SideState::Player(factory) => new_player(factory, start.seeds[k]).map(Some),
            SideState::Network { .. } => Ok(None),
        };
        let prover = |k: usize| match &self.sides[k] {
            SideState::Network { side, .. } => side.tables.as_ref().map(|t| Prover::new(t.clone())),
            SideState::Player(_) => None,
        };
        Ok(Live {
            order,
            index,
            a_side: start.a_side,
            opening_plies: opening.len(),
            players: [player(0)?, player(1)?],
            provers: [prover(0), prover(1)],
            game: start.game,
            times: [(Duration::ZERO, 0); 2],
        })
    }

    /// Side `k`, if it is a network, searches every game where it is to move in one batched
    /// search and plays its moves (with tables: among the moves the root proofs allow, run in
    /// parallel on `pool`).
    fn network_moves(&mut self, k: usize, pool: &ThreadPool) -> Result<(), String> {
        let SideState::Network { side, search } = &mut self.sides[k] else {
            return Ok(());
        };
        let wanted: Vec<bool> = self
            .slots
            .iter()
            .map(|s| s.as_ref().is_some_and(|live| live.waits_for(k)))
            .collect();
        let count = wanted.iter().filter(|&&w| w).count();
        if count == 0 {
            return Ok(());
        }
        let started = Instant::now();
        let results = search
            .search_some(side.evaluator.as_ref(), &mut self.rng, &wanted)
            .map_err(|e| format!("player {}: {e}", side.name))?;
        let allowed: Vec<Option<Vec<Move>>> = if side.tables.is_some() {
            pool.install(|| {
                self.slots
                    .par_iter_mut()
                    .enumerate()
                    .map(|(slot, live)| {
                        let live = live.as_mut().filter(|_| wanted[slot])?;
                        let prover = live.provers[k].as_mut()?;
                        table_root_moves(prover, &live.game, None)
                    })
                    .collect()
            })
        } else {
            Vec::new()
        };
        let share = started.elapsed() / count as u32;
        let mut moves = Vec::with_capacity(count);
        for (slot, result) in results.into_iter().enumerate() {
            let Some(live) = self.slots[slot].as_mut().filter(|_| wanted[slot]) else {
                continue;
            };
            let name = &side.name;
            let r = result.ok_or_else(|| {
                format!(
                    "game {}: player {name}: its search found the game over",
                    live.index + 1
                )
            })?;
            let mv = match allowed.get(slot) {
                Some(Some(allowed)) => restrict_to(allowed, r.mv, &r.visits),
                _ => r.mv,
            };
            live.game.play(mv).map_err(|e| {
                format!(
                    "game {}: player {name} chose an illegal move: {e}",
                    live.index + 1
                )
            })?;
            live.times[k].0 += share;
            live.times[k].1 += 1;
            moves.push((slot, mv));
        }
        self.advance_searches(&moves)
    }

    /// The per-game players choose their moves where they are to move, in parallel on `pool`.
    fn player_moves(&mut self, pool: &ThreadPool) -> Result<(), String> {
        let chosen: Vec<Result<Option<(usize, Move)>, String>> = pool.install(|| {
            self.slots
                .par_iter_mut()
                .enumerate()
                .map(|(slot, s)| {
                    let Some(live) = s.as_mut().filter(|live| !live.game.is_over()) else {
                        return Ok(None);
                    };
                    let k = live.mover();
                    let Some(player) = live.players[k].as_mut() else {
                        return Ok(None);
                    };
                    let mv = play_move(player.as_mut(), &mut live.game, &mut live.times[k])
                        .map_err(|e| format!("game {}: {e}", live.index + 1))?;
                    Ok(Some((slot, mv)))
                })
                .collect()
        });
        let mut moves = Vec::new();
        for c in chosen {
            moves.extend(c?);
        }
        self.advance_searches(&moves)
    }

    /// Plays `moves` (slot, move) in every network side's search, keeping the subtrees.
    fn advance_searches(&mut self, moves: &[(usize, Move)]) -> Result<(), String> {
        for side in &mut self.sides {
            let SideState::Network { side, search } = side else {
                continue;
            };
            for &(slot, mv) in moves {
                search
                    .advance(slot, mv)
                    .map_err(|e| format!("player {}: its search lost a game: {e}", side.name))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MatchSummary, play_contest, play_games};
    use super::*;
    use oware_engine::Position;
    use oware_search::mcts::{MctsConfig, RootAlgorithm};
    use oware_search::{AlphaBetaPlayer, MctsPlayer, RandomPlayer};
    use oware_search::{EvalError, Evaluation, Evaluator, uniform_policy};
    use std::sync::Arc;

    /// A deterministic evaluator that is not uniform: priors and values from the position's key.
    struct Hashed;

    impl Evaluator for Hashed {
        fn evaluate(
            &self,
            positions: &[Position],
            out: &mut [Evaluation],
        ) -> Result<(), EvalError> {
            for (pos, e) in positions.iter().zip(out.iter_mut()) {
                let key = mix(pos.key() as u64 ^ (pos.key() >> 64) as u64);
                let mut policy = uniform_policy(pos);
                let mut sum = 0.0;
                for (i, p) in policy.iter_mut().enumerate() {
                    *p *= 1.0 + ((key >> (8 * i)) & 0xff) as f32;
                    sum += *p;
                }
                policy.iter_mut().for_each(|p| *p /= sum);
                *e = Evaluation {
                    policy,
                    value: ((key >> 56) as f32 / 255.0) - 0.5,
                };
            }
            Ok(())
        }
    }

    fn network(name: &str, config: MctsConfig) -> NetworkSide {
        NetworkSide {
            name: name.to_string(),
            evaluator: Arc::new(Hashed),
            config,
            tables: None,
        }
    }

    /// The same network player, one game at a time.
    fn one_game(side: &NetworkSide) -> impl Fn(u64) -> Result<Box<dyn Player>, String> + Sync {
        let (config, tables) = (side.config.clone(), side.tables.clone());
        let evaluator = Arc::clone(&side.evaluator);
        move |seed| {
            let player = MctsPlayer::new(Arc::clone(&evaluator), config.clone(), seed)
                .map_err(|e| e.to_string())?;
            Ok(match &tables {
                Some(t) => Box::new(player.with_tables(t.clone())) as Box<dyn Player>,
                None => Box::new(player) as Box<dyn Player>,
            })
        }
    }

    fn records(games: &[GameOutcome]) -> Vec<(u32, Side, String, String)> {
        games
            .iter()
            .map(|g| {
                (
                    g.index,
                    g.a_side,
                    g.game.record(),
                    format!("{:?}", g.result),
                )
            })
            .collect()
    }

    #[test]
    fn batched_games_are_the_one_game_paths_games() {
        let alphabeta = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(AlphaBetaPlayer::with_table(
                Some(2),
                None,
                seed,
                1,
            )))
        };
        let random = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(RandomPlayer::new(seed)))
        };
        let puct = network(
            "puct",
            MctsConfig {
                sims: 24,
                leaves_per_tree: 3,
                ..MctsConfig::default()
            },
        );
        let gumbel = network(
            "gumbel",
            MctsConfig {
                sims: 16,
                root: RootAlgorithm::Gumbel,
                reuse_tree: false,
                ..MctsConfig::default()
            },
        );
        let options = MatchOptions {
            games: 9,
            opening_plies: None,
            seed: 5,
            threads: 2,
            max_plies: 120,
        };
        let all: Vec<u32> = (0..options.games).collect();
        let (puct_one, gumbel_one) = (one_game(&puct), one_game(&gumbel));
        let pairings: [(Contestant, Contestant, &PlayerFactory, &PlayerFactory); 4] = [
            (
                Contestant::Network(&puct),
                Contestant::Player(&alphabeta),
                &puct_one,
                &alphabeta,
            ),
            (
                Contestant::Player(&random),
                Contestant::Network(&gumbel),
                &random,
                &gumbel_one,
            ),
            (
                Contestant::Network(&puct),
                Contestant::Network(&gumbel),
                &puct_one,
                &gumbel_one,
            ),
            (
                Contestant::Network(&gumbel),
                Contestant::Player(&alphabeta),
                &gumbel_one,
                &alphabeta,
            ),
        ];
        for (a, b, a_one, b_one) in pairings {
            let batched = play_contest(&a, &b, &options, &all, &|_| {}).expect("plays");
            let single = play_games(a_one, b_one, &options, &all, &|_| {}).expect("plays");
            assert_eq!(records(&batched), records(&single));
            let (s, t) = (
                MatchSummary::from_games(&batched),
                MatchSummary::from_games(&single),
            );
            assert_eq!(
                (s.total, s.a_moves, s.b_moves),
                (t.total, t.a_moves, t.b_moves)
            );
            // A subset of the match, on one thread with fewer slots than games, in the asked
            // order: the same games again.
            let one_thread = MatchOptions {
                threads: 1,
                ..options
            };
            let some = play_contest(&a, &b, &one_thread, &[7, 0, 3], &|_| {}).expect("plays");
            let want: Vec<_> = [7, 0, 3]
                .iter()
                .map(|&i| records(&single)[i].clone())
                .collect();
            assert_eq!(records(&some), want);
        }
    }

    /// With tables, the batched path plays the moves the one-game path plays: the same root
    /// proofs restrict the same searches' choices.
    #[test]
    fn with_tables_batched_games_are_the_one_game_paths_games() {
        const MAX: usize = 10;
        let mut solved: Vec<oware_egtb::Table> = Vec::new();
        // The exact search of 0..=6 seeds, as before the default grew: this test needs the
        // root proofs, not the seventh and eighth tables' exact entries (minutes more).
        let options = oware_egtb::SolveOptions::exact_up_to(6);
        for n in 0..=MAX as u8 {
            let (t, _) = oware_egtb::solve_table_with(n, &solved, &options, &|_| {});
            solved.push(t);
        }
        let tables = Arc::new(oware_egtb::Tables::from_tables(
            std::path::Path::new("mem"),
            solved,
        ));
        let side = NetworkSide {
            name: "tables".to_string(),
            evaluator: Arc::new(oware_search::TableEvaluator::new(Hashed, tables.clone())),
            config: MctsConfig {
                sims: 24,
                leaves_per_tree: 3,
                ..MctsConfig::default()
            },
            tables: Some(tables),
        };
        let random = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(RandomPlayer::new(seed)))
        };
        let options = MatchOptions {
            games: 8,
            opening_plies: None,
            seed: 3,
            threads: 2,
            max_plies: 400,
        };
        let all: Vec<u32> = (0..options.games).collect();
        let side_one = one_game(&side);
        let (a, b) = (Contestant::Network(&side), Contestant::Player(&random));
        let batched = play_contest(&a, &b, &options, &all, &|_| {}).expect("plays");
        let single = play_games(&side_one, &random, &options, &all, &|_| {}).expect("plays");
        assert_eq!(records(&batched), records(&single));
        // Not vacuous: the network side moved in positions the tables cover.
        let covered = batched
            .iter()
            .map(|g| {
                let mut game = Game::from_position(*g.game.start(), options.max_plies);
                let mut count = 0;
                for &mv in g.game.moves() {
                    let seeds: usize = game.position().board().iter().map(|&x| x as usize).sum();
                    let network = (game.to_move() == g.a_side) as usize;
                    count += network * usize::from(seeds <= MAX);
                    game.play(mv).expect("legal");
                }
                count
            })
            .sum::<usize>();
        assert!(covered > 0, "no game reached the tables");
    }

    /// An evaluator that fails on its third call.
    struct Fails(std::sync::atomic::AtomicU32);

    impl Evaluator for Fails {
        fn evaluate(
            &self,
            positions: &[Position],
            out: &mut [Evaluation],
        ) -> Result<(), EvalError> {
            if self.0.fetch_add(1, Ordering::SeqCst) >= 2 {
                return Err(EvalError::Failed("the device is gone".to_string()));
            }
            Hashed.evaluate(positions, out)
        }
    }

    #[test]
    fn a_failing_network_stops_the_match_with_its_error() {
        let side = NetworkSide {
            name: "mcts:model=broken".to_string(),
            evaluator: Arc::new(Fails(std::sync::atomic::AtomicU32::new(0))),
            config: MctsConfig {
                sims: 8,
                ..MctsConfig::default()
            },
            tables: None,
        };
        let random = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(RandomPlayer::new(seed)))
        };
        let options = MatchOptions {
            games: 6,
            opening_plies: Some(2),
            seed: 1,
            threads: 2,
            max_plies: 200,
        };
        let err = play_contest(
            &Contestant::Network(&side),
            &Contestant::Player(&random),
            &options,
            &[0, 1, 2, 3, 4, 5],
            &|_| {},
        )
        .expect_err("the evaluator fails");
        assert!(
            err.contains("player mcts:model=broken") && err.contains("the device is gone"),
            "{err}"
        );
    }
}
