//! Pits two MCTS configurations against each other with an evaluator that values a position by
//! random playouts (uniform policy): a network-free check that PUCT and Gumbel search behave.
//!
//! `cargo run --release -p oware-engine --example search_compare -- [GAMES] [SIMS]`
//! (defaults: 40 games, 32 simulations per move). Plays Gumbel (A) against PUCT (B).
//! Environment: `PLAYOUTS` (per evaluation, default 1), `C_SCALE` (Gumbel `c_scale`, default 1),
//! `GUMBEL_INTERIOR=gumbel` (the Gumbel-MuZero rule below the root instead of PUCT).

use oware_engine::{Game, Position, Side, Winner, random_playout};
use oware_search::mcts::{InteriorRule, MctsConfig, RootAlgorithm};
use oware_search::{Budget, EvalError, Evaluation, Evaluator, MctsPlayer, Player, uniform_policy};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::process::ExitCode;
use std::sync::Mutex;

/// Uniform policy; value = mean result of `playouts` random playouts for the side to move.
struct PlayoutEvaluator {
    playouts: u32,
    rng: Mutex<SmallRng>,
}

impl Evaluator for PlayoutEvaluator {
    fn evaluate(&self, positions: &[Position], out: &mut [Evaluation]) -> Result<(), EvalError> {
        let mut rng = match self.rng.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut seen = Vec::new();
        for (pos, e) in positions.iter().zip(out.iter_mut()) {
            let mut total = 0.0;
            for _ in 0..self.playouts {
                seen.clear();
                seen.push(pos.key());
                let r = random_playout(*pos, &mut seen, 0, 1000, &mut *rng);
                total += r.value_for(pos.to_move());
            }
            *e = Evaluation {
                policy: uniform_policy(pos),
                value: total / self.playouts as f32,
            };
        }
        Ok(())
    }
}

fn arg(n: usize, default: u32) -> Result<u32, String> {
    match std::env::args().nth(n) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .map_err(|_| format!("argument {n}: '{s}' is not a non-negative integer")),
    }
}

fn player(root: RootAlgorithm, sims: u32, seed: u64) -> Result<Box<dyn Player>, String> {
    let config = MctsConfig {
        sims,
        root,
        leaves_per_tree: 1,
        gumbel_c_scale: std::env::var("C_SCALE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1.0),
        gumbel_interior: if std::env::var("GUMBEL_INTERIOR").as_deref() == Ok("gumbel") {
            InteriorRule::Gumbel
        } else {
            InteriorRule::Puct
        },
        ..MctsConfig::default()
    };
    let eval = PlayoutEvaluator {
        playouts: std::env::var("PLAYOUTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
        rng: Mutex::new(SmallRng::seed_from_u64(seed)),
    };
    MctsPlayer::new(eval, config, seed)
        .map(|p| Box::new(p) as Box<dyn Player>)
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let (games, sims) = match (arg(1, 40), arg(2, 32)) {
        (Ok(g), Ok(s)) => (g, s),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (mut w, mut d, mut l) = (0, 0, 0);
    for i in 0..games {
        let (a, b) = match (
            player(RootAlgorithm::Gumbel, sims, i as u64),
            player(RootAlgorithm::Puct, sims, 1000 + i as u64),
        ) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let (mut south, mut north, a_side) = if i % 2 == 0 {
            (a, b, Side::South)
        } else {
            (b, a, Side::North)
        };
        // A few random opening plies so the deterministic players play different games.
        let mut game = Game::new();
        let mut rng = SmallRng::seed_from_u64(77 + i as u64 / 2);
        for _ in 0..4 {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves.as_slice()[rand::Rng::random_range(&mut rng, 0..moves.len())];
            game.play_unchecked(m);
        }
        while !game.is_over() {
            let p = if game.to_move() == Side::South {
                &mut south
            } else {
                &mut north
            };
            let c = match p.choose(&game, Budget::default()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            if let Err(e) = game.play(c.mv) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
        match game.result().map(|r| r.winner) {
            Some(Winner::Side(s)) if s == a_side => w += 1,
            Some(Winner::Draw) => d += 1,
            _ => l += 1,
        }
    }
    println!(
        "gumbel vs puct, {sims} sims, playout values: {w} wins, {d} draws, {l} losses (score {:.3})",
        (w as f64 + 0.5 * d as f64) / games.max(1) as f64
    );
    ExitCode::SUCCESS
}
