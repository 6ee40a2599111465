#!/usr/bin/env bash
# Builds the benchmarks and runs them:
# `ratelimit-benchmarks/run.sh [quick|full] [--only memory,footprint,redis,postgres,http]`.
# quick (the default) runs a subset in a few minutes, full everything in about an hour; both write
# ratelimit-benchmarks/target/results/results.md, a markdown table of ratios against the peers of the same run,
# Spring Cloud Gateway's RedisRateLimiter among them on Redis and Bucket4j's backend on PostgreSQL. The suite runs
# only on a quiet machine (1-minute load average at most 0.5 per core): after this build it waits for the load to
# fall (--wait-quiet SECONDS, 180 by default), then refuses with exit code 3 unless --busy-ok, which marks the
# report. Any argument goes to the suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# the sample applications, on Spring MVC and on WebFlux, are the HTTP benchmarks' servers
./mvnw -B -q -pl ratelimit-benchmarks,sample-app,sample-webflux-app -am package -DskipTests
exec java -jar ratelimit-benchmarks/target/benchmarks.jar "$@"
