#!/usr/bin/env bash
# Builds the benchmarks and runs them: `ratelimit-benchmarks/run.sh [quick|full] [--only memory,footprint,redis,http]`.
# quick (the default) runs a subset in a few minutes, full everything in well under an hour; both write
# ratelimit-benchmarks/target/results/results.md, a markdown table of ratios against the peers of the same run.
set -euo pipefail
cd "$(dirname "$0")/.."

# the sample application is the HTTP benchmarks' server
./mvnw -B -q -pl ratelimit-benchmarks,sample-app -am package -DskipTests
exec java -jar ratelimit-benchmarks/target/benchmarks.jar "$@"
