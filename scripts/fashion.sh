#!/usr/bin/env bash
# make fashion: Fashion-MNIST on a whole gtrain cluster on this machine. Converts Debian's
# dataset-fashion-mnist (gzip IDX, /usr/share/datasets/fashion-mnist) into
# examples/data/fashion (training set normalised, the official t10k test set with the
# training set's statistics), starts `gtraind agent --dev` in a temporary directory, runs
# examples/fashion_mnist_softmax.yaml and examples/fashion_mnist_mlp.yaml to the end, and
# reports each job's test accuracy on t10k and its training throughput (records/s).
# Writes bench/fashion.json in the format of bench/results.json and each job's loss and
# accuracy curves to bench/fashion-JOB.png (gctl job plot).
# FASHION_JOBS="softmax" runs a subset; FASHION_PASSES=N overrides the examples' passes.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/bin
SRC=${FASHION_SRC:-/usr/share/datasets/fashion-mnist}
OUT=examples/data/fashion
JOBS=${FASHION_JOBS:-softmax mlp}
RESULTS=bench/fashion.json
WORK=$(mktemp -d -t gtrain-fashion.XXXXXX)
AGENT_PID=""
NAME=fashion
. scripts/devagent.sh

trap 'finish_work $?' EXIT

for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [ -f "$SRC/$f" ] || { echo "fashion: $SRC/$f is missing: apt-get install dataset-fashion-mnist" >&2; exit 2; }
done

say "converting Fashion-MNIST ($SRC) into $OUT"
rm -f "$OUT"/fashion-*
"$BIN/gctl" data convert --format idx --input "$SRC/train-images-idx3-ubyte.gz" \
  --labels "$SRC/train-labels-idx1-ubyte.gz" --out "$OUT/fashion" --shards 4 --normalize
"$BIN/gctl" data convert --format idx --input "$SRC/t10k-images-idx3-ubyte.gz" \
  --labels "$SRC/t10k-labels-idx1-ubyte.gz" --out "$OUT/fashion" --shards 1 \
  --part test --stats "$OUT/fashion-stats.json"

start_agent fashion-node

# field JSON KEY: a number of gctl's status JSON (null when absent).
field() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$1" "$2"; }

entries=()
for job in $JOBS; do
  spec=examples/fashion_mnist_$job.yaml
  name=fashion-$job
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
  entries+=("{\"name\": \"fashion_${job}_accuracy\", \"value\": $acc, \"unit\": \"fraction\", \"ceiling\": 0, \"ratio\": 0}")
  entries+=("{\"name\": \"fashion_${job}_throughput\", \"value\": $rps, \"unit\": \"records/s\", \"ceiling\": 0, \"ratio\": 0}")
done

say "Fashion-MNIST results (test set: the official t10k files)"
cat "$WORK/summary"
{ echo "["; (IFS=$'\n'; echo "${entries[*]}") | sed '$!s/$/,/' | sed 's/^/  /'; echo "]"; } >"$RESULTS"
echo "wrote $RESULTS"
