//! # oware-players
//!
//! The one place where players are built from spec strings (`docs/players.md`): `random`,
//! `alphabeta:depth=N|ms=N`, `mcts:rollouts,sims=N`, `mcts:model=PATH[,sims=N][,ms=M]...`. A
//! network player searches with the settings its checkpoint was trained with, overridden by the
//! spec's keys ([`play_mcts_config`]). A network player needs the model crate, and nothing here needs training, so the CLI, the
//! trainer's evaluation and the web server all build their players through this crate.
//!
//! [`default_ai_spec`] picks the opponent a person plays when none is named.

mod builder;
mod default_ai;
pub mod protocol;
pub mod spec;

pub use builder::{
    LoadedNetwork, PlayerBuilder, TrainingTime, build_player, build_player_from_str, contestant,
    load_book, load_eval_weights, load_network, load_network_with_search, load_tables,
    play_mcts_config, training_time,
};
pub use default_ai::{
    FALLBACK_SPEC, SHIPPED_MODEL, default_ai_spec, default_ai_spec_from, shipped_model,
};
pub use spec::{PlayerSpec, SpecError};

#[cfg(test)]
mod tests {
    use crate::spec::PlayerSpec;
    use crate::{build_player, build_player_from_str};
    use oware_engine::Game;
    use oware_search::Budget;

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
            let c = p.choose(&game, Budget::default()).expect("a move");
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
