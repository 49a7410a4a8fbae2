//! Plays `RolloutMctsPlayer` against `RandomPlayer`, alternating sides, and prints the score.
//!
//! `cargo run --release -p oware-engine --example rollout_vs_random -- [GAMES] [SIMS]`
//! (defaults: 20 games, 1000 simulations per move).

use oware_engine::{Game, Side, Winner};
use oware_search::{Budget, Player, RandomPlayer, RolloutMctsPlayer};
use std::process::ExitCode;
use std::time::Instant;

fn arg(n: usize, default: u32) -> Result<u32, String> {
    match std::env::args().nth(n) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .map_err(|_| format!("argument {n}: '{s}' is not a non-negative integer")),
    }
}

fn main() -> ExitCode {
    let (games, sims) = match (arg(1, 20), arg(2, 1000)) {
        (Ok(g), Ok(s)) => (g, s),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let start = Instant::now();
    let (mut wins, mut draws, mut losses, mut plies) = (0u32, 0u32, 0u32, 0u32);
    for i in 0..games {
        let mut mcts = RolloutMctsPlayer::new(sims, oware_search::mcts::DEFAULT_UCT_C, i as u64);
        let mut random = RandomPlayer::new(1000 + i as u64);
        let mcts_side = if i % 2 == 0 { Side::South } else { Side::North };
        let mut game = Game::new();
        while !game.is_over() {
            let choice = if game.to_move() == mcts_side {
                mcts.choose(&game, Budget::default())
            } else {
                random.choose(&game, Budget::default())
            };
            let choice = match choice {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: game {i}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            if let Err(e) = game.play(choice.mv) {
                eprintln!("error: game {i}: {e}");
                return ExitCode::FAILURE;
            }
        }
        plies += game.ply();
        match game.result().map(|r| r.winner) {
            Some(Winner::Side(s)) if s == mcts_side => wins += 1,
            Some(Winner::Draw) => draws += 1,
            _ => losses += 1,
        }
    }
    let score = (wins as f64 + 0.5 * draws as f64) / games.max(1) as f64;
    println!(
        "mcts:rollouts,sims={sims} vs random: {wins} wins, {draws} draws, {losses} losses \
         (score {:.3}, mean plies {:.1}) in {:.1} s",
        score,
        plies as f64 / games.max(1) as f64,
        start.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
