//! Soak test of checkpoints and resume (slow, so ignored by default). Run it with
//!
//! ```sh
//! cargo test --release --test soak_resume -- --ignored --nocapture
//! ```
//!
//! A `tiny` training run is killed with SIGKILL at 25 random moments and resumed each time.
//! After every kill `latest` loads (weights, optimizer and replay buffer), its step never goes
//! backwards, every checkpoint folder loads completely (none is half-written), and
//! `eval.jsonl` holds whole lines; at the end the run's counters add up.

use oware_model::{Device, load_checkpoint, read_checkpoint_file, resolve_checkpoint};
use oware_trainer::replay::ReplayBuffer;
use oware_trainer::rundir::RunDir;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BIN, oware, scratch, text};

use crate::common::TINY;
const KILLS: usize = 25;
const BATCH: u64 = 64;
const CAPACITY: u64 = 20_000;

/// The overrides of every start (a resume applies them again, unchanged).
const SETS: [&str; 6] = [
    "schedule.max_steps=1000000",
    "schedule.checkpoint_every_steps=4",
    "schedule.keep_checkpoints=3",
    "eval.every_steps=15",
    "eval.vs_previous=true",
    "log.every_steps=5",
];

fn has_checkpoint(run: &Path) -> bool {
    std::fs::read_dir(run.join("checkpoints")).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with("step-")
                && e.path().join("meta.json").is_file()
        })
    })
}

/// Loads a checkpoint the way a resume does: network, optimizer, replay buffer.
fn load_fully(dir: &Path) -> (oware_model::CheckpointMeta, ReplayBuffer) {
    let (_, meta) = load_checkpoint(dir, &Device::flex())
        .unwrap_or_else(|e| panic!("{} does not load: {e}", dir.display()));
    let index = read_checkpoint_file(dir, oware_trainer::replay_store::REPLAY_INDEX_FILE)
        .unwrap_or_else(|e| panic!("{}: no replay buffer: {e}", dir.display()));
    let run = dir
        .parent()
        .and_then(Path::parent)
        .expect("a checkpoint lies in RUN/checkpoints");
    let (replay, _) = oware_trainer::replay_store::load(&RunDir::new(run), dir, &index)
        .unwrap_or_else(|e| panic!("{}: replay buffer: {e:#}", dir.display()));
    (meta, replay)
}

/// The evaluations: every line whole and parsed.
fn eval_lines(run: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(run.join("eval.jsonl")).unwrap_or_default();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a torn line in eval.jsonl"
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("eval.jsonl: {e}: {l}")))
        .collect()
}

fn start(run: &Path) -> std::process::Child {
    let run_arg = run.to_str().expect("utf-8 path");
    let mut cmd = Command::new(BIN);
    if has_checkpoint(run) {
        cmd.args(["train", "--resume", run_arg]);
    } else {
        cmd.args(["train", "--config", TINY, "--run", run_arg]);
    }
    cmd.arg("--quiet");
    for set in SETS {
        cmd.args(["--set", set]);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().expect("starts")
}

#[test]
#[ignore = "slow soak test: cargo test --release --test soak_resume -- --ignored --nocapture"]
fn a_run_killed_at_25_random_moments_resumes_every_time_and_its_counters_add_up() {
    let dir = scratch("soak");
    let run = dir.join("run");
    let mut rng = SmallRng::seed_from_u64(2026);
    let started = Instant::now();
    let mut last_step = 0u64;
    let mut temporaries_seen = 0usize;
    let mut kills_without_progress = 0usize;
    for kill in 1..=KILLS {
        let mut child = start(&run);
        let wait = Duration::from_millis(rng.random_range(200..3000));
        std::thread::sleep(wait);
        child.kill().expect("SIGKILL");
        child.wait().expect("reaped");

        // Whatever the moment, every checkpoint folder is complete.
        let ckpts = run.join("checkpoints");
        if let Ok(entries) = std::fs::read_dir(&ckpts) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("step-") {
                    load_fully(&entry.path());
                } else if name.starts_with('.') {
                    temporaries_seen += 1; // a kill mid-write; never named by `latest`
                }
            }
        }
        eval_lines(&run);
        if !ckpts.join("latest").is_file() {
            assert_eq!(last_step, 0, "kill {kill}: latest vanished");
            kills_without_progress += 1;
            continue;
        }
        let latest = resolve_checkpoint(&run).expect("latest resolves");
        let (meta, _) = load_fully(&latest);
        assert!(
            meta.step >= last_step,
            "kill {kill}: step went back from {last_step} to {}",
            meta.step
        );
        if meta.step == last_step {
            kills_without_progress += 1;
        }
        println!(
            "kill {kill:2} after {:4} ms: latest {}",
            wait.as_millis(),
            meta.step
        );
        last_step = meta.step;
    }

    // The last resume runs to a step limit and exits cleanly.
    let target = last_step + 20;
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        &format!("schedule.max_steps={target}"),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let latest = resolve_checkpoint(&run).expect("latest");
    let (meta, replay) = load_fully(&latest);
    assert_eq!(meta.step, target);
    let extra = &meta.extra;
    let counter = |k: &str| extra[k].as_u64().unwrap_or_else(|| panic!("extra.{k}"));
    // The counters add up: every trained batch, every ingested position, once.
    assert_eq!(counter("trained_samples"), meta.step * BATCH);
    assert_eq!(counter("new_samples"), meta.positions);
    assert_eq!(replay.total_added(), meta.positions);
    assert_eq!(replay.len() as u64, meta.positions.min(CAPACITY));
    // tiny records every move (full_search_prob = 1): a game has at least 4 plies.
    assert!(meta.positions >= 4 * meta.games && meta.games > 0);
    assert!(counter("trained_samples") <= 8 * counter("new_samples"));
    assert!(counter("moves") >= meta.positions);
    assert!(counter("starts") >= 2);
    // One evaluation per (step, opponent), none after the final step, in step order.
    let evals = eval_lines(&run);
    let mut seen = HashSet::new();
    let mut previous = 0;
    for e in &evals {
        let step = e["step"].as_u64().expect("step");
        assert!(step <= meta.step && step >= previous, "{e}");
        previous = step;
        assert!(
            seen.insert((step, e["opponent"].to_string())),
            "evaluated twice: {e}"
        );
    }
    println!(
        "soak: {KILLS} kills ({kills_without_progress} without a new checkpoint), \
         {:.1} s in all; steps reached {}; {} games, {} positions; {} evaluation lines; \
         {temporaries_seen} leftover temporaries seen (and removed on resume)",
        started.elapsed().as_secs_f64(),
        meta.step,
        meta.games,
        meta.positions,
        evals.len()
    );
    std::fs::remove_dir_all(&dir).ok();
}
