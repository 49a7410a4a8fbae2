//! The `--device wgpu` path run for real, on whatever wgpu adapter the machine has: in CI that
//! is Mesa's software Vulkan driver (lavapipe, Debian's `mesa-vulkan-drivers`), accepted with
//! `OWARE_WGPU_SOFTWARE=1`. It runs the same shaders, buffers, device set-up and error paths
//! as a GPU, slowly. Built only with the `wgpu` feature (`.ci/run`'s second build):
//!
//! ```sh
//! OWARE_WGPU_SOFTWARE=1 cargo test --release --features wgpu --test it wgpu_software::
//! ```
//!
//! The probe names the adapter and refuses a software one without the variable; the network
//! computes on wgpu what it computes on the CPU; a tiny run trains with the learner and the
//! inference service on the device, is killed and resumes, and its checkpoint plays on the CPU;
//! `oware bench` and `scripts/gpu-check.sh` run to the end. No test here hears the Vulkan
//! loader's `XDG_RUNTIME_DIR` complaint.
//!
//! Without any wgpu adapter (no Vulkan driver installed) each test says so loudly and skips,
//! or fails with `OWARE_REQUIRE_SERVICES=1`, as `.ci/run` sets.

use crate::common::{BIN, TINY, meta, missing_service, scratch, text};
use oware_engine::Position;
use oware_model::{DeviceKind, InferenceService, ModelConfig, NetEvaluator, ServiceConfig};
use oware_search::{Evaluation, Evaluator};
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The variable whose absence makes libwayland complain (see `quiet_vulkan_loader` in the
/// binary).
const RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";

/// An evaluation to be overwritten.
const BLANK: Evaluation = Evaluation {
    policy: [0.0; 6],
    value: 0.0,
};

/// The variable that accepts a software rasterizer as the wgpu device.
const SOFTWARE: &str = "OWARE_WGPU_SOFTWARE";

/// `oware ARGS` with the software adapter accepted, no standard input.
fn oware_wgpu(args: &[&str]) -> Output {
    wgpu_command(args).output().expect("runs the binary")
}

/// `oware ARGS` as [`oware_wgpu`] runs it, to spawn. `XDG_RUNTIME_DIR` is removed, as on a
/// server, so that the binary's own answer to the loader's complaint is what is tested.
fn wgpu_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env(SOFTWARE, "1")
        .env_remove(RUNTIME_DIR)
        .stdin(Stdio::null());
    cmd
}

/// What the binary says of the wgpu device (`oware bench`'s `description`), or `None` (after
/// [`missing_service`]) when this machine has no wgpu adapter at all.
fn adapter() -> Option<String> {
    let out = oware_wgpu(&[
        "bench",
        "--device",
        "wgpu",
        "--config",
        TINY,
        "--batches",
        "8",
        "--callers",
        "1",
        "--seconds",
        "0.05",
        "--learner-seconds",
        "0",
        "--json",
    ]);
    assert_quiet(&out);
    if !out.status.success() {
        let msg = text(&out);
        assert!(
            msg.contains("device 'wgpu' failed to start: no GPU adapter found"),
            "not the missing-adapter error:\n{msg}"
        );
        missing_service(&format!(
            "no wgpu adapter on this machine (install mesa-vulkan-drivers and libvulkan1): {msg}"
        ));
        return None;
    }
    let j = json_of(&out);
    Some(j["description"].as_str().expect("description").to_string())
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

/// No line of the Vulkan stack's own reached the terminal: everything on stderr is ours.
fn assert_quiet(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("XDG_RUNTIME_DIR"),
        "the loader's complaint reached the terminal:\n{stderr}"
    );
}

#[test]
fn the_probe_names_the_adapter_and_refuses_software_without_the_variable() {
    let Some(description) = adapter() else {
        return;
    };
    assert!(description.starts_with("wgpu: "), "{description}");
    let software = description.contains("a software rasterizer");
    if software {
        // lavapipe calls itself llvmpipe.
        assert!(description.contains("llvmpipe"), "{description}");
        assert!(description.contains("(vulkan, Cpu,"), "{description}");
    }
    // The same command without the variable: a software adapter is refused, with the advice.
    let out = Command::new(BIN)
        .args(["bench", "--device", "wgpu", "--config", TINY, "--json"])
        .env_remove(SOFTWARE)
        .env_remove(RUNTIME_DIR)
        .stdin(Stdio::null())
        .output()
        .expect("runs the binary");
    assert_quiet(&out);
    let msg = text(&out);
    if software {
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(!msg.contains("panicked"), "{msg}");
        for needle in [
            "device 'wgpu' failed to start: no GPU adapter found",
            "only the software rasterizer llvmpipe",
            "slower than --device cpu",
            "set OWARE_WGPU_SOFTWARE=1 to use it anyway",
        ] {
            assert!(msg.contains(needle), "no '{needle}' in\n{msg}");
        }
    } else {
        assert!(out.status.success(), "a GPU needs no variable:\n{msg}");
    }
}

/// Live positions (each with a legal move) of a few random games: openings, middle games,
/// sparse endings.
fn positions(n: usize) -> Vec<Position> {
    let mut out = Vec::with_capacity(n);
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    while out.len() < n {
        let mut pos = Position::start();
        loop {
            let moves = pos.legal_moves();
            if moves.is_empty() || out.len() == n {
                break;
            }
            out.push(pos);
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let pick = moves.as_slice()[(state % moves.len() as u64) as usize];
            pos = pos.play(pick).expect("a legal move").0;
        }
    }
    out
}

/// The network's outputs on wgpu are the CPU backend's on the same weights, within `1e-4` of
/// the outputs' scale. They cannot be bit-equal: the 256-wide dot products are summed in
/// another order (the shaders' tiled reductions against flex's SIMD lanes), and f32 sums
/// rounded in another order differ by about `sqrt(256) * 2^-24` of the summed magnitude per
/// layer, some `1e-6`, over four layers; `1e-4` is a hundred times that, and far below
/// anything that changes a search (a policy prior or a value in the fourth decimal).
#[test]
fn the_network_computes_on_wgpu_what_it_computes_on_the_cpu() {
    let gpu = match oware_model::device(DeviceKind::Wgpu) {
        Ok(gpu) => gpu,
        Err(e) => {
            missing_service(&format!(
                "no wgpu device in this test process ({e}); with Mesa's lavapipe, run the test \
                 with {SOFTWARE}=1"
            ));
            return;
        }
    };
    // The azg network's shape: 256 wide, 3 blocks.
    let config = ModelConfig::new().with_hidden(256).with_blocks(3);
    let cpu = NetEvaluator::random(&config, &oware_model::Device::flex());
    let on_gpu = NetEvaluator::new(cpu.model(), cpu.config().clone(), &gpu);
    let pos = positions(300);
    let a = cpu.raw_outputs(&pos).expect("cpu outputs");
    let b = on_gpu.raw_outputs(&pos).expect("wgpu outputs");
    assert_eq!(a.len(), pos.len() * config.head_outputs());
    assert_eq!(a.len(), b.len());
    let scale = a.iter().fold(1.0f32, |m, x| m.max(x.abs()));
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    eprintln!("largest difference {worst:e} (outputs up to {scale})");
    assert!(worst <= 1e-4 * scale, "{worst} > 1e-4 x {scale}");

    // Through the inference service on the device, three callers at once: the same answers as
    // the CPU's direct evaluation, each caller's rows its own.
    let service =
        InferenceService::start(on_gpu.clone(), ServiceConfig::default()).expect("service thread");
    let mut expected = vec![BLANK; pos.len()];
    cpu.evaluate(&pos, &mut expected).expect("cpu evaluations");
    std::thread::scope(|s| {
        let handles: Vec<_> = pos
            .chunks(100)
            .zip(expected.chunks(100))
            .map(|(chunk, want)| {
                let client = service.client();
                s.spawn(move || {
                    let mut got = vec![BLANK; chunk.len()];
                    client
                        .evaluate(chunk, &mut got)
                        .expect("service evaluations");
                    for (g, w) in got.iter().zip(want) {
                        assert!((g.value - w.value).abs() <= 1e-4, "{g:?} vs {w:?}");
                        for (p, q) in g.policy.iter().zip(&w.policy) {
                            assert!((p - q).abs() <= 1e-4, "{g:?} vs {w:?}");
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("caller");
        }
    });
}

#[test]
fn a_tiny_run_trains_on_wgpu_resumes_after_a_kill_and_plays_on_the_cpu() {
    if adapter().is_none() {
        return;
    }
    let dir = scratch("wgpu-train");
    let run = dir.join("run");
    let run_s = run.to_str().expect("utf-8");
    // A run that goes on until killed: checkpoints every 3 steps, no evaluations.
    let mut child = wgpu_command(&[
        "train",
        "--config",
        TINY,
        "--run",
        run_s,
        "--device",
        "wgpu",
        "--set",
        "schedule.max_steps=1000000",
        "--set",
        "schedule.checkpoint_every_steps=3",
        "--set",
        "eval.every_steps=0",
        "--quiet",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("starts");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(300) {
        if run.join("checkpoints/latest").is_file() && meta(&run)["step"].as_u64().unwrap_or(0) >= 6
        {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().expect("output");
            panic!("the run stopped by itself ({status}):\n{}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    let out = child.wait_with_output().expect("reaped");
    let first = text(&out);
    assert_quiet(&out);
    assert!(first.contains(" on wgpu "), "{first}");
    // `auto` is the service on a GPU backend: the learner and the inference thread both run on
    // the device.
    assert!(first.contains("(service inference)"), "{first}");
    let step = meta(&run)["step"]
        .as_u64()
        .expect("a checkpoint was written");
    assert!(step >= 6, "only reached step {step}:\n{first}");

    // Resumed on the device after the kill, to 6 steps more, evaluating at the end.
    let target = format!("schedule.max_steps={}", step + 6);
    let out = oware_wgpu(&[
        "train",
        "--resume",
        run_s,
        "--device",
        "wgpu",
        "--set",
        &target,
        "--set",
        "eval.every_steps=100",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_quiet(&out);
    assert!(text(&out).contains("resuming"), "{}", text(&out));
    assert_eq!(meta(&run)["step"].as_u64(), Some(step + 6));
    let evals = std::fs::read_to_string(run.join("eval.jsonl")).expect("eval.jsonl");
    assert!(evals.contains("\"opponent\":\"random\""), "{evals}");

    // The checkpoint trained on wgpu loads and plays on the CPU (no variable, no GPU asked).
    let spec = format!("mcts:model={run_s},sims=8");
    let out = Command::new(BIN)
        .args([
            "pit", &spec, "random", "--games", "4", "--device", "cpu", "--json",
        ])
        .env_remove(SOFTWARE)
        .stdin(Stdio::null())
        .output()
        .expect("runs the binary");
    assert!(out.status.success(), "{}", text(&out));
    let j = json_of(&out);
    let games = ["wins", "draws", "losses"]
        .iter()
        .map(|k| j[k].as_u64().unwrap_or_else(|| panic!("no {k} in {j}")))
        .sum::<u64>();
    assert_eq!(games, 4, "{j}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_on_wgpu_prints_its_figures() {
    if adapter().is_none() {
        return;
    }
    // `--device=wgpu` (one argument) gets the binary's XDG_RUNTIME_DIR too.
    let out = oware_wgpu(&[
        "bench",
        "--device=wgpu",
        "--config",
        TINY,
        "--batches",
        "64,256",
        "--callers",
        "2",
        "--seconds",
        "0.3",
        "--learner-seconds",
        "0.5",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_quiet(&out);
    let j = json_of(&out);
    assert_eq!(j["device"], "wgpu");
    for path in ["service", "direct"] {
        let rows = j[path].as_array().expect("rows");
        assert_eq!(rows.len(), 2, "{j}");
        for row in rows {
            assert!(row["evals_per_sec"].as_f64().expect("rate") > 0.0, "{row}");
        }
    }
    assert!(
        j["learner"]["steps_per_sec"].as_f64().expect("rate") > 0.0,
        "{j}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("device: wgpu: "), "{stderr}");
    assert!(stderr.contains("learner: "), "{stderr}");
}

#[test]
fn the_gpu_check_script_runs_on_wgpu() {
    if adapter().is_none() {
        return;
    }
    let dir = scratch("gpu-check-wgpu");
    let out = Command::new("bash")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "scripts/gpu-check.sh",
            BIN,
            "--device",
            "wgpu",
            "--config",
            "configs/tiny.toml",
            "--out",
            dir.join("out").to_str().expect("utf-8"),
            "--bench-seconds",
            "0.2",
            "--learner-seconds",
            "0.3",
            "--selfplay-seconds",
            "3",
            "--train-minutes",
            "0.3",
            "--set",
            "eval.sims=4",
            // The first learner step early, however slow the software device's self-play.
            "--set",
            "replay.min_samples=200",
        ])
        .env(SOFTWARE, "1")
        .env_remove(RUNTIME_DIR)
        .stdin(Stdio::null())
        .output()
        .expect("runs bash");
    let msg = text(&out);
    assert!(out.status.success(), "{msg}");
    assert_quiet(&out);
    for needle in [
        "device: wgpu: ",
        "batch    256: service",
        "batch   4096: service",
        "learner: ",
        "self-play positions/s: ",
        "\"opponent\":\"alphabeta:depth=4\"",
        "checkpoint: ",
    ] {
        assert!(msg.contains(needle), "no '{needle}' in\n{msg}");
    }
    let selfplay: Value = serde_json::from_str(
        std::fs::read_to_string(dir.join("out/selfplay.json"))
            .expect("selfplay.json")
            .trim(),
    )
    .expect("json");
    assert_eq!(selfplay["device"], "wgpu", "{selfplay}");
    assert_eq!(selfplay["inference"], "service", "{selfplay}");
    std::fs::remove_dir_all(&dir).ok();
}
