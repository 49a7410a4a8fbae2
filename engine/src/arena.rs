//! Matches between two players: paired random openings (each played twice with colours
//! swapped), games in parallel on a rayon pool, and the score with its Elo estimate.

use crate::elo::MatchScore;
use crate::game::{Game, GameResult, Winner};
use crate::moves::Move;
use crate::player::{Limits, Player};
use crate::side::Side;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::Mutex;
use std::time::Instant;

/// Builds a fresh player for one game from a seed (players are `Send`, not `Sync`, so each game
/// gets its own).
pub type PlayerFactory<'a> = dyn Fn(u64) -> Result<Box<dyn Player>, String> + Sync + 'a;

/// How a match is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchOptions {
    /// Games in all; game `2k` and `2k+1` share an opening with colours swapped.
    pub games: u32,
    /// Random plies before the players take over; `None` draws 2–4 per pair.
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
    /// Every move, opening included.
    pub moves: Vec<Move>,
    /// The result.
    pub result: GameResult,
    /// A's score: 1 win, 0.5 draw, 0 loss.
    pub a_score: f64,
    /// Seconds A spent choosing moves, and how many it chose.
    pub a_time: (f64, u32),
    /// Seconds B spent choosing moves, and how many it chose.
    pub b_time: (f64, u32),
}

/// The opening of pair `pair`: a live game after random plies.
pub fn opening(seed: u64, pair: u32, plies: Option<u32>, max_plies: u32) -> Game {
    let mut rng = SmallRng::seed_from_u64(seed ^ (pair as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    loop {
        let n = plies.unwrap_or_else(|| rng.random_range(2..=4));
        let mut game = Game::with_max_plies(max_plies);
        for _ in 0..n {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            game.play_unchecked(moves.as_slice()[rng.random_range(0..moves.len())]);
        }
        if !game.is_over() {
            return game;
        }
    }
}

/// Plays one game from `game` (an opening) between `south` and `north`; returns the times.
fn play_out(
    mut game: Game,
    south: &mut dyn Player,
    north: &mut dyn Player,
) -> Result<(Game, [(f64, u32); 2]), String> {
    let mut times = [(0.0, 0u32); 2];
    south.new_game();
    north.new_game();
    while !game.is_over() {
        let side = game.to_move();
        let player: &mut dyn Player = if side == Side::South { south } else { north };
        let started = Instant::now();
        let choice = player.choose(&game, Limits::default());
        let slot = &mut times[side.index()];
        slot.0 += started.elapsed().as_secs_f64();
        slot.1 += 1;
        game.play(choice.mv)
            .map_err(|e| format!("{} played an illegal move: {e}", player.name()))?;
    }
    Ok((game, times))
}

/// Plays a match of `a` against `b`. `on_game` is called after each game (from worker threads,
/// in completion order) — for progress output. Returns the games in index order.
pub fn play_match(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    options: &MatchOptions,
    on_game: &(dyn Fn(&GameOutcome) + Sync),
) -> Result<Vec<GameOutcome>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .build()
        .map_err(|e| format!("starting match threads: {e}"))?;
    let results: Mutex<Vec<GameOutcome>> = Mutex::new(Vec::with_capacity(options.games as usize));
    let first_error: Mutex<Option<String>> = Mutex::new(None);
    pool.scope(|scope| {
        for index in 0..options.games {
            let results = &results;
            let first_error = &first_error;
            scope.spawn(move |_| {
                if first_error.lock().map(|e| e.is_some()).unwrap_or(true) {
                    return;
                }
                match play_one(a, b, options, index) {
                    Ok(outcome) => {
                        on_game(&outcome);
                        if let Ok(mut r) = results.lock() {
                            r.push(outcome);
                        }
                    }
                    Err(e) => {
                        if let Ok(mut slot) = first_error.lock() {
                            slot.get_or_insert(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut games = results.into_inner().map_err(|_| "a match thread panicked".to_string())?;
    games.sort_by_key(|g| g.index);
    Ok(games)
}

fn play_one(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    options: &MatchOptions,
    index: u32,
) -> Result<GameOutcome, String> {
    let pair = index / 2;
    let a_side = if index % 2 == 0 { Side::South } else { Side::North };
    let start = opening(options.seed, pair, options.opening_plies, options.max_plies);
    let opening_plies = start.ply();
    let seed = options.seed.wrapping_add(index as u64 * 2 + 1);
    let mut pa = a(seed)?;
    let mut pb = b(seed ^ 0xB)?;
    let (game, times) = if a_side == Side::South {
        play_out(start, pa.as_mut(), pb.as_mut())?
    } else {
        play_out(start, pb.as_mut(), pa.as_mut())?
    };
    let result = game.result().ok_or("game ended without a result")?;
    let a_score = match result.winner {
        Winner::Draw => 0.5,
        Winner::Side(s) if s == a_side => 1.0,
        Winner::Side(_) => 0.0,
    };
    Ok(GameOutcome {
        index,
        a_side,
        opening_plies,
        moves: game.moves().to_vec(),
        result,
        a_score,
        a_time: times[a_side.index()],
        b_time: times[(!a_side).index()],
    })
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
    /// A's mean seconds per move.
    pub a_secs_per_move: f64,
    /// B's mean seconds per move.
    pub b_secs_per_move: f64,
}

impl MatchSummary {
    /// Sums up finished games.
    pub fn from_games(games: &[GameOutcome]) -> MatchSummary {
        let mut s = MatchSummary::default();
        let (mut at, mut an, mut bt, mut bn) = (0.0, 0u32, 0.0, 0u32);
        for g in games {
            s.total.add(g.a_score);
            match g.a_side {
                Side::South => s.as_south.add(g.a_score),
                Side::North => s.as_north.add(g.a_score),
            }
            s.mean_plies += g.moves.len() as f64;
            at += g.a_time.0;
            an += g.a_time.1;
            bt += g.b_time.0;
            bn += g.b_time.1;
        }
        if !games.is_empty() {
            s.mean_plies /= games.len() as f64;
        }
        s.a_secs_per_move = if an > 0 { at / an as f64 } else { 0.0 };
        s.b_secs_per_move = if bn > 0 { bt / bn as f64 } else { 0.0 };
        s
    }
}
