//! The AI a person plays when `--ai` is not given: the newest run's network, else the network
//! shipped in the repository (`models/oware-default`), else alpha-beta.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The spec used when neither a checkpoint nor the shipped network exists.
pub const FALLBACK_SPEC: &str = "alphabeta:ms=1000";

/// Where the shipped network lives, relative to the repository root.
pub const SHIPPED_MODEL: &str = "models/oware-default";

/// The shipped network's folder: `models/oware-default` under the working directory (a
/// checkout, or a copy next to an installed binary), else under the source tree this binary
/// was built from (so `cargo run` and `target/release/oware` find it from any directory of a
/// fresh clone). `None` when neither holds a `meta.json`, or when the path cannot be written
/// in a player spec (it would contain `,` or `=`).
pub fn shipped_model() -> Option<PathBuf> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(SHIPPED_MODEL);
    [PathBuf::from(SHIPPED_MODEL), built_from]
        .into_iter()
        .filter(|p| p.join("meta.json").is_file())
        // A path that cannot be resolved is not one to offer; the next candidate may be.
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .find(|p| !p.to_string_lossy().contains([',', '=']))
}

/// The default opponent: MCTS with the newest checkpoint under `runs` (the run whose
/// `checkpoints/latest` pointer was written last), as `mcts:model=runs/NAME,sims=400`; without
/// any checkpoint the shipped network ([`shipped_model`]) at 400 simulations; without that,
/// alpha-beta with one second a move.
pub fn default_ai_spec(runs: &Path) -> String {
    default_ai_spec_from(runs, shipped_model().as_deref())
}

/// [`default_ai_spec`] with the shipped network's folder given (`None`: there is none).
pub fn default_ai_spec_from(runs: &Path, shipped: Option<&Path>) -> String {
    let fallback = || match shipped {
        Some(dir) => format!("mcts:model={},sims=400", dir.display()),
        None => FALLBACK_SPEC.to_string(),
    };
    // No (readable) `runs` folder means no trained network here: the fallback is the pick.
    let Ok(entries) = std::fs::read_dir(runs) else {
        return fallback();
    };
    let mut newest: Option<(SystemTime, String)> = None;
    // An entry that cannot be read is not a run this can offer; the others still count.
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // A spec separates its options with ',' and '='; such a name cannot be written in one.
        if name.contains([',', '=']) {
            continue;
        }
        let latest = entry.path().join("checkpoints").join("latest");
        let Ok(meta) = std::fs::symlink_metadata(&latest) else {
            continue;
        };
        // Without modification times (some platforms) every run ties, and the name decides.
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let better = match &newest {
            None => true,
            Some((t, n)) => (modified, &name) > (*t, n),
        };
        if better {
            newest = Some((modified, name));
        }
    }
    match newest {
        Some((_, name)) => format!("mcts:model={},sims=400", runs.join(name).display()),
        None => fallback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("oware-play-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    fn checkpoint(runs: &Path, run: &str, age_secs: u64) {
        let dir = runs.join(run).join("checkpoints");
        std::fs::create_dir_all(&dir).expect("checkpoint dir");
        let file = std::fs::File::create(dir.join("latest")).expect("latest");
        let when = SystemTime::now() - Duration::from_secs(age_secs);
        file.set_modified(when).expect("set mtime");
    }

    #[test]
    fn falls_back_to_the_shipped_network_then_alphabeta_without_runs() {
        let runs = scratch("none");
        let shipped = Path::new("/somewhere/models/oware-default");
        let via_shipped = "mcts:model=/somewhere/models/oware-default,sims=400";
        assert_eq!(
            default_ai_spec_from(&runs.join("missing"), None),
            FALLBACK_SPEC
        );
        assert_eq!(
            default_ai_spec_from(&runs.join("missing"), Some(shipped)),
            via_shipped
        );
        std::fs::create_dir_all(runs.join("empty-run")).expect("run without checkpoints");
        assert_eq!(default_ai_spec_from(&runs, None), FALLBACK_SPEC);
        assert_eq!(default_ai_spec_from(&runs, Some(shipped)), via_shipped);
        let _ = std::fs::remove_dir_all(runs);
    }

    #[test]
    fn the_repository_ships_a_network_that_is_the_default_without_runs() {
        let dir = shipped_model().expect("models/oware-default is in the repository");
        assert!(dir.join("model.bpk").is_file(), "{}", dir.display());
        let runs = scratch("shipped");
        let spec = default_ai_spec(&runs.join("missing"));
        assert_eq!(spec, format!("mcts:model={},sims=400", dir.display()));
        // It builds into a player that moves.
        let spec: crate::spec::PlayerSpec = spec.parse().expect("a valid spec");
        let mut player = crate::build_player(&spec, 1).expect("the shipped network loads");
        let game = oware_engine::Game::new();
        let choice = player
            .choose(
                &game,
                oware_search::Budget {
                    sims: Some(16),
                    ..oware_search::Budget::default()
                },
            )
            .expect("a move");
        assert!(game.legal_moves().contains(choice.mv));
        let _ = std::fs::remove_dir_all(runs);
    }

    #[test]
    fn picks_the_newest_checkpoint() {
        let runs = scratch("newest");
        checkpoint(&runs, "old", 3600);
        checkpoint(&runs, "new", 10);
        checkpoint(&runs, "middle", 600);
        let expected = format!("mcts:model={},sims=400", runs.join("new").display());
        assert_eq!(default_ai_spec(&runs), expected);
        let shipped = Path::new("/somewhere/models/oware-default");
        assert_eq!(default_ai_spec_from(&runs, Some(shipped)), expected);
        let _ = std::fs::remove_dir_all(runs);
    }
}
