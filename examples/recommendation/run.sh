#!/usr/bin/env bash
# make recommendation: the recommender of this directory on a whole gtrain cluster on this
# machine. Writes MovieLens-shaped ratings from planted user and movie factors (gctl data
# synth movielens) — or reads the real ml-1m files when ML1M=DIR names their directory —,
# converts them into record shards (examples/data/ml, git-ignored), starts `gtraind agent
# --dev` in a temporary directory, trains recommendation.yaml (or recommendation_torch.yaml
# with `./run.sh torch`), and prints the test RMSE after each pass beside the planted
# optimum (synthetic data only) and the best constant.
# PASSES=N overrides the spec's passes. The model lands in examples/data/ml-model.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$PWD/bin
MODE=${1:-builtin}
case "$MODE" in
  builtin) SPEC=examples/recommendation/recommendation.yaml; JOB=recommendation ;;
  torch) SPEC=examples/recommendation/recommendation_torch.yaml; JOB=recommendation-torch ;;
  *) echo "usage: $0 [builtin|torch]   (ML1M=DIR for the real ml-1m files, PASSES=N)" >&2; exit 2 ;;
esac
[ -x "$BIN/gctl" ] && [ -x "$BIN/gtraind" ] || { echo "recommendation: $BIN/gctl or $BIN/gtraind is missing: run make build" >&2; exit 2; }
if [ "$MODE" = torch ] && ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "recommendation: /usr/bin/python3 cannot import torch: apt-get install python3-torch" >&2; exit 2
fi
SYNTH=examples/data/ml-synth
SHARDS=examples/data/ml/ml
WORK=$(mktemp -d -t gtrain-recommendation.XXXXXX)
AGENT_PID=""
NAME=recommendation
. scripts/devagent.sh

trap 'finish_work $?' EXIT

if [ -n "${ML1M:-}" ]; then
  for f in ratings.dat users.dat movies.dat; do
    [ -f "$ML1M/$f" ] || { echo "recommendation: $ML1M/$f is missing: ML1M names the unpacked ml-1m directory" >&2; exit 2; }
  done
  INPUT=$ML1M
else
  say "writing MovieLens-shaped ratings from planted factors into $SYNTH"
  "$BIN/gctl" data synth movielens --out "$SYNTH" --users 600 --movies 500 --ratings 150000 --dim 4
  INPUT=$SYNTH
fi
say "converting $INPUT into record shards ($SHARDS-*)"
"$BIN/gctl" data convert --format movielens --input "$INPUT" --out "$SHARDS" --shards 4 --test-fraction 0.2 --replace

# The specs reach the shards in examples/data and the program in examples/program: beside
# the spec's own directory, which a --dev agent allows, the agent must allow examples/.
start_agent recommendation-node --allowed-path "$PWD/examples"
extra=()
[ -n "${PASSES:-}" ] && extra=(--passes "$PASSES")
say "training $SPEC (sync, 2 trainers, 2 pservers)"
"$BIN/gctl" job start -f "$SPEC" "${extra[@]}"

say "test RMSE per pass"
"$BIN/gctl" job status "$JOB" -o json >"$WORK/status.json"
/usr/bin/python3 - "$WORK/status.json" "${ML1M:+real}" "$SYNTH/optimum.json" <<'PY'
import json, math, os, sys
status = json.load(open(sys.argv[1]))
for h in status.get("history", []):
    print(f"pass {h['pass']:3d}  test RMSE {math.sqrt(h['test_loss']):.4f}  {h['records_per_s']:.0f} records/s")
final = math.sqrt(status["metrics"]["test_loss"])
print(f"final test RMSE {final:.4f} ({status['state']})")
if not sys.argv[2] and os.path.exists(sys.argv[3]):
    o = json.load(open(sys.argv[3]))
    print(f"planted optimum {o['rmse_test']:.4f} ({final / o['rmse_test']:.3f}x), best constant {o['rmse_constant']:.4f}")
PY
say "the trained model (dense parameters and every table's rows, raw files) into examples/data/ml-model"
rm -rf examples/data/ml-model
"$BIN/gctl" job model "$JOB" --format raw --out examples/data/ml-model
