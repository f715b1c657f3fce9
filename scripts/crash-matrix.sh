#!/usr/bin/env bash
# The crash matrix: a child process runs a mixed workload (every level of write, a column family
# created every 100 steps, flushes, minor and major compactions) and is killed with SIGKILL at a
# random point, ROUNDS times in batch mode and ROUNDS times in periodic mode. After each kill the
# data is reopened and every acknowledged step must be there whole, the numbering must not go
# back, and the commit log left to replay must stay bounded. CI runs 25 and 10 rounds as part of
# `cargo test`; this runs the long form by hand: `scripts/crash-matrix.sh [ROUNDS]` (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-200}"
SC_CRASH_ROUNDS="$rounds" cargo test --release -p supercolumn --test crash -- --nocapture \
    acknowledged_batch_writes_survive_sigkill periodic_writes_survive_sigkill_too 2>&1 |
    grep -E "rounds|test result|panicked|round [0-9]+:"
