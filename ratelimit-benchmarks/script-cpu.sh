#!/usr/bin/env bash
# Redis CPU per call of Lua scripts, side by side:
#   ratelimit-benchmarks/script-cpu.sh [--rounds N] [--policy "LIMIT WINDOW_MICROS BURST COST"] A.lua [B.lua ...]
# Starts redis-server on a free loopback port; in each round runs every script in turn, in a rotating order, with
# redis-benchmark (16 connections, 100,000 calls over a million keys, the standalone calling convention; the
# policy is by default the Redis benchmarks' 100,000 per millisecond, whose tick is 1/100 µs) and reads
# `usec_per_call` from INFO commandstats. Prints each round and the median per script. Compare scripts only
# within one run, on a quiet machine.
set -euo pipefail
rounds=5
policy="100000 1000 100000 1"
while [[ "${1:-}" == --* ]]; do
	case "$1" in
		--rounds) rounds=$2 ;;
		--policy) policy=$2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
if [[ $# -eq 0 ]]; then
	echo "usage: $0 [--rounds N] [--policy \"LIMIT WINDOW_MICROS BURST COST\"] A.lua [B.lua ...]" >&2
	exit 2
fi
port=
for candidate in $(shuf -i 20000-60000 -n 50); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
		port=$candidate
		break
	fi
done
[[ -n "$port" ]] || { echo "no free port" >&2; exit 1; }
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile "/tmp/script-cpu-$port.pid" >/dev/null
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
echo "policy (limit, window in µs, burst, cost): $policy"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A results
for round in $(seq "$rounds"); do
	line="round $round:"
	n=$#
	for i in $(seq 0 $((n - 1))); do
		script=${@:$(( (i + round) % n + 1 )):1}
		redis-cli -p "$port" FLUSHALL >/dev/null
		sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat "$script")")
		redis-cli -p "$port" CONFIG RESETSTAT >/dev/null
		# shellcheck disable=SC2086
		redis-benchmark -p "$port" -c 16 -n 100000 -r 1000000 -q EVALSHA "$sha" 1 'ratelimit:{user:__rand_int__}:cpu' \
			$policy "" "" >/dev/null
		micros=$(redis-cli -p "$port" INFO commandstats | sed -n 's/^cmdstat_evalsha:.*usec_per_call=\([0-9.]*\).*/\1/p')
		results[$script]="${results[$script]:-} $micros"
		line="$line $script $micros"
	done
	echo "$line"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| script | Redis CPU per call, median of $rounds (µs) |"
echo "|---|--:|"
for script in "$@"; do
	median=$(tr ' ' '\n' <<<"${results[$script]}" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	echo "| $script | $median |"
done
