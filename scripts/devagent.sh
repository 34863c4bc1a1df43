# Sourced by demo.sh, fashion.sh and examples/recommendation/run.sh: start and stop a `gtraind agent --dev` in $WORK on free
# loopback ports. Needs BIN, WORK and a NAME for messages; sets AGENT_PID and GCTL_ADDR.

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# free_port prints a loopback port nothing listens on, so a script never collides with a
# running agent or etcd.
free_port() {
  local p
  while :; do
    p=$(( (RANDOM % 30000) + 20000 ))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# start_agent NODE [FLAG...]: starts the agent (with the extra flags) and waits until it
# reports its node ready.
start_agent() {
  API=127.0.0.1:$(free_port)
  export GCTL_ADDR=$API
  say "starting gtraind agent --dev in $WORK"
  "$BIN/gtraind" agent --dev --data-dir "$WORK/data" --node-name "$1" "${@:2}" \
    --api-addr "$API" --gossip-addr "127.0.0.1:$(free_port)" \
    --etcd-client-addr "127.0.0.1:$(free_port)" --etcd-peer-addr "127.0.0.1:$(free_port)" \
    >"$WORK/agent.log" 2>&1 &
  AGENT_PID=$!
  local i
  for i in $(seq 1 150); do
    if "$BIN/gctl" node list 2>/dev/null | grep -q ready; then return 0; fi
    kill -0 "$AGENT_PID" 2>/dev/null || { echo "$NAME: the agent exited; its log:" >&2; cat "$WORK/agent.log" >&2; exit 1; }
    [ $((i % 10)) -eq 0 ] && echo "waiting for the agent to be ready ($((i / 5))s)..."
    sleep 0.2
  done
  echo "$NAME: the agent was not ready in 30s; its log: $WORK/agent.log" >&2
  exit 1
}

# stop_agent: SIGTERM, then SIGKILL after 30 s.
stop_agent() {
  if [ -n "$AGENT_PID" ] && kill -0 "$AGENT_PID" 2>/dev/null; then
    say "stopping the agent (SIGTERM)"
    kill -TERM "$AGENT_PID" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$AGENT_PID" 2>/dev/null || true
  fi
}

# finish_work RC: the end of a script that ran an agent in $WORK (its EXIT trap): stops the
# agent, then removes $WORK if RC is 0, else keeps it and says where; exits with RC.
finish_work() {
  local rc=$1
  stop_agent
  if [ "$rc" -eq 0 ]; then rm -rf "$WORK"; else echo "$NAME: kept $WORK for inspection (agent log: $WORK/agent.log)" >&2; fi
  exit "$rc"
}
