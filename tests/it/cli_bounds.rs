//! Every bounded input of the binary: a value above its bound (`engine/src/limits.rs`) is a
//! clear error naming the bound, before any work starts, and `--help` states each bound.

use crate::common::{BIN, oware, scratch, text};
use oware_engine::bounds::{MAX_DEPTH, MAX_GAMES, MAX_MILLIS, MAX_SIMS, MAX_THREADS};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `oware ARGS` expecting a failure whose message contains `want`.
fn fails_with(args: &[&str], want: &str) {
    let out = oware(args);
    assert!(!out.status.success(), "{args:?} succeeded: {}", text(&out));
    assert!(text(&out).contains(want), "{args:?}: {}", text(&out));
}

#[test]
fn too_large_counts_on_the_command_line_are_errors() {
    let games = (MAX_GAMES + 1).to_string();
    let threads = (MAX_THREADS + 1).to_string();
    let range = |max: u32| format!("1..={max}");
    fails_with(
        &["pit", "random", "random", "--games", &games],
        &range(MAX_GAMES),
    );
    fails_with(
        &["pit", "random", "random", "--threads", &threads],
        &range(MAX_THREADS),
    );
    let dir = scratch("bounds-selfplay");
    let out = dir.join("out");
    let out = out.to_str().expect("utf-8 path");
    fails_with(
        &[
            "selfplay", "--model", "fresh", "--games", &games, "--out", out,
        ],
        &range(MAX_GAMES),
    );
    assert!(!dir.join("out").exists(), "nothing is written");
}

#[test]
fn too_large_spec_options_are_errors() {
    let sims = format!("mcts:rollouts,sims={}", MAX_SIMS + 1);
    let depth = format!("alphabeta:depth={}", MAX_DEPTH + 1);
    let ms = format!("alphabeta:ms={}", MAX_MILLIS + 1);
    fails_with(&["pit", &sims, "random"], &format!("1..={MAX_SIMS}"));
    fails_with(&["pit", "random", &depth], &format!("1..={MAX_DEPTH}"));
    fails_with(&["engine", &ms], &format!("1..={MAX_MILLIS}"));
}

#[test]
fn too_large_config_values_are_errors_naming_the_key() {
    let dir = scratch("bounds-train");
    let run = dir.join("run");
    let run = run.to_str().expect("utf-8 path");
    for (set, key) in [
        (format!("mcts.sims={}", MAX_SIMS + 1), "mcts.sims"),
        (
            format!("selfplay.cheap_sims={}", MAX_SIMS + 1),
            "selfplay.cheap_sims",
        ),
        (format!("eval.sims={}", MAX_SIMS + 1), "eval.sims"),
        (format!("eval.games={}", MAX_GAMES + 1), "eval.games"),
        (
            format!("selfplay.workers={}", MAX_THREADS + 1),
            "selfplay.workers",
        ),
        // 65536 games of 1000 simulations in flight in one worker.
        (
            "selfplay.games_per_worker=65536".to_string(),
            "selfplay.games_per_worker",
        ),
    ] {
        let args = [
            "train",
            "--config",
            "configs/tiny.toml",
            "--run",
            run,
            "--set",
            "mcts.sims=1000",
            "--set",
            &set,
            "--quiet",
        ];
        fails_with(&args, key);
    }
    assert!(!dir.join("run").exists(), "nothing is written");
}

#[test]
fn engine_go_bounds_are_error_lines() {
    let script = format!(
        "go sims {}\ngo depth {}\ngo ms {}\ngo depth 1\n",
        MAX_SIMS + 1,
        MAX_DEPTH + 1,
        MAX_MILLIS + 1
    );
    let mut child = Command::new(BIN)
        .args(["engine", "alphabeta:depth=2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(script.as_bytes()).expect("write");
    drop(stdin);
    let out = child.wait_with_output().expect("finishes");
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    // `go` prints its `info` lines (one per completed iteration) before `bestmove`.
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("info ")).collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(
        stdout.contains("info depth 1 "),
        "the depth-1 search reports its iteration: {stdout}"
    );
    assert!(lines[0].contains(&format!("1..={MAX_SIMS}")), "{stdout}");
    assert!(lines[1].contains(&format!("1..={MAX_DEPTH}")), "{stdout}");
    assert!(lines[2].contains(&format!("1..={MAX_MILLIS}")), "{stdout}");
    assert!(lines[3].starts_with("bestmove "), "{stdout}");
}

#[test]
fn help_states_the_bounds() {
    let help = |cmd: &str| text(&oware(&[cmd, "--help"]));
    let pit = help("pit");
    assert!(pit.contains(&format!("at most {MAX_GAMES}")), "{pit}");
    assert!(pit.contains(&format!("at most {MAX_THREADS}")), "{pit}");
    let selfplay = help("selfplay");
    assert!(
        selfplay.contains(&format!("at most {MAX_GAMES}")),
        "{selfplay}"
    );
    let engine = help("engine");
    for n in [MAX_SIMS as u64, MAX_DEPTH as u64, MAX_MILLIS] {
        assert!(engine.contains(&format!("up to {n}")), "{engine}");
    }
}
