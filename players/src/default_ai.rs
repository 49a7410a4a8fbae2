//! The AI a person plays when `--ai` is not given.

use std::path::Path;
use std::time::SystemTime;

/// The spec used when no checkpoint exists.
pub const FALLBACK_SPEC: &str = "alphabeta:ms=1000";

/// The default opponent: MCTS with the newest checkpoint under `runs` (the run whose
/// `checkpoints/latest` pointer was written last), as `mcts:model=runs/NAME,sims=400`; without
/// any checkpoint, alpha-beta with one second a move.
pub fn default_ai_spec(runs: &Path) -> String {
    // No (readable) `runs` folder means no trained network: alpha-beta is the documented pick.
    let Ok(entries) = std::fs::read_dir(runs) else {
        return FALLBACK_SPEC.to_string();
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
        None => FALLBACK_SPEC.to_string(),
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
    fn falls_back_to_alphabeta_without_runs() {
        let runs = scratch("none");
        assert_eq!(default_ai_spec(&runs.join("missing")), FALLBACK_SPEC);
        std::fs::create_dir_all(runs.join("empty-run")).expect("run without checkpoints");
        assert_eq!(default_ai_spec(&runs), FALLBACK_SPEC);
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
        let _ = std::fs::remove_dir_all(runs);
    }
}
