//! The resumable state of a training run: the learner, the replay buffer and the counters, as
//! saved in each checkpoint and restored by `--resume`.

use crate::config::TrainConfig;
use crate::replay::ReplayBuffer;
use crate::replay_store::{self, REPLAY_INDEX_FILE, SavedReplay};
use crate::rundir::{RunDir, checkpoint_name};
use anyhow::Context;
use oware_model::{
    CheckpointMeta, ExtraFile, Learner, ReconfigureError, load_checkpoint, read_checkpoint_file,
    save_checkpoint_with,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The replay buffer's file inside a checkpoint folder of older builds (whole buffers); newer
/// checkpoints name segments in [`REPLAY_INDEX_FILE`] ([`crate::replay_store`]).
pub const REPLAY_FILE: &str = "replay.bin";

/// The trainer's counters saved in each checkpoint's `meta.json` (`extra`). Every field must be
/// there (a damaged `extra` is an error, never a silent reset), except the optional previous
/// evaluated checkpoint and the broker's state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counters {
    /// Wall-clock seconds of training so far, over all resumes.
    pub elapsed_secs: f64,
    /// Samples the learner has trained on.
    pub trained_samples: u64,
    /// Training samples produced by self-play.
    pub new_samples: u64,
    /// Simulations run by self-play.
    pub sims: u64,
    /// Moves played by self-play.
    pub moves: u64,
    /// The name of the previous evaluated checkpoint folder (`step-0001000`), the opponent of
    /// `eval.vs_previous`; kept on disk by pruning. A name, not a path, so that any spelling
    /// of the run directory finds it (older builds stored a path: its last part is used).
    pub previous_eval_checkpoint: Option<String>,
    /// How many times the run has been (re)started. The random streams (self-play workers, the
    /// learner's sampling) are derived from `[schedule] seed`, this count and the step, so a
    /// resumed run does not replay the random choices it made before.
    pub starts: u64,
    /// The broker's counters and de-duplication state (runs with `--broker` only; absent in
    /// checkpoints of runs without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker: Option<crate::broker::learner::BrokerState>,
}

impl Counters {
    /// The counters stored in `extra` of the `meta.json` at `meta_path`; an error naming the
    /// file when they are missing or damaged.
    pub fn from_meta(extra: &serde_json::Value, meta_path: &Path) -> anyhow::Result<Counters> {
        if extra.is_null() {
            anyhow::bail!(
                "{}: no trainer counters (extra is null): not a checkpoint written by `oware train`",
                meta_path.display()
            );
        }
        let mut counters: Counters = serde_json::from_value(extra.clone()).with_context(|| {
            format!(
                "{}: the trainer counters (extra) are damaged",
                meta_path.display()
            )
        })?;
        if let Some(stored) = &counters.previous_eval_checkpoint {
            let name = Path::new(stored)
                .file_name()
                .and_then(|n| n.to_str())
                .filter(|n| n.starts_with("step-"))
                .with_context(|| {
                    format!(
                        "{}: previous_eval_checkpoint '{stored}' does not name a checkpoint",
                        meta_path.display()
                    )
                })?;
            counters.previous_eval_checkpoint = Some(name.to_string());
        }
        Ok(counters)
    }
}

/// Everything a checkpoint saves and a resume restores.
pub struct State {
    /// The network and its optimizer.
    pub learner: Learner,
    /// The replay buffer.
    pub replay: ReplayBuffer,
    /// Step, games, positions, last evaluation.
    pub meta: CheckpointMeta,
    /// The trainer's own counters.
    pub counters: Counters,
    /// The replay segments of the last checkpoint (the next one writes only what is new).
    pub saved_replay: SavedReplay,
}

/// A new run's state.
pub fn fresh_state(config: &TrainConfig, device: &oware_model::Device) -> State {
    State {
        learner: Learner::new(&config.model, &config.optimizer, device),
        replay: ReplayBuffer::new(config.replay.capacity),
        meta: CheckpointMeta {
            mcts: Some(config.mcts.clone()),
            ..CheckpointMeta::default()
        },
        counters: Counters::default(),
        saved_replay: SavedReplay::default(),
    }
}

/// The state saved in the run's latest checkpoint, made to run with `config`: every key of the
/// config takes effect or is an error naming it. `[model]` must match the checkpoint's network;
/// `[optimizer]` changes apply to the loaded optimizer (keeping its state), except
/// `optimizer.optimizer`, which cannot change; a changed `replay.capacity` keeps the most recent
/// positions. `notes` receives what was adjusted.
pub fn load_state(
    run: &RunDir,
    config: &TrainConfig,
    device: &oware_model::Device,
    notes: &mut dyn FnMut(&str),
) -> anyhow::Result<State> {
    let Some(dir) = run.latest()? else {
        anyhow::bail!(
            "{} has no checkpoint to resume from (checkpoints/latest is missing)",
            run.root().display()
        );
    };
    let (mut learner, mut meta) = load_checkpoint(&dir, device)
        .with_context(|| format!("loading checkpoint {}", dir.display()))?;
    if learner.config() != &config.model {
        anyhow::bail!(
            "model: checkpoint {} holds a network of shape {}, the config asks for {}; the \
             network's shape cannot change within a run (start a new run)",
            dir.display(),
            learner.config(),
            config.model
        );
    }
    learner
        .reconfigure(&config.optimizer)
        .map_err(|e| match e {
            ReconfigureError::KindChanged { .. } => anyhow::anyhow!("optimizer.optimizer: {e}"),
            ReconfigureError::Invalid(msg) => anyhow::anyhow!("optimizer.{msg}"),
        })?;
    let (mut replay, saved_replay) = if dir.join(REPLAY_INDEX_FILE).is_file() {
        let index = read_checkpoint_file(&dir, REPLAY_INDEX_FILE)
            .with_context(|| format!("loading the replay buffer of {}", dir.display()))?;
        replay_store::load(run, &dir, &index)?
    } else {
        // A checkpoint of an older build: the whole buffer in one file. The next checkpoint
        // writes it as its first segment.
        let replay_path = dir.join(REPLAY_FILE);
        let bytes = read_checkpoint_file(&dir, REPLAY_FILE)
            .with_context(|| format!("loading the replay buffer of {}", dir.display()))?;
        let replay = ReplayBuffer::from_bytes(&bytes)
            .map_err(|e| anyhow::anyhow!("{}: {e}", replay_path.display()))?;
        (replay, SavedReplay::default())
    };
    if replay.capacity() != config.replay.capacity {
        let (was, before) = (replay.capacity(), replay.len());
        replay.set_capacity(config.replay.capacity);
        notes(&format!(
            "replay.capacity is now {} (was {was}): kept the {} most recent of {before} positions",
            config.replay.capacity,
            replay.len()
        ));
    }
    let mut counters =
        Counters::from_meta(&meta.extra, &dir.join(oware_model::checkpoint::META_FILE))?;
    let previous = counters.previous_eval_checkpoint.clone();
    if let Some(name) = previous.filter(|n| {
        !run.checkpoint_named(n)
            .join(oware_model::checkpoint::META_FILE)
            .is_file()
    }) {
        notes(&format!(
            "the previous evaluated checkpoint {name} is gone (an older build could prune it); \
             the next evaluation plays no previous checkpoint"
        ));
        counters.previous_eval_checkpoint = None;
    }
    // The checkpoints written from now on carry the search this run now uses.
    meta.mcts = Some(config.mcts.clone());
    Ok(State {
        learner,
        replay,
        meta,
        counters,
        saved_replay,
    })
}

/// Writes the checkpoint of the current step (weights, optimizer, counters, replay buffer, all
/// in one new folder that appears complete or not at all), points `latest` at it, and keeps
/// the newest `keep` (and the previous evaluated one). Saving a step that has a checkpoint
/// already is an error: a complete checkpoint is never modified.
pub fn save_state(run: &RunDir, state: &mut State, keep: usize) -> anyhow::Result<PathBuf> {
    let name = checkpoint_name(state.meta.step);
    let dir = run.checkpoint_named(&name);
    state.meta.extra = serde_json::to_value(&state.counters)?;
    if dir.exists() {
        // Checked before the new samples are written, so that refusing changes nothing.
        anyhow::bail!(
            "writing checkpoint {}: it exists already, and a complete checkpoint is never overwritten",
            dir.display()
        );
    }
    // The replay buffer: a segment of the samples added since the last checkpoint, which
    // this checkpoint's replay.json names with the earlier ones it still needs.
    let mut saved = state.saved_replay.clone();
    let index = replay_store::save_increment(run, &state.replay, &mut saved)?;
    let extra = [ExtraFile {
        name: REPLAY_INDEX_FILE,
        bytes: &index,
    }];
    save_checkpoint_with(&dir, &state.learner, &state.meta, &extra)
        .with_context(|| format!("writing checkpoint {}", dir.display()))?;
    state.saved_replay = saved;
    run.set_latest(&name)?;
    let previous = state.counters.previous_eval_checkpoint.as_deref();
    run.prune(keep, previous.as_slice())?;
    replay_store::remove_unreferenced(run)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_model::checkpoint::META_FILE;

    fn tiny() -> TrainConfig {
        TrainConfig::from_toml_str(include_str!("../../configs/tiny.toml"), &[])
            .expect("tiny config")
    }

    fn saved_run() -> (tempfile::TempDir, RunDir, TrainConfig) {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = RunDir::new(dir.path().join("run"));
        run.create().expect("create");
        let config = tiny();
        let device = oware_model::Device::flex();
        let mut state = fresh_state(&config, &device);
        state.meta.step = 7;
        state.counters.trained_samples = 7 * 64;
        state.counters.previous_eval_checkpoint = Some("step-0000007".into());
        save_state(&run, &mut state, 3).expect("save");
        (dir, run, config)
    }

    #[test]
    fn a_saved_step_is_never_saved_again() {
        let (_dir, run, config) = saved_run();
        let meta_path = run.checkpoint(7).join(META_FILE);
        let before = std::fs::read(&meta_path).expect("read");
        let device = oware_model::Device::flex();
        let mut state = load_state(&run, &config, &device, &mut |_| {}).expect("load");
        assert_eq!(state.meta.step, 7);
        state.meta.games = 99;
        let err = save_state(&run, &mut state, 3).expect_err("step 7 exists");
        assert!(format!("{err:#}").contains("never overwritten"), "{err:#}");
        assert_eq!(std::fs::read(&meta_path).expect("read"), before);
        assert_eq!(run.latest().expect("latest"), Some(run.checkpoint(7)));
    }

    #[test]
    fn a_checkpoint_holds_the_search_of_its_run() {
        let (_dir, run, config) = saved_run();
        let info = oware_model::read_checkpoint_info(&run.checkpoint(7)).expect("meta");
        assert_eq!(info.meta.mcts.as_ref(), Some(&config.mcts));
        // A resumed run with another [mcts] writes the search it now uses.
        let mut changed = config.clone();
        changed.mcts.c_puct = 2.75;
        let device = oware_model::Device::flex();
        let state = load_state(&run, &changed, &device, &mut |_| {}).expect("load");
        assert_eq!(state.meta.mcts.as_ref(), Some(&changed.mcts));
    }

    #[test]
    fn damaged_counters_are_an_error_not_a_reset() {
        let path = Path::new("runs/x/checkpoints/step-0000007/meta.json");
        let good = serde_json::to_value(Counters::default()).expect("json");
        assert_eq!(
            Counters::from_meta(&good, path).expect("valid"),
            Counters::default()
        );
        let mut missing = good.clone();
        missing
            .as_object_mut()
            .expect("object")
            .remove("trained_samples");
        let mut wrong_type = good.clone();
        wrong_type["new_samples"] = serde_json::json!("lots");
        let mut unknown = good.clone();
        unknown["surprise"] = serde_json::json!(1);
        for (what, extra) in [
            ("missing field", missing),
            ("wrong type", wrong_type),
            ("unknown field", unknown),
            ("null", serde_json::Value::Null),
            ("not an object", serde_json::json!([1, 2])),
        ] {
            let err = Counters::from_meta(&extra, path).expect_err(what);
            let msg = format!("{err:#}");
            assert!(msg.contains("meta.json"), "{what}: {msg}");
        }
        // An older build's path becomes a name.
        let mut old = good;
        old["previous_eval_checkpoint"] = serde_json::json!("./runs/x/checkpoints/step-0000005");
        let c = Counters::from_meta(&old, path).expect("valid");
        assert_eq!(c.previous_eval_checkpoint.as_deref(), Some("step-0000005"));
    }

    #[test]
    fn a_damaged_meta_extra_stops_a_resume() {
        let (_dir, run, config) = saved_run();
        let meta_path = run.checkpoint(7).join(META_FILE);
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&meta_path).expect("read")).expect("json");
        v["extra"]["trained_samples"] = serde_json::json!(-3);
        std::fs::write(&meta_path, serde_json::to_vec(&v).expect("json")).expect("write");
        let device = oware_model::Device::flex();
        let err = match load_state(&run, &config, &device, &mut |_| {}) {
            Ok(_) => panic!("a damaged extra must not load"),
            Err(e) => format!("{e:#}"),
        };
        assert!(
            err.contains("meta.json") && err.contains("damaged"),
            "{err}"
        );
    }

    #[test]
    fn resume_applies_or_rejects_every_changed_key() {
        let (_dir, run, config) = saved_run();
        let device = oware_model::Device::flex();
        let mut changed = config.clone();
        changed.optimizer.weight_decay = 3e-3;
        changed.optimizer.value_weight = 0.5;
        changed.replay.capacity = 500;
        let mut notes = Vec::new();
        let state =
            load_state(&run, &changed, &device, &mut |n| notes.push(n.to_string())).expect("load");
        assert_eq!(state.learner.optim_config(), &changed.optimizer);
        assert_eq!(state.replay.capacity(), 500);
        assert!(
            notes.iter().any(|n| n.contains("replay.capacity")),
            "{notes:?}"
        );
        let mut other = config.clone();
        other.optimizer.optimizer = oware_model::OptimizerKind::Sgd;
        let err = match load_state(&run, &other, &device, &mut |_| {}) {
            Ok(_) => panic!("another optimizer must not load"),
            Err(e) => format!("{e:#}"),
        };
        assert!(err.starts_with("optimizer.optimizer"), "{err}");
        let mut wider = config;
        wider.model.hidden += 1;
        let err = match load_state(&run, &wider, &device, &mut |_| {}) {
            Ok(_) => panic!("another shape must not load"),
            Err(e) => format!("{e:#}"),
        };
        assert!(err.starts_with("model"), "{err}");
    }
}
