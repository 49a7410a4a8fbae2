//! Matches between two players: random openings, each played twice with colours swapped (so
//! deterministic players do not repeat one game), games in parallel on a rayon pool, and the
//! totals from A's side. `oware pit`, `oware ladder` and the trainer's evaluation run on this.
//!
//! A side is a [`Contestant`]: a player built afresh for every game, whose moves are chosen
//! one game at a time per thread, or a network MCTS player ([`NetworkSide`]), whose searches
//! run through the batched driver ([`oware_search::mcts::BatchedSearch`]) as in self-play: each
//! thread keeps many games in flight and evaluates the leaves of all the games where that
//! network is to move in one call per pass (module `batched`). Openings, colours, seeds and
//! results are the same either way.

mod batched;

use crate::elo::MatchScore;
use oware_egtb::Tables;
use oware_engine::Move;
use oware_engine::Position;
use oware_engine::Side;
use oware_engine::{Game, GameResult};
use oware_search::Evaluator;
use oware_search::mcts::MctsConfig;
use oware_search::{Budget, Player};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Builds a fresh player for one game from a seed (players are `Send`, not `Sync`, so each game
/// gets its own).
pub type PlayerFactory<'a> = dyn Fn(u64) -> Result<Box<dyn Player>, String> + Sync + 'a;

/// A network MCTS player whose searches a match runs batched: the evaluator and the search it
/// plays with (as [`oware_search::MctsPlayer`] would: noise and temperature off, `config.sims`
/// simulations per move, the tree kept between moves when `config.reuse_tree` is on).
#[derive(Clone)]
pub struct NetworkSide {
    /// The player's name in errors (its spec).
    pub name: String,
    /// The network (possibly behind endgame tables).
    pub evaluator: Arc<dyn Evaluator + Send>,
    /// The search settings; its exploration settings are ignored (the arena turns noise and
    /// temperature off).
    pub config: MctsConfig,
    /// Endgame tables whose root proofs restrict the moves played, as
    /// [`oware_search::MctsPlayer::with_tables`] does (the evaluator should know them too).
    pub tables: Option<Arc<Tables>>,
}

impl std::fmt::Debug for NetworkSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkSide")
            .field("name", &self.name)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// One side of a match.
#[derive(Clone, Copy)]
pub enum Contestant<'a> {
    /// A player built per game by the factory; it chooses its moves one game at a time, the
    /// games spread over the match threads.
    Player(&'a PlayerFactory<'a>),
    /// A network MCTS player, searched through the batched driver: up to
    /// [`GAMES_IN_FLIGHT`] games in flight per thread, one evaluator call per pass for all the
    /// games where it is to move. Its moves are the ones the same search plays one game at a
    /// time.
    Network(&'a NetworkSide),
}

/// The most games one thread keeps in flight when a side is a [`Contestant::Network`] (the
/// evaluator's batch is about this times `leaves_per_tree`).
pub const GAMES_IN_FLIGHT: usize = 128;

/// The games each thread keeps in flight when `games` games are played batched on `threads`
/// threads: an equal share, at most [`GAMES_IN_FLIGHT`].
pub fn games_in_flight(games: usize, threads: usize) -> usize {
    games
        .div_ceil(threads.max(1).min(games.max(1)))
        .clamp(1, GAMES_IN_FLIGHT)
}

/// How a match is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchOptions {
    /// Games in all: game `2k` (A as South) and `2k+1` (A as North) share opening `k`; an odd
    /// count plays the last opening once, A as South.
    pub games: u32,
    /// Random plies before the players take over; `None` draws 2–4 per opening.
    pub opening_plies: Option<u32>,
    /// Seed of the openings and the players.
    pub seed: u64,
    /// Games played at once.
    pub threads: usize,
    /// Ply limit of each game.
    pub max_plies: u32,
}

/// One finished game of a match.
#[derive(Clone, Debug)]
pub struct GameOutcome {
    /// Index of the game in the match.
    pub index: u32,
    /// The side player A played.
    pub a_side: Side,
    /// Plies of the random opening.
    pub opening_plies: u32,
    /// The finished game (opening included).
    pub game: Game,
    /// The result.
    pub result: GameResult,
    /// Time A spent choosing moves, and how many it chose. A batched network player's time is
    /// the time of its batched searches, each shared equally among the games it searched.
    pub a_time: (Duration, u32),
    /// Time B spent choosing moves, and how many it chose.
    pub b_time: (Duration, u32),
}

impl GameOutcome {
    /// A's points: 1 win, 0.5 draw, 0 loss.
    pub fn a_points(&self) -> f64 {
        (self.result.value_for(self.a_side) as f64 + 1.0) / 2.0
    }

    /// The game's record line, as `oware pit --record` writes it: the moves (opening
    /// included), a tab, [`oware_engine::record::result_text`], then `south=SPEC north=SPEC` for players `a` and `b`.
    pub fn record_line(&self, a: &str, b: &str) -> String {
        let (south, north) = if self.a_side == Side::South {
            (a, b)
        } else {
            (b, a)
        };
        oware_engine::record::format_line(
            self.game.moves(),
            Some(&self.result),
            Some((south, north)),
        )
    }
}

/// A 64-bit mix (splitmix64's finalizer), so that nearby seeds give unrelated streams.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `pairs` random openings of `plies` plies (2–4 drawn per opening when `None`), distinct where
/// the number of plies allows, none of which ends the game.
pub fn openings(
    pairs: u32,
    plies: Option<u32>,
    seed: u64,
    max_plies: u32,
) -> Result<Vec<Vec<Move>>, String> {
    let mut rng = SmallRng::seed_from_u64(mix(seed));
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(pairs as usize);
    for pair in 0..pairs {
        let mut chosen = None;
        for attempt in 0..200 {
            let k = plies.unwrap_or_else(|| rng.random_range(2..=4));
            let mut game = Game::with_max_plies(max_plies);
            let mut moves = Vec::with_capacity(k as usize);
            while moves.len() < k as usize && !game.is_over() {
                let legal = game.legal_moves();
                let m = legal.as_slice()[rng.random_range(0..legal.len())];
                game.play_unchecked(m);
                moves.push(m);
            }
            if game.is_over() {
                continue;
            }
            if seen.insert(moves.clone()) || attempt >= 50 {
                chosen = Some(moves);
                break;
            }
        }
        match chosen {
            Some(m) => out.push(m),
            None => {
                return Err(format!(
                    "could not find a random opening of {} plies that does not end the game \
                     (opening {pair}); use fewer opening plies",
                    plies.unwrap_or(4)
                ));
            }
        }
    }
    Ok(out)
}

/// Plays a match of `a` against `b`, each choosing its moves one game at a time. `on_game` is
/// called after each game (from worker threads, in completion order), e.g. for progress output.
/// Returns the games in index order.
pub fn play_match(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    options: &MatchOptions,
    on_game: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>, String> {
    let all: Vec<u32> = (0..options.games).collect();
    play_contest(
        &Contestant::Player(a),
        &Contestant::Player(b),
        options,
        &all,
        on_game,
    )
}

/// [`play_contest`] with two players that choose their moves one game at a time.
pub fn play_games(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    options: &MatchOptions,
    indices: &[u32],
    on_game: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>, String> {
    play_contest(
        &Contestant::Player(a),
        &Contestant::Player(b),
        options,
        indices,
        on_game,
    )
}

/// The match runner: plays the games of the match `options` describes whose indices are in
/// `indices` (each exactly as in the whole match: same opening, colours and seeds), so a match
/// that was cut short can be completed game by game; all of `0..options.games` for the whole
/// match. When either side is a [`Contestant::Network`], the games run through the batched
/// driver; otherwise each game runs on one thread. `on_game` is called after each game (from
/// worker threads, in completion order). Returns the games in the order of `indices`; an index
/// past the match is an error.
pub fn play_contest(
    a: &Contestant<'_>,
    b: &Contestant<'_>,
    options: &MatchOptions,
    indices: &[u32],
    on_game: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>, String> {
    if let Some(bad) = indices.iter().find(|&&i| i >= options.games) {
        return Err(format!(
            "game {} is not part of a match of {} games",
            bad + 1,
            options.games
        ));
    }
    let openings = openings(
        options.games.div_ceil(2),
        options.opening_plies,
        options.seed,
        options.max_plies,
    )?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .build()
        .map_err(|e| format!("starting the match threads: {e}"))?;
    match (a, b) {
        (Contestant::Player(a), Contestant::Player(b)) => pool.install(|| {
            indices
                .par_iter()
                .map(|&index| {
                    let outcome = play_one(a, b, options, &openings[(index / 2) as usize], index)
                        .map_err(|e| format!("game {}: {e}", index + 1))?;
                    on_game(&outcome);
                    Ok(outcome)
                })
                .collect()
        }),
        _ => batched::play([a, b], options, &openings, indices, &pool, on_game),
    }
}

/// How game `index` of a match starts: A's side, the players' seeds and the game after its
/// opening. Both ways of playing a match use it, so they play the same games.
struct GameStart {
    a_side: Side,
    /// The seeds of A's and B's players.
    seeds: [u64; 2],
    game: Game,
}

impl GameStart {
    fn new(options: &MatchOptions, opening: &[Move], index: u32) -> Result<GameStart, String> {
        let a_side = if index.is_multiple_of(2) {
            Side::South
        } else {
            Side::North
        };
        let seed = mix(options.seed) ^ index as u64;
        let game = Game::replay_from(
            Position::start(),
            options.max_plies,
            opening.iter().copied(),
            |_, _, _| {},
        )
        .map_err(|e| format!("replaying the opening: {e}"))?;
        Ok(GameStart {
            a_side,
            seeds: [mix(seed ^ 0xA), mix(seed ^ 0xB)],
            game,
        })
    }
}

/// A fresh per-game player from `factory`, ready for a new game.
fn new_player(factory: &PlayerFactory<'_>, seed: u64) -> Result<Box<dyn Player>, String> {
    let mut player = factory(seed)?;
    player.new_game();
    Ok(player)
}

/// Asks `player` for a move in `game` and plays it; adds the time taken to `time`.
fn play_move(
    player: &mut dyn Player,
    game: &mut Game,
    time: &mut (Duration, u32),
) -> Result<Move, String> {
    let started = Instant::now();
    let choice = player
        .choose(game, Budget::default())
        .map_err(|e| format!("player {}: {e}", player.name()))?;
    time.0 += started.elapsed();
    time.1 += 1;
    game.play(choice.mv)
        .map_err(|e| format!("player {} chose an illegal move: {e}", player.name()))?;
    Ok(choice.mv)
}

/// The outcome of a finished game.
fn outcome(
    index: u32,
    a_side: Side,
    opening_plies: usize,
    game: Game,
    times: [(Duration, u32); 2],
) -> Result<GameOutcome, String> {
    let result = game
        .result()
        .ok_or("the game loop ended before the game did")?;
    Ok(GameOutcome {
        index,
        a_side,
        opening_plies: opening_plies as u32,
        game,
        result,
        a_time: times[0],
        b_time: times[1],
    })
}

fn play_one(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    options: &MatchOptions,
    opening: &[Move],
    index: u32,
) -> Result<GameOutcome, String> {
    let GameStart {
        a_side,
        seeds,
        mut game,
    } = GameStart::new(options, opening, index)?;
    let mut pa = new_player(a, seeds[0])?;
    let mut pb = new_player(b, seeds[1])?;
    let mut times = [(Duration::ZERO, 0u32); 2];
    while !game.is_over() {
        let a_to_move = game.to_move() == a_side;
        let player: &mut dyn Player = if a_to_move { pa.as_mut() } else { pb.as_mut() };
        play_move(player, &mut game, &mut times[usize::from(!a_to_move)])?;
    }
    outcome(index, a_side, opening.len(), game, times)
}

/// Totals of a match from A's side.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MatchSummary {
    /// All games.
    pub total: MatchScore,
    /// Games where A played South.
    pub as_south: MatchScore,
    /// Games where A played North.
    pub as_north: MatchScore,
    /// Mean plies per game (openings included).
    pub mean_plies: f64,
    /// Plies of all games (openings included).
    pub plies: u64,
    /// Moves A chose.
    pub a_moves: u64,
    /// Moves B chose.
    pub b_moves: u64,
    /// A's mean milliseconds per move.
    pub a_ms_per_move: f64,
    /// B's mean milliseconds per move.
    pub b_ms_per_move: f64,
}

impl MatchSummary {
    /// Sums up finished games.
    pub fn from_games(games: &[GameOutcome]) -> MatchSummary {
        let mut s = MatchSummary::default();
        let (mut at, mut am, mut bt, mut bm, mut plies) = (0.0, 0u64, 0.0, 0u64, 0u64);
        for g in games {
            let p = g.a_points();
            s.total.add(p);
            match g.a_side {
                Side::South => s.as_south.add(p),
                Side::North => s.as_north.add(p),
            }
            plies += g.game.ply() as u64;
            at += g.a_time.0.as_secs_f64();
            am += g.a_time.1 as u64;
            bt += g.b_time.0.as_secs_f64();
            bm += g.b_time.1 as u64;
        }
        let per = |t: f64, n: u64| if n > 0 { 1000.0 * t / n as f64 } else { 0.0 };
        s.plies = plies;
        s.a_moves = am;
        s.b_moves = bm;
        s.a_ms_per_move = per(at, am);
        s.b_ms_per_move = per(bt, bm);
        if !games.is_empty() {
            s.mean_plies = plies as f64 / games.len() as f64;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_search::RandomPlayer;

    #[test]
    fn paired_openings_and_totals() {
        let factory = |seed: u64| -> Result<Box<dyn Player>, String> {
            Ok(Box::new(RandomPlayer::new(seed)))
        };
        let options = MatchOptions {
            games: 7,
            opening_plies: Some(3),
            seed: 9,
            threads: 2,
            max_plies: 1000,
        };
        let games = play_match(&factory, &factory, &options, &|_| {}).expect("plays");
        assert_eq!(games.len(), 7);
        for pair in games.chunks(2) {
            assert_eq!(pair[0].a_side, Side::South);
            assert_eq!(
                pair[0].game.moves()[..3],
                pair[pair.len() - 1].game.moves()[..3]
            );
            if pair.len() == 2 {
                assert_eq!(pair[1].a_side, Side::North);
            }
        }
        let s = MatchSummary::from_games(&games);
        assert_eq!(s.total.games(), 7);
        assert_eq!(s.as_south.games(), 4);
        assert_eq!(s.as_north.games(), 3);
        // The same seed gives the same games.
        let again = play_match(&factory, &factory, &options, &|_| {}).expect("plays");
        let moves = |g: &[GameOutcome]| g.iter().map(|o| o.game.record()).collect::<Vec<_>>();
        assert_eq!(moves(&games), moves(&again));
        // Some games alone are those same games.
        let some = play_games(&factory, &factory, &options, &[5, 2, 6], &|_| {}).expect("plays");
        assert_eq!(
            some.iter().map(|g| g.index).collect::<Vec<_>>(),
            vec![5, 2, 6]
        );
        for g in &some {
            let whole = &games[g.index as usize];
            assert_eq!(g.game.record(), whole.game.record());
            assert_eq!((g.a_side, g.result), (whole.a_side, whole.result));
        }
        let err =
            play_games(&factory, &factory, &options, &[7], &|_| {}).expect_err("past the end");
        assert!(
            err.contains("game 8 is not part of a match of 7 games"),
            "{err}"
        );
    }
}
