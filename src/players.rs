//! Builds players from their specs (DESIGN §2). The spec parser lives in the engine
//! ([`oware_engine::PlayerSpec`]); this is where each kind becomes a [`Player`], since only the
//! binary knows every crate a player may need.

use anyhow::bail;
use oware_engine::spec::PlayerSpec;
use oware_engine::{AlphaBetaPlayer, Player, RandomPlayer};

/// Builds the player `spec` names, seeded with `seed` (random choices and tie-breaks).
pub fn build_player(spec: &PlayerSpec, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    match spec {
        PlayerSpec::Random => Ok(Box::new(RandomPlayer::new(seed))),
        PlayerSpec::AlphaBeta { depth, millis } => {
            Ok(Box::new(AlphaBetaPlayer::new(*depth, *millis, seed)))
        }
        PlayerSpec::Mcts(_) => {
            bail!("player '{spec}': MCTS players are not available yet in this build")
        }
        PlayerSpec::Human => {
            bail!("player 'human' is not available yet in this build for this command")
        }
    }
}

/// Parses `spec` (see [`PlayerSpec`]) and builds the player it names. (Used by `oware play`.)
#[allow(dead_code)]
pub fn build_player_from_str(spec: &str, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    let parsed: PlayerSpec = spec.parse()?;
    build_player(&parsed, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_engine::{Game, Limits};

    fn spec(s: &str) -> PlayerSpec {
        s.parse().expect("valid spec")
    }

    #[test]
    fn builds_random_and_alphabeta() {
        let game = Game::new();
        for s in ["random", "alphabeta:depth=3", "alphabeta:ms=20"] {
            let mut p = build_player(&spec(s), 1).expect("buildable");
            assert_eq!(p.name(), s);
            let c = p.choose(&game, Limits::default());
            assert!(game.legal_moves().contains(c.mv));
        }
    }

    #[test]
    fn builds_from_a_string() {
        let p = build_player_from_str("alphabeta:depth=2", 3).expect("buildable");
        assert_eq!(p.name(), "alphabeta:depth=2");
        let e = match build_player_from_str("alphabeta:depth=two", 3) {
            Ok(p) => panic!("built {}", p.name()),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("valid forms"), "{e}");
    }

    #[test]
    fn other_kinds_are_a_clear_error() {
        for s in ["mcts:rollouts,sims=10", "human"] {
            let e = match build_player(&spec(s), 1) {
                Ok(p) => panic!("{s} built as {}", p.name()),
                Err(e) => e.to_string(),
            };
            assert!(e.contains("not available yet in this build"), "{e}");
        }
    }
}
