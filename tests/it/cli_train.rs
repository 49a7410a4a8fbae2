//! `oware train` and `oware selfplay` end to end, with the real binary and `configs/tiny.toml`:
//! a run finishes and its checkpoint plays; the TensorBoard file holds the expected scalars; a
//! run resumes at its saved step; bad config keys and values are clear errors; a run killed with
//! SIGKILL (also between an evaluation and its checkpoint) resumes from a complete checkpoint;
//! a changed optimizer key on resume takes effect, another optimizer is refused; a self-play
//! worker that fails, or a diverged network, stops the run with a clear message and saves
//! nothing diverged. (The soak test, `tests/soak_resume.rs`, kills a run 25 times.)

use oware_trainer::tensorboard::{event_files, read_scalars};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::TINY;
use crate::common::{BIN, meta, oware, scratch, text};

fn train_tiny(run: &Path, extra: &[&str]) -> Output {
    let run = run.to_str().expect("utf-8 path");
    let mut args = vec!["train", "--config", TINY, "--run", run, "--quiet"];
    args.extend_from_slice(extra);
    oware(&args)
}

/// Starts a tiny training run that goes on until killed, with extra `--set` overrides.
fn spawn_tiny(run: &Path, sets: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "train",
        "--config",
        TINY,
        "--run",
        run.to_str().expect("utf-8"),
        "--quiet",
    ])
    .args(["--set", "schedule.max_steps=1000000"]);
    for set in sets {
        cmd.args(["--set", set]);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd.spawn().expect("starts")
}

#[test]
fn a_tiny_run_trains_logs_and_its_checkpoint_plays() {
    let dir = scratch("run");
    let run = dir.join("run");
    // An opponent at the network's own time per move, and Elo against random as the anchor.
    let out = train_tiny(
        &run,
        &[
            "--set",
            "eval.opponents=[\"random\", \"alphabeta:depth=1,ms=auto\"]",
            "--set",
            "eval.anchor=\"random\"",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(meta(&run)["step"], 30);
    assert!(run.join("config.toml").is_file());
    // The evaluation log has a line per evaluation match, each with the evaluation's Elo
    // against the anchor; `ms=auto` was played as a measured time.
    let evals = std::fs::read_to_string(run.join("eval.jsonl")).expect("eval.jsonl");
    let lines: Vec<Value> = evals
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let first = &lines[0];
    assert_eq!(first["opponent"], "random");
    assert!(first["elo_ci95"].is_array());
    for line in &lines {
        assert_eq!(line["anchor"], "random", "{line}");
        assert!(
            line["elo_vs_anchor"].as_f64().is_some_and(f64::is_finite),
            "{line}"
        );
        assert!(line["elo_vs_anchor_ci95"].is_array(), "{line}");
    }
    let timed = &lines[1];
    assert_eq!(timed["opponent_config"], "alphabeta:depth=1,ms=auto");
    let played = timed["opponent"].as_str().expect("a spec");
    let ms = played
        .strip_prefix("alphabeta:depth=1,ms=")
        .and_then(|n| n.parse::<u64>().ok());
    assert!(ms.is_some_and(|ms| ms >= 1), "{played}");
    // TensorBoard scalars, read back from the event file.
    let files = event_files(&run).expect("list");
    assert_eq!(files.len(), 1);
    let scalars = read_scalars(&files[0]).expect("readable");
    let tags: std::collections::HashSet<&str> = scalars.iter().map(|s| s.tag.as_str()).collect();
    for tag in [
        "loss/total",
        "loss/policy",
        "loss/value",
        "loss/margin",
        "train/lr",
        "train/learner_busy",
        "selfplay/positions_per_sec",
        "selfplay/games_per_sec",
        "selfplay/sims_per_sec",
        "selfplay/mean_game_plies",
        "replay/size",
        "train/samples_per_position",
        "eval/random/score",
        "eval/random/elo",
        "eval/alphabeta_depth_1_ms_auto/score",
        "eval/elo_vs_anchor",
        "eval/elo_vs_anchor_low",
        "eval/elo_vs_anchor_high",
    ] {
        assert!(tags.contains(tag), "missing {tag}; have {tags:?}");
    }
    // The run directory and a checkpoint folder both load as players.
    let spec = format!("mcts:model={},sims=20", run.display());
    let out = oware(&["pit", &spec, "random", "--games", "4", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("pit json");
    assert_eq!(v["games"], 4);
    // Self-play from the checkpoint writes records that replay.
    let games_dir = dir.join("games");
    let out = oware(&[
        "selfplay",
        "--model",
        run.to_str().expect("utf-8"),
        "--games",
        "3",
        "--out",
        games_dir.to_str().expect("utf-8"),
        "--config",
        TINY,
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary json");
    assert_eq!(summary["games"], 3);
    assert!(summary["sims_per_sec"].as_f64().expect("rate") > 0.0);
    let records = std::fs::read_to_string(games_dir.join("games.txt")).expect("records");
    assert_eq!(records.lines().count(), 3);
    let mut replay = Command::new(BIN)
        .args(["replay", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("replay");
    use std::io::Write;
    replay
        .stdin
        .take()
        .expect("stdin")
        .write_all(records.as_bytes())
        .expect("write");
    let out = replay.wait_with_output().expect("replay output");
    assert!(out.status.success(), "records replay: {}", text(&out));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn resume_continues_from_the_saved_step() {
    let dir = scratch("resume");
    let run = dir.join("run");
    let out = train_tiny(&run, &["--set", "schedule.max_steps=12"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(meta(&run)["step"], 12);
    let games_before = meta(&run)["games"].as_u64().expect("games");
    let sims_before = meta(&run)["extra"]["sims"].as_u64().expect("sims");
    assert!(sims_before > 0);
    // A second plain `train` on the same directory refuses to overwrite it.
    let out = train_tiny(&run, &[]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--resume"), "{}", text(&out));
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        "schedule.max_steps=24",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("resuming"), "{}", text(&out));
    let m = meta(&run);
    assert_eq!(m["step"], 24);
    assert!(m["games"].as_u64().expect("games") >= games_before);
    // Carried over, never reset (the resumed learner may reach step 24 from the saved replay
    // buffer before its self-play has finished a search, so no growth is required).
    assert!(
        m["extra"]["sims"].as_u64().expect("sims") >= sims_before,
        "counters carry over"
    );
    assert!(m["extra"]["moves"].as_u64().expect("moves") > 0);
    // The resumed process logged its own steps, after the saved one.
    let files = event_files(&run).expect("list");
    assert_eq!(files.len(), 2);
    let resumed = read_scalars(&files[1]).expect("readable");
    assert!(
        resumed
            .iter()
            .filter(|s| s.tag == "loss/total")
            .all(|s| s.step > 12)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_config_keys_and_values_are_clear_errors() {
    let dir = scratch("badcfg");
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, "[schedule]\nlearning_rate = 0.1\n").expect("write");
    let out = oware(&[
        "train",
        "--config",
        cfg.to_str().expect("utf-8"),
        "--run",
        dir.join("r").to_str().expect("utf-8"),
    ]);
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(
        msg.contains("learning_rate") && msg.contains("bad.toml"),
        "{msg}"
    );
    assert!(!msg.contains("panicked"), "{msg}");
    let out = train_tiny(&dir.join("r2"), &["--set", "schedule.lr=-1"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("schedule.lr"), "{}", text(&out));
    let out = train_tiny(&dir.join("r3"), &["--set", "mcts.no_such_key=1"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("mcts.no_such_key"), "{}", text(&out));
    let out = oware(&[
        "train",
        "--resume",
        dir.join("missing").to_str().expect("utf-8"),
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("missing"), "{}", text(&out));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_killed_run_resumes_from_a_complete_checkpoint() {
    let dir = scratch("kill");
    let run = dir.join("run");
    let mut child = spawn_tiny(
        &run,
        &["schedule.checkpoint_every_steps=3", "eval.every_steps=0"],
    );
    // Wait for a few checkpoints, then kill it without warning.
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120) {
        if run.join("checkpoints/latest").is_file() && meta(&run)["step"].as_u64().unwrap_or(0) >= 9
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let step = meta(&run)["step"]
        .as_u64()
        .expect("a checkpoint was written");
    assert!(step >= 9, "only reached step {step}");
    // `latest` names a complete checkpoint: it loads as a player.
    let spec = format!("mcts:model={},sims=4", run.display());
    let out = oware(&["pit", &spec, "random", "--games", "2", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    // No temporary checkpoint folder is mistaken for a real one, and the run resumes.
    let target = format!("schedule.max_steps={}", step + 6);
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        &target,
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(meta(&run)["step"].as_u64(), Some(step + 6));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ctrl_c_checkpoints_and_exits_cleanly() {
    let dir = scratch("sigint");
    let run = dir.join("run");
    let mut child = spawn_tiny(
        &run,
        &[
            "schedule.checkpoint_every_steps=1000000",
            "eval.every_steps=0",
            "log.every_steps=1",
        ],
    );
    // Wait until the learner is stepping (its event file grows), then send SIGINT.
    let started = Instant::now();
    loop {
        let steps = event_files(&run)
            .ok()
            .and_then(|f| f.first().cloned())
            .and_then(|f| read_scalars(&f).ok())
            .map(|s| s.iter().filter(|s| s.tag == "loss/total").count())
            .unwrap_or(0);
        if steps >= 3 || started.elapsed() > Duration::from_secs(120) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let status = child.wait().expect("exits");
    assert!(status.success(), "Ctrl-C exits 0, got {status}");
    assert!(meta(&run)["step"].as_u64().expect("checkpoint") >= 3);
    std::fs::remove_dir_all(&dir).ok();
}

/// The `eval.jsonl` lines as JSON values.
fn eval_lines(run: &Path) -> Vec<Value> {
    std::fs::read_to_string(run.join("eval.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("eval.jsonl line"))
        .collect()
}

#[test]
fn a_kill_between_an_evaluation_and_its_checkpoint_leaves_a_loadable_latest() {
    let dir = scratch("kill-eval");
    let run = dir.join("run");
    // The second opponent is slow: its match runs for seconds after the first match's line
    // is in eval.jsonl, and the checkpoint of step 10 comes only after it.
    let mut child = spawn_tiny(
        &run,
        &[
            "schedule.checkpoint_every_steps=3",
            "eval.every_steps=10",
            "eval.vs_previous=false",
            "eval.opponents=[\"random\", \"mcts:rollouts,sims=20000\"]",
        ],
    );
    let started = Instant::now();
    while eval_lines(&run).is_empty() && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let lines = eval_lines(&run);
    assert_eq!(lines.len(), 1, "killed during the evaluation: {lines:?}");
    assert_eq!(lines[0]["step"], 10);
    assert!(!run.join("checkpoints/step-0000010").exists());
    // `latest` names the last complete checkpoint before the evaluation, and it loads.
    assert_eq!(meta(&run)["step"], 9);
    let spec = format!("mcts:model={},sims=4", run.display());
    let out = oware(&["pit", &spec, "random", "--games", "2", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    // The resumed run drops the orphaned line and evaluates step 10 again.
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        "schedule.max_steps=12",
        "--set",
        "eval.opponents=[\"random\"]",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("dropped 1 line"), "{}", text(&out));
    let steps: Vec<u64> = eval_lines(&run)
        .iter()
        .map(|l| l["step"].as_u64().expect("step"))
        .collect();
    assert_eq!(steps, [10, 12], "one evaluation per step");
    assert_eq!(meta(&run)["step"], 12);
    // The checkpoint of step 10 holds its evaluation in meta.json.
    let m10: Value = serde_json::from_str(
        &std::fs::read_to_string(run.join("checkpoints/step-0000010/meta.json")).expect("read"),
    )
    .expect("json");
    assert_eq!(m10["last_eval"][0]["step"], 10);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn resume_applies_a_changed_optimizer_key_and_rejects_another_optimizer() {
    let dir = scratch("resume-optim");
    let run = dir.join("run");
    let out = train_tiny(&run, &["--set", "schedule.max_steps=6"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(meta(&run)["optim"]["weight_decay"], 1e-4);
    // Another spelling of the run directory, one checkpoint kept, one per step: the previous
    // evaluated checkpoint (step 9) must survive the pruning of steps 10 and 11 to be the
    // opponent at step 12.
    let dotted = dir.join(".").join("run");
    let out = oware(&[
        "train",
        "--resume",
        dotted.to_str().expect("utf-8"),
        "--set",
        "optimizer.weight_decay=0.002",
        "--set",
        "schedule.max_steps=12",
        "--set",
        "schedule.keep_checkpoints=1",
        "--set",
        "schedule.checkpoint_every_steps=1",
        "--set",
        "eval.every_steps=3",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let m = meta(&run);
    assert_eq!(m["step"], 12);
    assert_eq!(m["optim"]["weight_decay"], 0.002, "the new key took effect");
    let config = std::fs::read_to_string(run.join("config.toml")).expect("config.toml");
    assert!(config.contains("weight_decay = 0.002"), "{config}");
    let last = eval_lines(&run);
    let vs_previous = last
        .iter()
        .find(|l| l["step"] == 12 && l["vs_previous"] == true)
        .expect("step 12 played the previous evaluated checkpoint");
    let opponent = vs_previous["opponent"].as_str().expect("spec");
    assert!(opponent.contains("step-0000009"), "{opponent}");
    // Another optimizer would not fit the saved state: rejected, naming the key, and the
    // run directory claims nothing new.
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        "optimizer.optimizer=sgd",
        "--set",
        "schedule.max_steps=14",
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("optimizer.optimizer"), "{}", text(&out));
    let after = std::fs::read_to_string(run.join("config.toml")).expect("config.toml");
    assert_eq!(
        after, config,
        "config.toml is not rewritten by a rejected resume"
    );
    assert_eq!(meta(&run)["step"], 12);
    std::fs::remove_dir_all(&dir).ok();
}

/// A network of the tiny config's shape whose outputs overflow to NaN (finite but absurd
/// weights after one step at an absurd learning rate), checked to be so.
fn overflowing_learner() -> oware_model::Learner {
    use oware_engine::Position;
    use oware_model::{Device, Learner, ModelConfig, OptimConfig, TrainBatch};
    let shape = ModelConfig::new().with_hidden(32).with_blocks(1);
    let mut learner = Learner::new(&shape, &OptimConfig::default(), &Device::flex());
    let mut batch = TrainBatch::default();
    let mut pos = Position::start();
    for _ in 0..8 {
        let moves = pos.legal_moves();
        let first = moves.iter().next().expect("a move");
        let mut policy = [0.0; 6];
        policy[first.relative()] = 1.0;
        batch.positions.push(pos);
        batch.policy.push(policy);
        batch.value.push(0.5);
        batch.margin.push(0.1);
        pos = pos.play(first).expect("legal").0;
    }
    learner
        .step(&batch, 1e30)
        .expect("the loss before the step is finite");
    assert!(
        learner.evaluator().predict(&[Position::start()]).is_err(),
        "the weights should overflow"
    );
    learner
}

#[test]
fn a_failing_self_play_worker_reaches_the_user() {
    use oware_model::{
        ExtraFile, read_checkpoint_file, read_checkpoint_info, save_checkpoint_with, write_latest,
    };
    let dir = scratch("worker-fails");
    let run = dir.join("run");
    let out = train_tiny(&run, &["--set", "schedule.max_steps=6"]);
    assert!(out.status.success(), "{}", text(&out));
    // Step 7: the run's own counters and replay buffer, with a network that outputs NaN.
    let ckpts = run.join("checkpoints");
    let six = ckpts.join("step-0000006");
    let mut saved = read_checkpoint_info(&six).expect("meta").meta;
    saved.step = 7;
    // The buffer's index: it names the run's replay segments, which step 7 then shares.
    let index = oware_trainer::replay_store::REPLAY_INDEX_FILE;
    let replay = read_checkpoint_file(&six, index).expect("replay");
    let extra = [ExtraFile {
        name: index,
        bytes: &replay,
    }];
    let learner = overflowing_learner();
    save_checkpoint_with(&ckpts.join("step-0000007"), &learner, &saved, &extra).expect("save");
    write_latest(&ckpts, "step-0000007").expect("latest");

    // `oware selfplay` exits non-zero with the worker's error.
    let games = dir.join("games");
    let out = oware(&[
        "selfplay",
        "--model",
        run.to_str().expect("utf-8"),
        "--games",
        "2",
        "--out",
        games.to_str().expect("utf-8"),
        "--config",
        TINY,
    ]);
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(
        msg.contains("self-play worker 0 failed") && msg.contains("not a finite number"),
        "{msg}"
    );
    assert!(!msg.contains("panicked"), "{msg}");

    // `oware train` stops with it too (the learner waits for a full buffer, so the workers
    // are the first to meet the network), saves nothing of the diverged network, and names
    // the last good checkpoint.
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        "replay.min_samples=20000",
        "--set",
        "schedule.max_steps=100",
        "--quiet",
    ]);
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(
        msg.contains("self-play worker 0 failed") && msg.contains("not a finite number"),
        "{msg}"
    );
    assert!(
        msg.contains("diverged") && msg.contains("step-0000007"),
        "{msg}"
    );
    assert!(!msg.contains("panicked"), "{msg}");
    assert_eq!(meta(&run)["step"], 7, "nothing new was saved");

    // With the buffer already full enough, the learner meets the NaN first (a NaN loss), or
    // a worker does: either way a divergence that saves nothing.
    let out = oware(&[
        "train",
        "--resume",
        run.to_str().expect("utf-8"),
        "--set",
        "schedule.max_steps=100",
        "--quiet",
    ]);
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(msg.contains("diverged"), "{msg}");
    assert!(!msg.contains("panicked"), "{msg}");
    assert_eq!(meta(&run)["step"], 7, "nothing new was saved");
    assert!(!run.join("checkpoints/step-0000008").exists());
    std::fs::remove_dir_all(&dir).ok();
}
