//! Players built from spec strings. The one builder lives in `oware_trainer::players`, since a
//! network player needs the model crate; these are the binary's shorthands.

use oware_engine::Player;
use oware_engine::spec::PlayerSpec;
use oware_model::DeviceKind;
pub use oware_trainer::players::{PlayerBuilder, build_player_from_str};

/// Builds the player `spec` names (networks on the CPU), seeded with `seed`.
pub fn build_player(spec: &PlayerSpec, seed: u64) -> anyhow::Result<Box<dyn Player>> {
    PlayerBuilder::new(spec, DeviceKind::Cpu)?.build(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_engine::{Game, Limits};

    fn spec(s: &str) -> PlayerSpec {
        s.parse().expect("valid spec")
    }

    #[test]
    fn builds_engine_players() {
        let game = Game::new();
        for s in [
            "random",
            "alphabeta:depth=3",
            "alphabeta:ms=20",
            "mcts:rollouts,sims=50",
        ] {
            let mut p = build_player(&spec(s), 1).expect("buildable");
            assert_eq!(p.name(), s);
            let c = p.choose(&game, Limits::default());
            assert!(game.legal_moves().contains(c.mv));
        }
    }

    #[test]
    fn bad_specs_and_missing_models_are_clear_errors() {
        let e = match build_player_from_str("alphabeta:depth=two", 3) {
            Ok(p) => panic!("built {}", p.name()),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("valid forms"), "{e}");
        let e = match build_player_from_str("mcts:model=/nonexistent/run,sims=10", 3) {
            Ok(p) => panic!("built {}", p.name()),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains("/nonexistent/run"), "{e}");
        let e = match build_player(&spec("human"), 1) {
            Ok(p) => panic!("built {}", p.name()),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("oware play"), "{e}");
    }
}
