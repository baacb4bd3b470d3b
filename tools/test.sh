#!/bin/bash
# test.sh - the whole test suite, as CI runs it, on a fresh Debian 12 as
# root: install the packages, build twice (warnings as errors; and with
# AddressSanitizer + UndefinedBehaviorSanitizer), both with the test seams
# (--enable-test-seams: fault injection, the clock offset), run `make check` in each
# (as its two halves, check-unit and check-live), `make check-faults` in the
# sanitizer build, check the release tarball with `make distcheck`, build
# and test the Debian packages (`make check-package`), and end
# with the line "N passed, N failed, N skipped".
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
# Where the time goes (a clean run: some 24 minutes before this layout)
# is the live tests, which must each have the machine to themselves (their
# timing checks fail when something else loads it).  What needs no quiet
# machine runs beside something else: the unit tests and fuzzers (in
# parallel, make -j2 check-unit) of one tree while the next one builds,
# and the sanitizer tree's beside distcheck.  The live tests (check-live,
# then check-faults) run alone, one at a time.
build() {       # build NAME CONFIGURE-ARGS...: configure and build build-NAME
        local name=$1; shift
        local b="$top/build-$name"
        echo "=== $name: configure $*"
        rm -rf "$b"; mkdir -p "$b"
        if (cd "$b" && "$top/configure" -q "$@") && make -s -C "$b" -j"$(nproc)" >"$b/build.out" 2>&1; then
                return 0
        fi
        cat "$b/build.out"; echo "=== $name: build FAILED"
        return 1
}
run() {         # run NAME WHAT LOG [MAKE-ARGS]: make WHAT in build-NAME, report, count LOG
        local name=$1 what=$2 log=$3; shift 3
        local b="$top/build-$name"
        echo "=== $name: make $what"
        make -s -C "$b" "$@" "$what" >"$b/$what.out" 2>&1
        grep -E '^(FAIL|ERROR|XPASS|SKIP):' "$b/$what.out" | sed "s/^/$name $what: /"
        grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$b/$log" 2>/dev/null | sed "s/^/$name $what: /"
        if [ -f "$b/$log" ]; then count "$b/$log"; else failed=$((failed + 1)); fi
}
beside() {      # beside NAME: run the unit tests of build-NAME (make -j2) in the background
        local name=$1
        ( passed=0 failed=0 skipped=0
          run "$name" check-unit test-unit.log -j2 >"$top/build-$name/beside.out"
          echo "$passed $failed $skipped" >"$top/build-$name/beside.counts" ) &
        BESIDE=$!
}
beside_end() {  # beside_end NAME: wait for it, show its output, add its counts
        local name=$1 p f s
        wait "$BESIDE"
        cat "$top/build-$name/beside.out"
        read -r p f s <"$top/build-$name/beside.counts" 2>/dev/null || { p=0 f=1 s=0; }
        passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ci_ok=false asan_ok=false
build ci --enable-werror --enable-test-seams --enable-bpf && ci_ok=true || failed=$((failed + 1))
# the plain tree's unit tests while the sanitizer tree builds
$ci_ok && beside ci
build asan --enable-werror --enable-sanitizers --enable-test-seams --enable-bpf && asan_ok=true || failed=$((failed + 1))
$ci_ok && beside_end ci
$ci_ok && run ci check-live test-live.log

# The Debian packages (tests/systemd/systemd-package.sh): built from the
# release tarball with dpkg-buildpackage (nocheck, -j2), lintian, then
# installed, used, removed and purged in a clean Debian root under a real
# systemd.  The root is debootstrap'd once and cached under
# /var/cache/scalemon-test (30 s the first time); about a minute after.
package() {
        local t0; t0=$(date +%s)
        run ci check-package test-package.log
        echo "=== ci: check-package took $(( $(date +%s) - t0 )) s"
}
$ci_ok && package

# the release tarball builds, installs and uninstalls cleanly (its tests
# are the ones above, so they are not run a third time), beside the
# sanitizer tree's unit tests
distcheck() {
        echo "=== distcheck"
        if make -s -C "$top/build-ci" distcheck TESTS= >"$top/build-ci/distcheck.out" 2>&1; then
                echo "distcheck: ok"; return 0
        fi
        echo "distcheck: FAILED"; tail -n 30 "$top/build-ci/distcheck.out"; return 1
}
if $ci_ok; then
        distcheck >"$top/build-ci/distcheck.log" 2>&1 &
        DIST=$!
fi
$asan_ok && run asan check-unit test-unit.log -j2
if $ci_ok; then
        if wait "$DIST"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
        cat "$top/build-ci/distcheck.log"
fi
# the live tests and the faults caused for real, in the sanitizer build
$asan_ok && run asan check-live test-live.log
$asan_ok && run asan check-faults test-faults.log

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
