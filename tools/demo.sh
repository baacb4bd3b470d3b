#!/bin/bash
# demo.sh - the quick start: install the packages, build, start scalemond in
# the foreground on ./demo/scalemon.db, run a short real workload, and show
# what was recorded.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tools/install-deps.sh
rm -rf demo && mkdir -p demo     # a fresh database each time: run names are unique
echo "== building (log: demo/build.log)"
{
        [ -x configure ] || autoreconf -fi
        mkdir -p build
        [ -f build/Makefile ] || (cd build && ../configure -q)
        make -s -C build -j"$(nproc)" all tests/workloads/wl-pingpong tests/workloads/wl-mmapstorm tests/workloads/wl-thp
} >demo/build.log 2>&1 || { tail -n 30 demo/build.log; echo "demo.sh: the build failed" >&2; exit 1; }
B=$top/build
export SCALEMON_DB=$top/demo/scalemon.db SCALEMON_SOCKET=$top/demo/control.sock

echo "== scalemond --foreground --db demo/scalemon.db --interval 250ms (log: demo/scalemond.log)"
"$B/scalemond" --foreground --db "$SCALEMON_DB" --socket "$SCALEMON_SOCKET" --interval 250ms \
        >demo/scalemond.log 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid; sed "s/^/   | /" demo/scalemond.log' EXIT
for _ in $(seq 100); do grep -q started: demo/scalemond.log && break; sleep 0.05; done
sed 's/^/   | /' demo/scalemond.log
sleep 0.5

C=$B/scalemonctl
echo "== runs: a kernel-lock storm at 2 and 4 threads, pipe ping-pong, 64 huge pages split"
"$C" run exec storm-2 --tag threads=2 --score-regex 'ops=ops=([0-9]+)' -- "$B/tests/workloads/wl-mmapstorm" 2 2
"$C" run exec storm-4 --tag threads=4 --score-regex 'ops=ops=([0-9]+)' -- "$B/tests/workloads/wl-mmapstorm" 4 2
"$C" run exec pingpong --score-regex 'round_trips=round_trips=([0-9]+)' -- "$B/tests/workloads/wl-pingpong" 100000
"$C" run exec thp-split -- "$B/tests/workloads/wl-thp" 64 || true

echo "== scalemonctl status"
"$C" status
echo "== scalemonctl runs"
"$C" runs
echo "== scalemonctl report --since storm-2 --metric context_switches,cpu_migrations,pgfault,lock_contentions,thp_fault_alloc,thp_split_pmd"
"$C" report --since storm-2 --metric context_switches,cpu_migrations,pgfault,lock_contentions,thp_fault_alloc,thp_split_pmd
echo "== scalemonctl query lock_contentions --since storm-2 --until storm-4 --step 1s"
"$C" query lock_contentions --since storm-2 --until storm-4 --step 1s
