//! The GPU-oriented paths, run on the CPU with the real binary: self-play and training through
//! the inference service, `oware bench`, `--device wgpu` without a usable GPU, and the GPU
//! check script itself (short durations).

use crate::common::{BIN, oware, scratch, text};
use serde_json::Value;

use crate::common::TINY;

fn json_of(out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

#[test]
fn selfplay_through_the_service_merges_the_workers_batches() {
    let dir = scratch("service-selfplay");
    let out = oware(&[
        "selfplay",
        "--model",
        "fresh",
        "--games",
        "6",
        "--out",
        dir.join("games").to_str().expect("utf-8"),
        "--config",
        TINY,
        "--set",
        "selfplay.workers=2",
        // 2 x 3 slots for 6 games: both workers play from the start.
        "--set",
        "selfplay.games_per_worker=3",
        "--set",
        "selfplay.inference=service",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let j = json_of(&out);
    assert_eq!(j["inference"], "service");
    assert_eq!(j["games"], 6);
    assert!(j["positions_per_sec"].as_f64().expect("rate") > 0.0);
    let per_worker = j["mean_batch"].as_f64().expect("mean batch");
    let merged = j["mean_network_batch"].as_f64().expect("merged batch");
    assert!(
        merged > per_worker,
        "the service merged the two workers' batches: {merged} vs {per_worker}"
    );
    let records = std::fs::read_to_string(dir.join("games/games.txt")).expect("records");
    assert_eq!(records.lines().count(), 6);

    // A time limit instead of a game budget; the default on the CPU is per-worker inference.
    let out = oware(&[
        "selfplay",
        "--model",
        "fresh",
        "--seconds",
        "1",
        "--out",
        dir.join("timed").to_str().expect("utf-8"),
        "--config",
        TINY,
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let j = json_of(&out);
    assert_eq!(j["inference"], "per_worker");
    assert!(j["moves_per_sec"].as_f64().expect("rate") > 0.0);
    let secs = j["seconds"].as_f64().expect("seconds");
    assert!((1.0..30.0).contains(&secs), "{secs}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn training_through_the_service_checkpoints() {
    let dir = scratch("service-train");
    let run = dir.join("run");
    let out = oware(&[
        "train",
        "--config",
        TINY,
        "--run",
        run.to_str().expect("utf-8"),
        "--set",
        "selfplay.inference=service",
        "--set",
        "selfplay.workers=2",
        "--set",
        "schedule.max_steps=12",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("(service inference)"), "{}", text(&out));
    let latest = std::fs::read_to_string(run.join("checkpoints/latest")).expect("latest");
    assert_eq!(latest.trim(), "step-0000012");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_reports_the_service_the_direct_path_and_the_learner() {
    let out = oware(&[
        "bench",
        "--device",
        "cpu",
        "--config",
        TINY,
        "--batches",
        "64,256",
        "--callers",
        "2",
        "--seconds",
        "0.2",
        "--learner-seconds",
        "0.2",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let j = json_of(&out);
    assert_eq!(j["device"], "cpu");
    assert!(j["description"].as_str().expect("text").starts_with("cpu"));
    for (path, sizes) in [("service", [64, 256]), ("direct", [64, 256])] {
        let rows = j[path].as_array().expect("rows");
        assert_eq!(rows.len(), 2);
        for (row, size) in rows.iter().zip(sizes) {
            assert_eq!(row["batch"], size);
            assert!(row["evals_per_sec"].as_f64().expect("rate") > 0.0, "{row}");
        }
    }
    // Two callers of 128 positions each: the service's network batch is their merged 256 (or
    // less, when one caller's request waited past the deadline).
    let merged = j["service"][1]["mean_network_batch"]
        .as_f64()
        .expect("mean");
    assert!((128.0..=256.0).contains(&merged), "{merged}");
    assert_eq!(j["learner"]["batch_size"], 64);
    assert!(j["learner"]["steps_per_sec"].as_f64().expect("rate") > 0.0);
    // The human lines went to stderr.
    assert!(String::from_utf8_lossy(&out.stderr).contains("learner:"));
}

/// Without a usable GPU (this build without the `wgpu` feature, or a machine without a
/// driver), `--device wgpu` is a clear error, not a panic. On a machine with a GPU and the
/// feature, the bench runs on it instead.
#[test]
fn wgpu_without_a_gpu_is_a_clear_error() {
    let dir = scratch("wgpu-error");
    let out = oware(&[
        "train",
        "--config",
        TINY,
        "--run",
        dir.join("run").to_str().expect("utf-8"),
        "--device",
        "wgpu",
        "--quiet",
    ]);
    let msg = text(&out);
    if cfg!(feature = "wgpu") && out.status.success() {
        eprintln!("a GPU is present: the tiny run trained on it");
    } else {
        assert!(!out.status.success(), "{msg}");
        assert!(!msg.contains("panicked"), "{msg}");
        if cfg!(feature = "wgpu") {
            assert!(
                msg.contains("device 'wgpu' failed to start: no GPU adapter found")
                    && msg.contains("Vulkan"),
                "{msg}"
            );
        } else {
            assert!(msg.contains("--features wgpu"), "{msg}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_gpu_check_script_runs_on_the_cpu() {
    let dir = scratch("gpu-check");
    let out = std::process::Command::new("bash")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "scripts/gpu-check.sh",
            BIN,
            "--device",
            "cpu",
            "--config",
            "configs/tiny.toml",
            "--out",
            dir.join("out").to_str().expect("utf-8"),
            "--bench-seconds",
            "0.2",
            "--learner-seconds",
            "0.3",
            "--selfplay-seconds",
            "2",
            "--train-minutes",
            "0.15",
            "--set",
            "eval.sims=4",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs bash");
    let msg = text(&out);
    assert!(out.status.success(), "{msg}");
    for needle in [
        "device: cpu (burn flex backend",
        "batch    256: service",
        "batch   4096: service",
        "learner: ",
        "self-play positions/s: ",
        "\"opponent\":\"alphabeta:depth=4\"",
        "checkpoint: ",
    ] {
        assert!(msg.contains(needle), "no '{needle}' in\n{msg}");
    }
    let bench: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("out/bench.json")).expect("bench.json"),
    )
    .expect("json");
    assert_eq!(bench["service"].as_array().expect("rows").len(), 3);
    // An existing output folder is refused (nothing is overwritten).
    let again = std::process::Command::new("bash")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "scripts/gpu-check.sh",
            BIN,
            "--device",
            "cpu",
            "--out",
            dir.join("out").to_str().expect("utf-8"),
        ])
        .output()
        .expect("runs bash");
    assert!(!again.status.success());
    assert!(text(&again).contains("exists"), "{}", text(&again));
    std::fs::remove_dir_all(&dir).ok();
}
