#!/bin/bash
# demo.sh - the quick start: install the packages, build, start scalemond in
# the foreground on ./demo/scalemon.db, run a short real workload, and show
# what was recorded.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tools/install-deps.sh
[ -x configure ] || autoreconf -fi >/dev/null
mkdir -p build
[ -f build/Makefile ] || (cd build && ../configure -q)
make -s -C build -j"$(nproc)" all tests/wl-pingpong tests/wl-mmapstorm tests/wl-thp
B=$top/build
mkdir -p demo
export SCALEMON_DB=$top/demo/scalemon.db SCALEMON_SOCKET=$top/demo/control.sock

echo "== scalemond --foreground --db demo/scalemon.db --interval 250ms (log: demo/scalemond.log)"
"$B/scalemond" --foreground --db "$SCALEMON_DB" --socket "$SCALEMON_SOCKET" --interval 250ms \
        >demo/scalemond.log 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid; sed "s/^/   | /" demo/scalemond.log' EXIT
for _ in $(seq 100); do grep -q started: demo/scalemond.log && break; sleep 0.05; done
sed 's/^/   | /' demo/scalemond.log
sleep 0.5

echo "== workload: 4 threads hammering mmap/munmap (kernel lock contention), then 100000 pipe round trips, then 64 huge pages split"
"$B/tests/wl-mmapstorm" 4 3
"$B/tests/wl-pingpong" 100000
"$B/tests/wl-thp" 64 || true
sleep 1.5

echo "== scalemonctl status"
"$B/scalemonctl" status
echo "== scalemonctl query lock_contentions --since -10s --step 1s"
"$B/scalemonctl" query lock_contentions --since -10s --step 1s
echo "== scalemonctl query context_switches --per cpu --since -10s --step 2s"
"$B/scalemonctl" query context_switches --per cpu --since -10s --step 2s
echo "== scalemonctl query thp_split_pmd --since -10s --step 5s"
"$B/scalemonctl" query thp_split_pmd --since -10s --step 5s
