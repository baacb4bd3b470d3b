#!/bin/bash
# test.sh - the whole test suite, as CI runs it, on a fresh Debian 12 as
# root: install the packages, build twice (warnings as errors; and with
# AddressSanitizer + UndefinedBehaviorSanitizer), both with the test seams
# (--enable-test-seams: fault injection, the clock offset), run `make check` in each,
# check the release tarball with `make distcheck`, and end with the line
# "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
"$top/tools/install-deps.sh" || exit 1
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; exit 1; }

passed=0 failed=0 skipped=0
count() {       # add the counts of a test-suite.log
        local log=$1 p f e x s
        p=$(awk '/^# PASS:/ { print $3 }' "$log"); s=$(awk '/^# SKIP:/ { print $3 }' "$log")
        f=$(awk '/^# FAIL:/ { print $3 }' "$log"); e=$(awk '/^# ERROR:/ { print $3 }' "$log")
        x=$(awk '/^# XPASS:/ { print $3 }' "$log")
        passed=$((passed + ${p:-0})); skipped=$((skipped + ${s:-0}))
        failed=$((failed + ${f:-0} + ${e:-0} + ${x:-0}))
}
suite() {       # suite NAME CONFIGURE-ARGS...
        local name=$1; shift
        local b="$top/build-$name"
        echo "=== $name: configure $*"
        rm -rf "$b"; mkdir -p "$b"
        if ! (cd "$b" && "$top/configure" -q "$@") || ! make -s -C "$b" -j"$(nproc)"; then
                echo "=== $name: build FAILED"; failed=$((failed + 1)); return
        fi
        echo "=== $name: make check"
        make -s -C "$b" check >"$b/check.out" 2>&1
        grep -E '^(FAIL|ERROR|XPASS|SKIP):' "$b/check.out" | sed "s/^/$name: /"
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$b/test-suite.log" | sed "s/^/$name: /"
        if [ -f "$b/test-suite.log" ]; then count "$b/test-suite.log"; else failed=$((failed + 1)); fi
        [ "$name" = asan ] || return 0
        echo "=== $name: make check-faults"
        make -s -C "$b" check-faults >"$b/check-faults.out" 2>&1
        grep -E '^(FAIL|ERROR|XPASS|SKIP):' "$b/check-faults.out" | sed "s/^/$name faults: /"
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$b/test-faults.log" | sed "s/^/$name faults: /"
        if [ -f "$b/test-faults.log" ]; then count "$b/test-faults.log"; else failed=$((failed + 1)); fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
suite ci --enable-werror --enable-test-seams --enable-bpf
suite asan --enable-werror --enable-sanitizers --enable-test-seams --enable-bpf

# the release tarball builds, installs and uninstalls cleanly (its tests
# are the ones above, so they are not run a third time)
echo "=== distcheck"
if make -s -C "$top/build-ci" distcheck TESTS= >"$top/build-ci/distcheck.out" 2>&1; then
        passed=$((passed + 1)); echo "distcheck: ok"
else
        failed=$((failed + 1)); echo "distcheck: FAILED"; tail -n 30 "$top/build-ci/distcheck.out"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
