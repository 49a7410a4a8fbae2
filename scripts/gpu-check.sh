#!/usr/bin/env bash
# GPU check: measures a release binary built beforehand (`cargo build --release --features wgpu`)
# on this machine's device. Builds nothing and downloads nothing; about 6-7 minutes with the
# default durations. Prints the device found, the inference service's evaluations/s at batch
# 256/1024/4096 (and the direct path's), self-play positions/s with configs/gpu.toml, learner
# steps/s, and the evaluation of a short training run; keeps every JSON figure and the run
# (with its checkpoint) under --out.
#
# usage: scripts/gpu-check.sh [BINARY] [options]
#   BINARY                   the oware binary (default ./target/release/oware)
#   --device D               cpu, wgpu or cuda (default wgpu)
#   --config FILE            the config measured (default configs/gpu.toml)
#   --out DIR                where figures and the run go (default gpu-check-out)
#   --bench-seconds S        seconds per batch size and path in `oware bench` (default 3)
#   --learner-seconds S      seconds of learner steps (default 10)
#   --selfplay-seconds S     seconds of self-play (default 60)
#   --train-minutes M        training run length (default 3)
#   --set SECTION.KEY=VALUE  extra override for self-play and training (repeatable)
#
# On a CPU machine, to check the script itself in about a minute:
#   scripts/gpu-check.sh target/release/oware --device cpu --config configs/tiny.toml \
#     --bench-seconds 0.3 --learner-seconds 1 --selfplay-seconds 5 --train-minutes 0.3
set -euo pipefail

bin=./target/release/oware
device=wgpu
config=configs/gpu.toml
out=gpu-check-out
bench_seconds=3
learner_seconds=10
selfplay_seconds=60
train_minutes=3
sets=()

die() {
    echo "gpu-check: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --device) device="${2:?--device needs a value}"; shift 2 ;;
        --config) config="${2:?--config needs a value}"; shift 2 ;;
        --out) out="${2:?--out needs a value}"; shift 2 ;;
        --bench-seconds) bench_seconds="${2:?}"; shift 2 ;;
        --learner-seconds) learner_seconds="${2:?}"; shift 2 ;;
        --selfplay-seconds) selfplay_seconds="${2:?}"; shift 2 ;;
        --train-minutes) train_minutes="${2:?}"; shift 2 ;;
        --set) sets+=(--set "${2:?--set needs a value}"); shift 2 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) bin="$1"; shift ;;
    esac
done

[ -x "$bin" ] || die "no executable binary at $bin (build it first: cargo build --release --features wgpu)"
[ -f "$config" ] || die "no config file $config"
[ -e "$out" ] && die "$out exists; remove it or choose another --out"
mkdir -p "$out"

# A number field of a one-line JSON object.
field() {
    grep -o "\"$1\":[^,}]*" "$2" | head -n 1 | cut -d: -f2
}

# The same, rounded to a whole number.
num() {
    local v
    v=$(field "$1" "$2")
    printf '%.0f' "${v:-0}" 2>/dev/null || printf '%s' "$v"
}

section() {
    echo
    echo "== $* =="
}

section "binary and device"
"$bin" --version
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
fi
if command -v vulkaninfo >/dev/null 2>&1; then
    vulkaninfo --summary 2>/dev/null | grep -E "deviceName|driverName|apiVersion" || true
fi
echo "config: $config, device: $device, load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown), cores: $(nproc 2>/dev/null || echo unknown)"

section "network throughput (oware bench)"
"$bin" bench --device "$device" --config "$config" --batches 256,1024,4096 \
    --seconds "$bench_seconds" --learner-seconds "$learner_seconds" --json >"$out/bench.json"

section "self-play, $selfplay_seconds s, fresh network"
"$bin" selfplay --model fresh --seconds "$selfplay_seconds" --out "$out/selfplay" \
    --config "$config" --device "$device" ${sets[@]+"${sets[@]}"} --json >"$out/selfplay.json"
echo "positions/s $(num positions_per_sec "$out/selfplay.json"), moves/s $(num moves_per_sec "$out/selfplay.json"), simulations/s $(num sims_per_sec "$out/selfplay.json"), evaluations/s $(num evals_per_sec "$out/selfplay.json")"
echo "inference $(field inference "$out/selfplay.json"), mean network batch $(num mean_network_batch "$out/selfplay.json"), workers $(field workers "$out/selfplay.json") x $(field games_per_worker "$out/selfplay.json") games"

section "training, $train_minutes min, then one evaluation"
# The run stops at the time limit and evaluates once at the end (against the default config's
# opponents, so it compares with a CPU run of the same length). min_samples as the default
# config, so that a short run trains as soon as a CPU run would.
"$bin" train --config "$config" --device "$device" --run "$out/run" --quiet \
    --set schedule.minutes="$train_minutes" --set schedule.max_steps=0 \
    --set replay.min_samples=4000 --set eval.every_steps=100000000 --set eval.games=20 \
    --set 'eval.opponents=["alphabeta:depth=2","alphabeta:depth=4"]' \
    ${sets[@]+"${sets[@]}"} 2>&1 | tail -n 8
[ -f "$out/run/eval.jsonl" ] || die "the training run wrote no evaluation (did it take a learner step?)"
echo "eval.jsonl:"
cat "$out/run/eval.jsonl"
echo "checkpoint: $out/run/checkpoints/$(cat "$out/run/checkpoints/latest")"

section "summary"
echo "device: $(grep -o '"description":"[^"]*"' "$out/bench.json" | cut -d'"' -f4)"
echo "self-play positions/s: $(num positions_per_sec "$out/selfplay.json")"
echo "learner steps/s: $(field steps_per_sec "$out/bench.json") at batch $(field batch_size "$out/bench.json")"
echo "figures in $out/bench.json, $out/selfplay.json, $out/run/eval.jsonl"
