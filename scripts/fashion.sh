#!/usr/bin/env bash
# make fashion: Fashion-MNIST on a whole gtrain cluster on this machine. Converts Debian's
# dataset-fashion-mnist (gzip IDX, /usr/share/datasets/fashion-mnist) into
# examples/data/fashion (training set normalised, the official t10k test set with the
# training set's statistics), starts `gtraind agent --dev` in a temporary directory, runs
# examples/fashion_mnist_softmax.yaml, examples/fashion_mnist_mlp.yaml and
# examples/fashion_mnist_torch_cnn.yaml (examples/program/torch_cnn.py through the PyTorch
# adapter, 2 trainers; its workspace is examples/program) to the end, and reports each job's
# test accuracy on t10k and its training throughput (records/s).
# After the CNN job it trains the same CNN in plain PyTorch (scripts/fashion_torch.py
# torch_cnn: the same module, seed, initial parameters, optimizer, global batch and passes,
# on the same normalised data) and compares the two accuracies on t10k after the last pass
# against issue 16's goal, |gtrain - PyTorch| <= 0.01; a miss is printed loudly and the
# script exits 1 once the results are written.
# Writes bench/fashion.json in the format of bench/results.json and each job's loss and
# accuracy curves to bench/fashion-JOB.png (gctl job plot).
# FASHION_JOBS="softmax" runs a subset (softmax, mlp, torch_cnn); FASHION_PASSES=N overrides
# the examples' passes (the CNN's PyTorch reference trains the same N).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
SRC=${FASHION_SRC:-/usr/share/datasets/fashion-mnist}
OUT=examples/data/fashion
JOBS=${FASHION_JOBS:-softmax mlp torch_cnn}
GOAL=0.01  # issue 16: the CNN's t10k accuracy within this of plain PyTorch's
RESULTS=bench/fashion.json
WORK=$(mktemp -d -t gtrain-fashion.XXXXXX)
AGENT_PID=""
NAME=fashion
. scripts/devagent.sh

trap 'finish_work $?' EXIT

for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [ -f "$SRC/$f" ] || { echo "fashion: $SRC/$f is missing: apt-get install dataset-fashion-mnist" >&2; exit 2; }
done
# cnn_missing: why the CNN job cannot run here, or nothing. It runs a model program, which
# the dev agent isolates (its own uid and cgroups) and refuses to run where it cannot: as root
# it can.
cnn_missing() {
  if ! /usr/bin/python3 -c 'import torch, numpy, yaml' 2>/dev/null; then
    echo "torch_cnn needs /usr/bin/python3 with torch, numpy and yaml (apt-get install python3-torch python3-numpy python3-yaml)"
  elif [ "$(id -u)" -ne 0 ]; then
    echo "torch_cnn runs a model program, which the dev agent isolates only as root: run make fashion as root"
  fi
}
wanted=$JOBS
JOBS=""
for job in $wanted; do
  [ -f "examples/fashion_mnist_$job.yaml" ] || { echo "fashion: no examples/fashion_mnist_$job.yaml (FASHION_JOBS: softmax mlp torch_cnn)" >&2; exit 2; }
  if [ "$job" = torch_cnn ] && why=$(cnn_missing) && [ -n "$why" ]; then
    # Asked for by name: refused before anything trains. By default: the others still run.
    [ -n "${FASHION_JOBS:-}" ] && { echo "fashion: $why" >&2; exit 2; }
    echo "fashion: torch_cnn NOT MEASURED: $why (FASHION_JOBS=\"softmax mlp\" runs the others alone)" >&2
    continue
  fi
  JOBS="$JOBS $job"
done

say "converting Fashion-MNIST ($SRC) into $OUT"
rm -f "$OUT"/fashion-*
"$BIN/gctl" data convert --format idx --input "$SRC/train-images-idx3-ubyte.gz" \
  --labels "$SRC/train-labels-idx1-ubyte.gz" --out "$OUT/fashion" --shards 4 --normalize
"$BIN/gctl" data convert --format idx --input "$SRC/t10k-images-idx3-ubyte.gz" \
  --labels "$SRC/t10k-labels-idx1-ubyte.gz" --out "$OUT/fashion" --shards 1 \
  --part test --stats "$OUT/fashion-stats.json"

# examples/fashion_mnist_torch_cnn.yaml asks for 2 trainers x 1 cpu (one torch thread each) and
# 2 pservers x 0.25, with the master 2.6 cpu: more than a 2-core machine offers, where the job
# would wait for placement for ever. There the agent offers 3 cpu, so that the job runs with its
# own resources, its processes sharing the cores (its accuracy does not depend on it).
agent_flags=()
if [[ " $JOBS " == *" torch_cnn "* ]] && [ "$(nproc)" -lt 3 ]; then agent_flags=(--cpu 3); fi
start_agent fashion-node "${agent_flags[@]}"

# field JSON KEY: a number of gctl's status JSON (null when absent).
field() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$1" "$2"; }

entries=()
missed=""
for job in $JOBS; do
  spec=examples/fashion_mnist_$job.yaml
  name=fashion-${job//_/-}  # job names have no '_'
  extra=()
  [ -n "${FASHION_PASSES:-}" ] && extra=(--passes "$FASHION_PASSES")
  say "training $spec"
  start=$(date +%s.%N)
  "$BIN/gctl" job start -f "$spec" --name "$name" "${extra[@]}"
  end=$(date +%s.%N)
  "$BIN/gctl" job status "$name" -o json >"$WORK/$name.json"
  "$BIN/gctl" job plot "$name" --out "bench/fashion-$job.png"
  acc=$(field "$WORK/$name.json" 'metrics["test_accuracy"]')
  loss=$(field "$WORK/$name.json" 'metrics["test_loss"]')
  samples=$(field "$WORK/$name.json" 'sum(samples_applied)')
  rps=$(/usr/bin/python3 -c "print(round($samples / ($end - $start), 1))")
  secs=$(/usr/bin/python3 -c "print(round($end - $start, 1))")
  printf '%-18s test accuracy %s  test loss %s  %s records in %ss: %s records/s\n' "$name" "$acc" "$loss" "$samples" "$secs" "$rps" | tee -a "$WORK/summary"
  if [ "$job" != torch_cnn ]; then
    entries+=("{\"name\": \"fashion_${job}_accuracy\", \"value\": $acc, \"unit\": \"fraction\", \"ceiling\": 0, \"ratio\": 0}")
    entries+=("{\"name\": \"fashion_${job}_throughput\", \"value\": $rps, \"unit\": \"records/s\", \"ceiling\": 0, \"ratio\": 0}")
    continue
  fi

  # The CNN against plain PyTorch: the same passes as the job just ran (its status says).
  passes=$(field "$WORK/$name.json" 'passes')
  say "plain PyTorch: torch_cnn.py's CNN, $passes passes, one process on one thread (scripts/fashion_torch.py)"
  tstart=$(date +%s.%N)
  /usr/bin/python3 scripts/fashion_torch.py --passes "$passes" --json "$WORK/torch-$job.json" torch_cnn
  tend=$(date +%s.%N)
  tsecs=$(/usr/bin/python3 -c "print(round($tend - $tstart, 1))")
  tacc=$(field "$WORK/torch-$job.json" 'torch_cnn["accuracy"][-1]')
  gpass=$(field "$WORK/$name.json" '" ".join("%.4f" % h["test_accuracy"] for h in history)')
  tpass=$(field "$WORK/torch-$job.json" '" ".join("%.4f" % a for a in torch_cnn["accuracy"])')
  read -r diff verdict <<<"$(/usr/bin/python3 -c "d = $acc - $tacc; print('%+.4f' % d, 'met' if abs(d) <= $GOAL + 1e-9 else 'MISSED')")"
  {
    printf '%-18s plain PyTorch test accuracy %s in %ss (%s passes, one thread)\n' "$name" "$tacc" "$tsecs" "$passes"
    printf '%-18s   per pass: gtrain %s\n%-18s            PyTorch %s\n' "" "$gpass" "" "$tpass"
    printf '%-18s   gtrain - PyTorch = %s: goal |diff| <= %s %s\n' "" "$diff" "$GOAL" "$verdict"
  } | tee -a "$WORK/summary"
  [ "$verdict" = met ] || missed="$missed $name"
  # The accuracy's "ceiling" is the peer's figure (as bench's againstPeer ones); the
  # difference's is the goal, its ratio |diff| / goal (at most 1 when met).
  ratio=$(/usr/bin/python3 -c "print(round($acc / $tacc, 4))")
  gratio=$(/usr/bin/python3 -c "print(round(abs($acc - $tacc) / $GOAL, 4))")
  entries+=("{\"name\": \"fashion_${job}_accuracy\", \"value\": $acc, \"unit\": \"fraction\", \"ceiling\": $tacc, \"ratio\": $ratio}")
  entries+=("{\"name\": \"fashion_${job}_throughput\", \"value\": $rps, \"unit\": \"records/s\", \"ceiling\": 0, \"ratio\": 0}")
  entries+=("{\"name\": \"fashion_${job}_pytorch_accuracy\", \"value\": $tacc, \"unit\": \"fraction\", \"ceiling\": 0, \"ratio\": 0}")
  entries+=("{\"name\": \"fashion_${job}_accuracy_diff\", \"value\": ${diff#+}, \"unit\": \"fraction\", \"ceiling\": $GOAL, \"ratio\": $gratio}")
done

say "Fashion-MNIST results (test set: the official t10k files)"
cat "$WORK/summary"
{ echo "["; (IFS=$'\n'; echo "${entries[*]}") | sed '$!s/$/,/' | sed 's/^/  /'; echo "]"; } >"$RESULTS"
echo "wrote $RESULTS"
if [ -n "$missed" ]; then
  printf '\n\033[1;31m!! GOAL MISSED:%s: test accuracy differs from plain PyTorch by more than %s (see above)\033[0m\n' "$missed" "$GOAL" >&2
  exit 1
fi
