#!/usr/bin/env bash
# A 3-host gtrain cluster on one machine, for trying it out: each host is a
# network namespace with its own address on a bridge, running one member of
# a 3-member etcd (Debian's etcd-server) and one `gtraind agent`. A fourth
# namespace, the "client", is your desk: run gctl there. The namespaces share
# the file system: $DIR/shared stands for the shared storage a real cluster
# needs for checkpoint.dir. Needs root, iproute2 and etcd-server.
#
#   deploy/netns-cluster.sh up       # start it (make build first)
#   deploy/netns-cluster.sh gctl node list
#   deploy/netns-cluster.sh gctl job start -f examples/fit_a_line.yaml
#   deploy/netns-cluster.sh status
#   deploy/netns-cluster.sh down     # stop everything, remove the namespaces
#
# Settings (environment): GTRAIN_NETNS_PREFIX (namespace prefix, default gtn),
# GTRAIN_NETNS_DIR (data and logs, default /tmp/gtrain-netns),
# GTRAIN_NETNS_SUBNET (first three octets, default 10.88.0), GTRAIN_BIN
# (directory with gtraind and gctl, default bin/ of this repository).
# Nothing touches the machine's own network: the bridge lives in a namespace too.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${GTRAIN_NETNS_PREFIX:-gtn}"
dir="${GTRAIN_NETNS_DIR:-/tmp/gtrain-netns}"
subnet="${GTRAIN_NETNS_SUBNET:-10.88.0}"
bin="${GTRAIN_BIN:-$here/bin}"
hosts=(h1 h2 h3)
sw="$prefix-sw"
client="$prefix-cl"

die() { echo "netns-cluster: $*" >&2; exit 1; }
ip_of() { echo "$subnet.$(( $1 + 1 ))"; }            # host index -> address
endpoints() { local e=() i; for i in 0 1 2; do e+=("$(ip_of $i):2379"); done; (IFS=,; echo "${e[*]}"); }

check() {
	[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces)"
	command -v ip >/dev/null || die "no ip command: apt-get install iproute2"
	command -v etcd >/dev/null || die "no etcd: apt-get install etcd-server"
	[[ -x $bin/gtraind && -x $bin/gctl ]] || die "no $bin/gtraind or $bin/gctl: run make build (or set GTRAIN_BIN)"
	if ip netns list | grep -q "^$sw\b"; then die "a cluster with prefix $prefix is up already (down first, or set GTRAIN_NETNS_PREFIX)"; fi
}

# plug NS ADDR PORT: a namespace with ADDR on a veth into the bridge.
plug() {
	ip netns add "$1"
	ip -n "$sw" link add "$3" type veth peer name eth0 netns "$1"
	ip -n "$sw" link set "$3" master br0 up
	ip -n "$1" addr add "$2/24" dev eth0
	ip -n "$1" link set eth0 up
	ip -n "$1" link set lo up
}

network() {
	ip netns add "$sw"
	ip -n "$sw" link add br0 type bridge
	ip -n "$sw" link set br0 up
	local i
	for i in 0 1 2; do plug "$prefix-${hosts[$i]}" "$(ip_of $i)" "v$((i + 1))"; done
	plug "$client" "$subnet.100" vcl
}

# start NAME NS LOG CMD...: a daemon in namespace NS, its pid in $dir/NAME.pid.
start() {
	local name=$1 ns=$2 log=$3; shift 3
	setsid ip netns exec "$ns" "$@" >"$log" 2>&1 </dev/null &
	echo $! >"$dir/$name.pid"
}

etcd_members() {
	local cluster=() i token="gtrain-$prefix-$$"
	for i in 0 1 2; do cluster+=("etcd-${hosts[$i]}=http://$(ip_of $i):2380"); done
	cluster=$(IFS=,; echo "${cluster[*]}")
	for i in 0 1 2; do
		local h=${hosts[$i]} a; a=$(ip_of $i)
		start "etcd-$h" "$prefix-$h" "$dir/$h/etcd.log" etcd --name "etcd-$h" --data-dir "$dir/$h/etcd" \
			--listen-client-urls "http://$a:2379" --advertise-client-urls "http://$a:2379" \
			--listen-peer-urls "http://$a:2380" --initial-advertise-peer-urls "http://$a:2380" \
			--initial-cluster "$cluster" --initial-cluster-token "$token" --initial-cluster-state new \
			--logger zap --log-outputs stderr
	done
}

agents() {
	local i
	for i in 0 1 2; do
		local h=${hosts[$i]} a; a=$(ip_of $i)
		start "agent-$h" "$prefix-$h" "$dir/$h/agent.log" "$bin/gtraind" agent --node-name "$h" \
			--data-dir "$dir/$h/agent" --api-addr "$a:7164" --gossip-addr "$a:7946" --etcd-endpoints "$(endpoints)" \
			--insecure # a private bridge; see README "Secure a cluster" for TLS
	done
}

gctl() { ip netns exec "$client" "$bin/gctl" --addr "$(ip_of 0):7164" "$@"; }

# wait_ready: until gctl lists the three nodes ready (agents retry etcd).
wait_ready() {
	local n
	for n in $(seq 1 150); do
		if [[ $(gctl node list -o json 2>/dev/null | grep -o '"ready"' | wc -l) -eq 3 ]]; then return 0; fi
		sleep 0.2
	done
	die "the cluster is not ready after 30 s; see $dir/h*/agent.log and $dir/h*/etcd.log"
}

up() {
	check
	mkdir -p "$dir/shared" "${hosts[@]/#/$dir/}"
	network
	etcd_members
	sleep 1 # the members elect a leader; an agent that finds no etcd gives up
	agents
	wait_ready
	cat <<MSG
A 3-host gtrain cluster is up (prefix $prefix):
  hosts     ${hosts[0]} $(ip_of 0), ${hosts[1]} $(ip_of 1), ${hosts[2]} $(ip_of 2): etcd on :2379, agent API on :7164
  etcd      --etcd-endpoints $(endpoints)
  shared    $dir/shared   (put data and checkpoint.dir here: every host reads it)
  logs      $dir/h*/agent.log, $dir/h*/etcd.log
Try:  $0 gctl node list
      ip netns exec $client $bin/gctl --addr $(ip_of 1):7164 job list
Stop: $0 down
MSG
}

# stop NAME: SIGTERM the daemon, SIGKILL it after 15 s.
stop() {
	local f="$dir/$1.pid" pid n
	[[ -f $f ]] || return 0
	pid=$(cat "$f")
	if kill -TERM "$pid" 2>/dev/null; then
		for n in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

down() {
	local h ns
	for h in "${hosts[@]}"; do stop "agent-$h"; done
	for h in "${hosts[@]}"; do stop "etcd-$h"; done
	for ns in "${hosts[@]/#/$prefix-}" "$client" "$sw"; do
		if ip netns list | grep -q "^$ns\b"; then ip netns del "$ns"; fi
	done
	echo "cluster $prefix is down; its data and logs stay in $dir (remove it by hand)"
}

status() {
	local h
	for h in "${hosts[@]}"; do
		for d in etcd agent; do
			if [[ -f $dir/$d-$h.pid ]] && kill -0 "$(cat "$dir/$d-$h.pid")" 2>/dev/null; then
				echo "$h $d running (pid $(cat "$dir/$d-$h.pid"))"
			else
				echo "$h $d not running"
			fi
		done
	done
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
gctl) shift; gctl "$@" ;;
*) die "usage: $0 up|down|status|gctl ARGS..." ;;
esac
