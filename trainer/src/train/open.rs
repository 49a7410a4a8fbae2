//! Opening a run: its directory, its resolved config and its state (fresh, or loaded from
//! the latest checkpoint when resuming), with the notes a person should read about what was
//! repaired on the way.

use super::TrainOptions;
use crate::config::TrainConfig;
use crate::rundir::{RunDir, write_atomic};
use crate::state::{State, fresh_state, load_state};

/// A run ready to train.
pub(crate) struct OpenRun {
    /// The run directory.
    pub(crate) run: RunDir,
    /// The resolved config (written to the run directory).
    pub(crate) config: TrainConfig,
    /// The learner, the replay buffer and the counters.
    pub(crate) state: State,
    /// What was repaired or dropped on the way, for the terminal.
    pub(crate) notes: Vec<String>,
}

/// Opens the run `opts` names: a new run refuses a directory that holds one; a resumed run
/// reads the config it was started with (the `--set` overrides on top), adopts a complete
/// checkpoint that `latest` does not name yet, loads its state and drops evaluation lines
/// written after that checkpoint. The resolved config is written only once every setting is
/// known to work, and stale temporary files of a killed process are removed.
pub(crate) fn open_run(opts: &TrainOptions) -> anyhow::Result<OpenRun> {
    let run = RunDir::new(&opts.run);
    let config = if opts.resume {
        let path = run.config();
        if !path.is_file() {
            anyhow::bail!("cannot resume: {} does not exist", path.display());
        }
        TrainConfig::load_resumed(&path, &opts.sets)?
    } else {
        if run.latest()?.is_some() || run.newest_checkpoint()?.is_some() {
            anyhow::bail!(
                "{} already holds a run; continue it with `oware train --resume {}` or choose another --run",
                run.root().display(),
                run.root().display()
            );
        }
        TrainConfig::load(opts.config.as_deref(), &opts.sets)?
    };
    run.create()?;
    let device = oware_model::device(opts.device)?;
    let mut notes: Vec<String> = Vec::new();
    if opts.resume {
        // A process killed between writing a checkpoint and moving `latest` to it left a
        // complete checkpoint that `latest` does not name yet: continue from it.
        if let Some(name) = run.adopt_newest_checkpoint()? {
            notes.push(format!(
                "checkpoints/latest now names {name}, the newest complete checkpoint (the \
                 stopped process wrote it but did not get to move latest)"
            ));
        }
    }
    let state = if opts.resume {
        load_state(&run, &config, &device, &mut |n| notes.push(n.to_string()))?
    } else {
        fresh_state(&config, &device)
    };
    // Only now is every setting known to run: the resolved config may be written.
    write_atomic(&run.config(), config.to_toml()?.as_bytes())?;
    // This process is the run's one writer from here on.
    run.remove_stale_temporaries()?;
    crate::replay_store::remove_unreferenced(&run)?;
    if opts.resume {
        let dropped = run.trim_eval_log(state.meta.step)?;
        if dropped > 0 {
            notes.push(format!(
                "dropped {dropped} line(s) of eval.jsonl after step {} (written before the run \
                 was stopped, without their checkpoint); that step is evaluated again",
                state.meta.step
            ));
        }
    }
    Ok(OpenRun {
        run,
        config,
        state,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_model::DeviceKind;

    fn options(run: &std::path::Path, resume: bool) -> TrainOptions {
        TrainOptions {
            run: run.to_path_buf(),
            config: None,
            sets: vec!["model.hidden=8".into(), "model.blocks=1".into()],
            resume,
            device: DeviceKind::Cpu,
            quiet: true,
            broker: None,
        }
    }

    #[test]
    fn a_new_run_writes_its_config_and_a_resume_needs_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = dir.path().join("r");
        let e = open_run(&options(&run, true))
            .err()
            .expect("nothing to resume");
        assert!(format!("{e:#}").contains("cannot resume"), "{e:#}");
        let opened = open_run(&options(&run, false)).expect("opens");
        assert_eq!(opened.config.model.hidden, 8);
        assert_eq!(opened.state.meta.step, 0);
        assert!(run.join("config.toml").is_file());
        let text = std::fs::read_to_string(run.join("config.toml")).expect("config");
        assert!(text.contains("hidden = 8"), "{text}");
    }
}
