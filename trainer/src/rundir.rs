//! The run directory (DESIGN §3): resolved config, checkpoints with a `latest` pointer,
//! TensorBoard events and `eval.jsonl`. Every file that state depends on is written atomically.

use anyhow::Context;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use oware_engine::atomic::write_atomic;

/// Paths inside one run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root` (not created).
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// Creates the directory and its `checkpoints/` folder.
    pub fn create(&self) -> anyhow::Result<()> {
        fs::create_dir_all(self.checkpoints())
            .with_context(|| format!("creating run directory {}", self.root.display()))
    }

    /// The run directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `config.toml`: the resolved configuration.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// `checkpoints/`.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }

    /// `checkpoints/step-NNNNNNN`.
    pub fn checkpoint(&self, step: u64) -> PathBuf {
        self.checkpoints().join(format!("step-{step:07}"))
    }

    /// `eval.jsonl`.
    pub fn eval_log(&self) -> PathBuf {
        self.root.join("eval.jsonl")
    }

    /// `checkpoints/latest`: a text file naming the newest complete checkpoint folder.
    pub fn latest_pointer(&self) -> PathBuf {
        self.checkpoints().join("latest")
    }

    /// The newest complete checkpoint, if any.
    pub fn latest(&self) -> anyhow::Result<Option<PathBuf>> {
        latest_checkpoint(&self.root)
    }

    /// Points `latest` at `checkpoint` (atomically).
    pub fn set_latest(&self, checkpoint: &Path) -> anyhow::Result<()> {
        let name = checkpoint
            .file_name()
            .and_then(|n| n.to_str())
            .with_context(|| format!("bad checkpoint path {}", checkpoint.display()))?;
        Ok(oware_model::write_latest(&self.checkpoints(), name)?)
    }

    /// Removes all but the newest `keep` checkpoints; never the one `latest` names, nor any in
    /// `protect` (e.g. the previous evaluated checkpoint, still needed as an opponent).
    pub fn prune(&self, keep: usize, protect: &[&Path]) -> anyhow::Result<()> {
        let latest = self.latest()?;
        let mut steps: Vec<PathBuf> = fs::read_dir(self.checkpoints())
            .with_context(|| format!("reading {}", self.checkpoints().display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_dir()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("step-"))
            })
            .collect();
        steps.sort();
        let excess = steps.len().saturating_sub(keep.max(1));
        for old in steps.into_iter().take(excess) {
            if Some(&old) != latest.as_ref() && !protect.contains(&old.as_path()) {
                fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
            }
        }
        Ok(())
    }

    /// Appends one line to `eval.jsonl`.
    pub fn append_eval(&self, line: &serde_json::Value) -> anyhow::Result<()> {
        let path = self.eval_log();
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        writeln!(f, "{line}").with_context(|| format!("writing {}", path.display()))
    }
}

/// The checkpoint that `root/checkpoints/latest` names, if the pointer exists; an error if it
/// is damaged or names a folder without `meta.json`.
pub fn latest_checkpoint(root: &Path) -> anyhow::Result<Option<PathBuf>> {
    let checkpoints = root.join(oware_model::CHECKPOINTS_DIR);
    if !checkpoints.join(oware_model::LATEST_FILE).exists() {
        return Ok(None);
    }
    let dir = oware_model::read_latest(&checkpoints)?;
    if !dir.join("meta.json").is_file() {
        anyhow::bail!(
            "{} names {}, which has no meta.json",
            checkpoints.join(oware_model::LATEST_FILE).display(),
            dir.display()
        );
    }
    Ok(Some(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_pointer_and_pruning() {
        let root = std::env::temp_dir().join(format!("oware-rundir-{}", std::process::id()));
        let run = RunDir::new(&root);
        run.create().expect("create");
        assert!(run.latest().expect("no pointer").is_none());
        for step in [10, 20, 30] {
            let c = run.checkpoint(step);
            fs::create_dir_all(&c).expect("dir");
            write_atomic(&c.join("meta.json"), b"{}").expect("meta");
            run.set_latest(&c).expect("latest");
        }
        assert_eq!(run.latest().expect("ok"), Some(run.checkpoint(30)));
        assert_eq!(
            oware_model::resolve_checkpoint(&root).expect("resolves"),
            run.checkpoint(30)
        );
        let keep = run.checkpoint(10);
        run.prune(1, &[keep.as_path()]).expect("prune");
        assert!(run.checkpoint(10).exists(), "protected");
        assert!(!run.checkpoint(20).exists());
        run.prune(1, &[]).expect("prune");
        assert!(!run.checkpoint(10).exists());
        assert!(run.checkpoint(30).exists());
        write_atomic(&run.latest_pointer(), b"step-0000099\n").expect("write");
        assert!(
            run.latest().is_err(),
            "a pointer to a missing checkpoint is an error"
        );
        fs::remove_dir_all(&root).ok();
    }
}
