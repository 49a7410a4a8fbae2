//! The `latest` pointer of a checkpoints directory, and finding a checkpoint from a path that
//! names a checkpoint, a checkpoints directory or a run directory.
//!
//! `runs/NAME/checkpoints/latest` is a one-line text file holding the name of the newest complete
//! checkpoint directory beside it (e.g. `step-0001000`). It is replaced atomically (temporary
//! file + rename) after the checkpoint itself is in place, so it never names a half-written one.

use crate::checkpoint::{CheckpointError, META_FILE};
use std::fs;
use std::path::{Path, PathBuf};

/// File name of the pointer inside a checkpoints directory.
pub const LATEST_FILE: &str = "latest";
/// Name of the checkpoints directory inside a run directory.
pub const CHECKPOINTS_DIR: &str = "checkpoints";

/// Points `checkpoints_dir/latest` at the checkpoint directory `name` (which must be a direct
/// child of `checkpoints_dir`), atomically.
pub fn write_latest(checkpoints_dir: &Path, name: &str) -> Result<(), CheckpointError> {
    if name.is_empty() || name.contains(['/', '\\', '\n']) || name == "." || name == ".." {
        return Err(CheckpointError::BadMeta {
            path: checkpoints_dir.join(LATEST_FILE),
            reason: format!("'{name}' is not a checkpoint directory name"),
        });
    }
    let path = checkpoints_dir.join(LATEST_FILE);
    oware_engine::atomic_file::write_atomic(&path, format!("{name}\n").as_bytes()).map_err(|e| {
        CheckpointError::Io {
            path: e.path,
            source: e.source,
        }
    })
}

/// The checkpoint directory `checkpoints_dir/latest` points at.
pub fn read_latest(checkpoints_dir: &Path) -> Result<PathBuf, CheckpointError> {
    let path = checkpoints_dir.join(LATEST_FILE);
    let text = fs::read_to_string(&path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            CheckpointError::MissingFile { path: path.clone() }
        } else {
            CheckpointError::Io {
                path: path.clone(),
                source,
            }
        }
    })?;
    let name = text.trim();
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(CheckpointError::BadMeta {
            path,
            reason: format!("'{name}' is not a checkpoint directory name"),
        });
    }
    Ok(checkpoints_dir.join(name))
}

/// The checkpoint directory a user's path means: `path` itself when it holds `meta.json`;
/// else the one its `latest` names (a checkpoints directory); else the one
/// `path/checkpoints/latest` names (a run directory).
pub fn resolve_checkpoint(path: &Path) -> Result<PathBuf, CheckpointError> {
    if !path.exists() {
        return Err(CheckpointError::NotFound {
            path: path.to_path_buf(),
        });
    }
    if path.join(META_FILE).is_file() {
        return Ok(path.to_path_buf());
    }
    if path.join(LATEST_FILE).is_file() {
        return read_latest(path);
    }
    let nested = path.join(CHECKPOINTS_DIR);
    if nested.join(LATEST_FILE).is_file() {
        return read_latest(&nested);
    }
    Err(CheckpointError::NotACheckpoint {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        CheckpointMeta, Device, Learner, ModelConfig, OptimConfig, load_evaluator, save_checkpoint,
    };

    #[test]
    fn pointer_round_trip_and_resolution() {
        let run = std::env::temp_dir().join(format!("oware-model-latest-{}", std::process::id()));
        let _ = fs::remove_dir_all(&run);
        let ckpts = run.join(CHECKPOINTS_DIR);
        let learner = Learner::new(
            &ModelConfig::new().with_hidden(8).with_blocks(0),
            &OptimConfig::default(),
            &Device::flex(),
        );
        for step in [10u64, 20] {
            let name = format!("step-{step:07}");
            let meta = CheckpointMeta {
                step,
                ..CheckpointMeta::default()
            };
            save_checkpoint(&ckpts.join(&name), &learner, &meta).expect("save");
            write_latest(&ckpts, &name).expect("latest");
        }
        let want = ckpts.join("step-0000020");
        assert_eq!(read_latest(&ckpts).expect("read"), want);
        assert_eq!(resolve_checkpoint(&run).expect("run dir"), want);
        assert_eq!(resolve_checkpoint(&ckpts).expect("ckpts dir"), want);
        let first = ckpts.join("step-0000010");
        assert_eq!(resolve_checkpoint(&first).expect("ckpt"), first);
        let (_, meta) =
            load_evaluator(&resolve_checkpoint(&run).expect("run"), &Device::flex()).expect("load");
        assert_eq!(meta.step, 20);

        let err = resolve_checkpoint(&run.join("nothing")).expect_err("missing");
        assert!(err.to_string().contains("nothing"), "{err}");
        assert!(write_latest(&ckpts, "../evil").is_err());
        fs::write(ckpts.join(LATEST_FILE), "\n").expect("write");
        assert!(matches!(
            read_latest(&ckpts),
            Err(CheckpointError::BadMeta { .. })
        ));
        let _ = fs::remove_dir_all(&run);
    }
}
