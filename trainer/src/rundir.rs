//! The run directory (`docs/file-formats.md`): resolved config, checkpoints with a `latest` pointer,
//! TensorBoard events and `eval.jsonl`. Every file that state depends on is written atomically.

use anyhow::Context;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use oware_engine::atomic_file::write_atomic;

/// The name of the checkpoint folder of `step` (`step-0000020`): run state stores names, not
/// paths, so that `./runs/x` and `runs/x` mean the same checkpoints.
pub fn checkpoint_name(step: u64) -> String {
    format!("step-{step:07}")
}

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
        self.checkpoints().join(checkpoint_name(step))
    }

    /// `checkpoints/NAME`.
    pub fn checkpoint_named(&self, name: &str) -> PathBuf {
        self.checkpoints().join(name)
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

    /// Points `latest` at the checkpoint folder `name` (atomically).
    pub fn set_latest(&self, name: &str) -> anyhow::Result<()> {
        Ok(oware_model::write_latest(&self.checkpoints(), name)?)
    }

    /// The newest complete checkpoint folder (`step-N` with a `meta.json`) by step, whatever
    /// `latest` says: its name and step.
    pub fn newest_checkpoint(&self) -> anyhow::Result<Option<(String, u64)>> {
        let dir = self.checkpoints();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
        };
        let mut newest: Option<(String, u64)> = None;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
            let Some(name) = entry.file_name().to_str().map(String::from) else {
                continue; // not a name this program writes
            };
            // Only `step-N` folders are checkpoints; any other name is not this program's.
            let Some(step) = name
                .strip_prefix("step-")
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            let complete = entry
                .path()
                .join(oware_model::checkpoint::META_FILE)
                .is_file();
            if complete && newest.as_ref().is_none_or(|(_, s)| step > *s) {
                newest = Some((name, step));
            }
        }
        Ok(newest)
    }

    /// Points `latest` at the newest complete checkpoint when it is newer than the one `latest`
    /// names (or `latest` is missing): a process killed between the two left it. Returns its
    /// name when `latest` moved.
    pub fn adopt_newest_checkpoint(&self) -> anyhow::Result<Option<String>> {
        let Some((name, step)) = self.newest_checkpoint()? else {
            return Ok(None);
        };
        let current = match self.latest()? {
            Some(dir) => oware_model::read_checkpoint_info(&dir)?.meta.step,
            None => {
                self.set_latest(&name)?;
                return Ok(Some(name));
            }
        };
        if step > current {
            self.set_latest(&name)?;
            Ok(Some(name))
        } else {
            Ok(None)
        }
    }

    /// Removes the hidden temporaries a killed process left while writing a checkpoint or the
    /// `latest` pointer (only call it while this process is the run's one writer).
    pub fn remove_stale_temporaries(&self) -> anyhow::Result<usize> {
        Ok(oware_model::remove_stale_temporaries(&self.checkpoints())?)
    }

    /// Removes all but the newest `keep` checkpoints; never the one `latest` names, nor any
    /// named in `protect` (e.g. the previous evaluated checkpoint, still needed as an opponent).
    pub fn prune(&self, keep: usize, protect: &[&str]) -> anyhow::Result<()> {
        let latest = self.latest()?;
        let dir = self.checkpoints();
        let mut steps: Vec<(String, PathBuf)> = Vec::new();
        for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry
                .with_context(|| format!("reading {}", dir.display()))?
                .path();
            let name = path.file_name().and_then(|n| n.to_str()).map(String::from);
            if let Some(name) = name.filter(|n| n.starts_with("step-") && path.is_dir()) {
                steps.push((name, path));
            }
        }
        steps.sort();
        let excess = steps.len().saturating_sub(keep.max(1));
        for (name, old) in steps.into_iter().take(excess) {
            if Some(&old) != latest.as_ref() && !protect.contains(&name.as_str()) {
                oware_model::remove_checkpoint(&old)
                    .with_context(|| format!("removing {}", old.display()))?;
            }
        }
        Ok(())
    }

    /// Appends one line to `eval.jsonl`, in one write (so a kill leaves whole lines).
    pub fn append_eval(&self, line: &serde_json::Value) -> anyhow::Result<()> {
        let path = self.eval_log();
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        f.write_all(format!("{line}\n").as_bytes())
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Makes `eval.jsonl` hold only evaluations of steps up to `step` (the checkpoint a resumed
    /// run continues from): a run killed after an evaluation but before its checkpoint will
    /// evaluate that step again. A torn last line (no newline) is dropped too; any other line
    /// that is not an evaluation is an error naming the file and line. Rewritten atomically,
    /// and only when something is dropped. Returns how many lines were dropped.
    pub fn trim_eval_log(&self, step: u64) -> anyhow::Result<usize> {
        let path = self.eval_log();
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let complete = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        let mut dropped = usize::from(complete.len() < text.len());
        let mut kept = String::with_capacity(complete.len());
        for (i, line) in complete.lines().enumerate() {
            let line_step = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("step").and_then(|s| s.as_u64()))
                .with_context(|| {
                    format!(
                        "{} line {}: not an evaluation (no step)",
                        path.display(),
                        i + 1
                    )
                })?;
            if line_step <= step {
                kept.push_str(line);
                kept.push('\n');
            } else {
                dropped += 1;
            }
        }
        if dropped > 0 {
            write_atomic(&path, kept.as_bytes())?;
        }
        Ok(dropped)
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
            run.set_latest(&checkpoint_name(step)).expect("latest");
        }
        assert_eq!(run.latest().expect("ok"), Some(run.checkpoint(30)));
        assert_eq!(
            oware_model::resolve_checkpoint(&root).expect("resolves"),
            run.checkpoint(30)
        );
        // Protection is by name, whatever spelling of the run directory is used.
        let dotted = RunDir::new(Path::new(".").join(&root));
        dotted.prune(1, &["step-0000010"]).expect("prune");
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

    #[test]
    fn the_eval_log_is_trimmed_to_the_resumed_step() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = RunDir::new(dir.path());
        run.create().expect("create");
        assert_eq!(run.trim_eval_log(5).expect("no log yet"), 0);
        for step in [10, 20, 20, 30] {
            run.append_eval(&serde_json::json!({"step": step, "score": 0.5}))
                .expect("append");
        }
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(run.eval_log())
            .expect("open");
        f.write_all(b"{\"step\": 40, \"sco").expect("torn line");
        assert_eq!(run.trim_eval_log(20).expect("trim"), 2);
        let text = fs::read_to_string(run.eval_log()).expect("read");
        assert_eq!(text.lines().count(), 3);
        assert!(text.ends_with('\n'));
        assert_eq!(run.trim_eval_log(20).expect("again"), 0);
        fs::write(run.eval_log(), "{\"step\": 1}\nnot json\n").expect("write");
        let err = run.trim_eval_log(20).expect_err("damaged");
        assert!(format!("{err:#}").contains("line 2"), "{err:#}");
    }
}
