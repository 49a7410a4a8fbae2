#!/usr/bin/env bash
# One training experiment of docs/training.md: a run of the default config from scratch for
# MINUTES minutes with the given --set overrides, then PIT_GAMES paired games at SIMS simulations
# against the fixed yardstick. Appends one Markdown row (setting, steps, games, positions/s,
# W-D-L, score, Elo with its 95% interval, the command) to $OUT/table.md and prints it.
#
#   scripts/experiment.sh NAME [--set SECTION.KEY=VALUE ...]
#
# Environment (defaults in brackets): OWARE [target/release/oware], MINUTES [15], PIT_GAMES [200],
# SIMS [400], REF [models/reference/net-2026-12-01-full60], OUT [experiments], CONFIG
# [configs/default.toml]. Run it with nothing else on the machine: the steps and games a run
# reaches in its minutes are the point of the comparison (give `uptime` beside the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 1)); then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
name=$1
shift
oware=${OWARE:-target/release/oware}
minutes=${MINUTES:-15}
games=${PIT_GAMES:-200}
sims=${SIMS:-400}
ref=${REF:-models/reference/net-2026-12-01-full60}
out=${OUT:-experiments}
config=${CONFIG:-configs/default.toml}
run="$out/$name"
[[ -x "$oware" ]] || { echo "error: $oware is not built (cargo build --release)" >&2; exit 1; }
[[ -e "$run" ]] && { echo "error: $run exists already: choose another NAME or remove it" >&2; exit 1; }
mkdir -p "$out"
echo "$(date -u +%FT%TZ) $name: uptime before: $(uptime)" | tee -a "$out/log.txt"
"$oware" train --config "$config" --run "$run" --set "schedule.minutes=$minutes" "$@" -q \
  >"$run.train.log" 2>&1
echo "$(date -u +%FT%TZ) $name: uptime after training: $(uptime)" | tee -a "$out/log.txt"
meta="$run/checkpoints/latest/meta.json"
[[ -f "$meta" ]] || meta=$(ls -d "$run"/checkpoints/step-*/meta.json | tail -1)
num() { sed -n "s/^  \"$1\": \\([0-9.]*\\),\$/\\1/p" "$meta" | head -1; }
steps=$(num step)
played=$(num games)
positions=$(num positions)
secs=$(sed -n 's/^ *"elapsed_secs": \([0-9.]*\),$/\1/p' "$meta" | tail -1)
pit=$("$oware" pit "mcts:model=$run,sims=$sims" "mcts:model=$ref,sims=$sims" --games "$games" --json \
  2>"$run.pit.log" | sed 's/"[a-z_]*":{[^}]*}//g')
field() { printf '%s' "$pit" | sed -n "s/.*\"$1\":\\([-0-9.e]*\\).*/\\1/p"; }
ci=$(printf '%s' "$pit" | sed -n 's/.*"elo_ci95":\[\([-0-9.e]*\),\([-0-9.e]*\)\].*/\1 \2/p')
read -r lo hi <<<"$ci"
pps=$(awk -v p="$positions" -v s="$secs" 'BEGIN { if (s > 0) printf "%.0f", p / s; else print "?" }')
row=$(awk -v n="$name" -v set="$*" -v st="$steps" -v g="$played" -v pps="$pps" \
  -v w="$(field wins)" -v d="$(field draws)" -v l="$(field losses)" -v sc="$(field score)" \
  -v e="$(field elo)" -v lo="$lo" -v hi="$hi" \
  'BEGIN { printf "| %s | `%s` | %s | %s | %s | %s-%s-%s | %.1f%% | %+.0f [%+.0f, %+.0f] |", n, set, st, g, pps, w, d, l, 100 * sc, e, lo, hi }')
[[ -f "$out/table.md" ]] || {
  echo "| name | overrides | steps | games | positions/s | W-D-L | score | Elo [95%] |"
  echo "|---|---|---|---|---|---|---|---|"
} >"$out/table.md"
echo "$row" | tee -a "$out/table.md"
