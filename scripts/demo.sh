#!/usr/bin/env bash
# make demo: a whole gtrain cluster on this machine. Starts `gtraind agent --dev` in a
# temporary directory, converts the bundled UCI housing data, trains fit-a-line with
# 2 pservers and 2 trainers in sync mode, prints the result, and stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
WORK=$(mktemp -d -t gtrain-demo.XXXXXX)
AGENT_PID=""
NAME=demo
. scripts/devagent.sh

cleanup() {
  local rc=$?
  stop_agent
  left=$(pgrep -f -- "--data-dir $WORK/data" || true)
  if [ -n "$left" ]; then
    echo "demo: processes left behind, killing: $left" >&2
    kill -KILL $left 2>/dev/null || true
    rc=1
  fi
  finish_work $rc
}
trap cleanup EXIT

start_agent demo-node
"$BIN/gctl" node list

say "converting UCI housing into record shards"
mkdir -p "$WORK/job/data"
"$BIN/gctl" data convert --format whitespace --input examples/data/uci_housing/housing.data \
  --out "$WORK/job/data/housing" --shards 4 --test-fraction 0.2 --seed 1 --normalize
cp examples/fit_a_line.yaml "$WORK/job/fit_a_line.yaml"

say "training fit-a-line: sync mode, 2 pservers, 2 trainers, 100 passes"
"$BIN/gctl" job start -f "$WORK/job/fit_a_line.yaml" --passes 100 &
MONITOR=$!

step_of() { "$BIN/gctl" job status fit-a-line -o json 2>/dev/null | sed -n 's/^  "step": \([0-9]*\),$/\1/p'; }
pid_of() { "$BIN/gctl" job workers fit-a-line | awk -v w="$1" '$1 == w && $4 == "running" {print $3}'; }
wait_step() {
  for _ in $(seq 1 600); do
    s=$(step_of); [ -n "$s" ] && [ "$s" -ge "$1" ] && return 0
    kill -0 "$MONITOR" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
kill_worker() {
  local pid
  pid=$(pid_of "$1")
  if [ -z "$pid" ]; then echo "demo: $1 is not running; skipping the kill" >&2; return; fi
  say "SIGKILL $1 (pid $pid) at step $(step_of)"
  kill -KILL "$pid"
}
if wait_step 300; then kill_worker pserver-1; fi
if wait_step 600; then kill_worker trainer-0; fi
wait "$MONITOR"

say "recovery: events and restarts"
"$BIN/gctl" job status fit-a-line | sed -n '/^Events/,$p'
say "the job's workers"
"$BIN/gctl" job workers fit-a-line
say "status"
"$BIN/gctl" job status fit-a-line
test_loss=$("$BIN/gctl" job status fit-a-line -o json | sed -n 's/.*"test_loss": *\([0-9.eE+-]*\).*/\1/p' | head -1)
say "final test loss (MSE): $test_loss"
echo "model: $(ls -d "$WORK"/data/jobs/fit-a-line/model/latest)/manifest.json"
"$BIN/gctl" job logs fit-a-line -w master -n 5
