#!/bin/bash
# test.sh - the whole test suite, as CI runs it, on a fresh Debian 12 as
# root: install the packages, build twice (warnings as errors; and with
# AddressSanitizer + UndefinedBehaviorSanitizer), both with the test seams
# (--enable-test-seams: fault injection, the clock offset), and run:
#   plain build      make check-unit, check-live, check-faults (every
#                    timing check is judged here), check-package, distcheck
#   plain build      make check-side (the live and fault tests that need
#                    no quiet machine: on the fake kernel, and the soak)
#   sanitizer build  make check-unit, check-san and check-san-alone (the
#                    live and fault tests that drive the daemon's, client's
#                    and exporter's real paths, for the memory errors the
#                    sanitizers add)
# It ends with what was skipped or is a TODO, and what failed, each by
# name, the time each suite took, and the line "N passed, N failed, N
# skipped" (tools/test-summary.sh); exit 1 if anything failed.  The
# results are kept in build-test/ (results: one line per check).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
"$top/tools/install-deps.sh" || exit 1
[ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; exit 1; }
T=$top/build-test
rm -rf "$T"; mkdir -p "$T"
t_start=$(date +%s)

# Where the time goes (tools/test.sh prints each suite's time and the
# slowest tests at the end; HACKING.md has the figures): the live and
# fault tests of the plain build, which must each have the machine to
# themselves (their timing checks, and their counts against perf stat or
# /proc, fail when something else loads it), so they run one at a time,
# alone, after everything else.  What judges no timing and no
# machine-wide count, and so needs no quiet machine, runs side by side
# before them, in three lanes: the sanitizer tree's build, then its unit
# tests beside its share of the live and fault tests (check-san: two at
# a time); the plain tree's unit tests beside its live and fault tests
# that need no quiet machine (check-side: on the fake kernel, and the
# soak); distcheck and then the Debian packages' test (both make the
# release tarball in the plain tree, so one after the other).
# Last, alone, the sanitizer test that takes a CPU offline
# (check-san-alone: every other test would see it).  Each suite's
# results go to its own file build-test/NN-NAME-WHAT.res (NN: the order
# of this script), its output to build-test/NAME-WHAT.out.
seq_n=0
res_file() {    # res_file NAME WHAT: RES is the results file of the next suite
        seq_n=$((seq_n + 1)); RES=$(printf '%s/%02d-%s-%s.res' "$T" "$seq_n" "$1" "$2")
}
took() {        # took RES NAME WHAT START: note the time since START
        echo "$2 $3: TIME: $(( $(date +%s) - $4 )) s" >>"$1"
}
build() {       # build NAME RES CONFIGURE-ARGS...: configure and build build-NAME
        local name=$1 r=$2; shift 2
        local b="$top/build-$name" t0; t0=$(date +%s)
        echo "=== $name: configure $*"
        rm -rf "$b"; mkdir -p "$b"
        if (cd "$b" && "$top/configure" -q "$@") && make -s -C "$b" -j"$(nproc)" >"$b/build.out" 2>&1; then
                echo "$name build: PASS: configure and make" >"$r"; took "$r" "$name" build "$t0"
                echo "=== $name: build took $(( $(date +%s) - t0 )) s"
                return 0
        fi
        cat "$b/build.out"; echo "=== $name: build FAILED"
        echo "$name build: FAIL: configure and make (build-$name/build.out)" >"$r"; took "$r" "$name" build "$t0"
        return 1
}
run() {         # run NAME WHAT LOG RES [MAKE-ARGS]: make WHAT in build-NAME; its results to RES
        # (LOG: the suite's test-suite log; "-" for what is not a TAP suite, judged by make's status)
        local name=$1 what=$2 log=$3 r=$4; shift 4
        local b="$top/build-$name" t0 rc out="$T/$name-$what.out"; t0=$(date +%s)
        echo "=== $name: make $what"
        [ "$log" = - ] || rm -f "$b/$log"
        make -s -C "$b" "$@" "$what" >"$out" 2>&1; rc=$?
        if [ "$log" = - ]; then
                if [ $rc = 0 ]; then echo "$name $what: PASS: make $what" >"$r"
                else echo "$name $what: FAIL: make $what exited with status $rc (build-test/$name-$what.out)" >"$r"
                        tail -n 30 "$out"; fi
        else
                grep -E '^(PASS|FAIL|ERROR|XFAIL|XPASS|SKIP):' "$out" | sed "s/^/$name $what: /" >"$r"
                grep -E '^(FAIL|ERROR|XFAIL|XPASS|SKIP):' "$out" | sed "s/^/$name $what: /"
                grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR):' "$b/$log" 2>/dev/null | sed "s/^/$name $what: /"
                if [ ! -f "$b/$log" ]; then
                        echo "$name $what: ERROR: make $what - no $log: the suite did not run (build-test/$name-$what.out)"
                elif [ $rc != 0 ] && ! grep -qE ': (FAIL|ERROR|XPASS):' "$r"; then
                        echo "$name $what: ERROR: make $what - exited with status $rc (build-test/$name-$what.out)"
                fi | tee -a "$r" | grep . && tail -n 30 "$out"
        fi
        took "$r" "$name" "$what" "$t0"
        echo "=== $name: make $what took $(( $(date +%s) - t0 )) s"
}
bg_n=0 bg_jobs=
beside() {      # beside COMMAND...: in the background, its output shown by beside_end
        bg_n=$((bg_n + 1))
        "$@" >"$T/beside-$bg_n.txt" 2>&1 &
        bg_jobs="$bg_jobs $!:$bg_n"
}
beside_end() {  # beside_end: wait for them all, show their output
        local j
        for j in $bg_jobs; do
                wait "${j%%:*}"
                cat "$T/beside-${j#*:}.txt"
        done
        bg_jobs=
}
slowest() {     # slowest N: the N slowest tests of the suites run, from their logs (tests/run-test.sh)
        local b
        for b in "$top"/build-ci "$top"/build-asan; do
                [ -d "$b/tests" ] || continue
                grep -r --include='*.log' -H '^# run-test: took ' "$b/tests" |
                        sed "s|^$b/\(.*\)\.log:# run-test: took \([0-9.]*\) s|\2 ${b##*/build-} \1|"
        done | sort -rn | head -n "$1" | awk '{ printf "  %6.1f s  %s %s\n", $1, $2, $3 }'
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ci_ok=false asan_ok=false
res_file ci build; build ci "$RES" --enable-werror --enable-test-seams --enable-bpf && ci_ok=true
# side by side, nothing timed
res_file asan build; r_ab=$RES; res_file asan check-unit; r_au=$RES; res_file asan check-san; r_as=$RES
two_suites() {  # two_suites NAME WHAT1 LOG1 RES1 J1 WHAT2 LOG2 RES2 J2: at once in build-NAME,
        # once the tests' programs are built there (not by both at once)
        local name=$1
        make -s -C "$top/build-$name" -j"$(nproc)" check-programs >>"$top/build-$name/build.out" 2>&1
        run "$name" "$2" "$3" "$4" "$5" >"$T/$name-$2.lane" 2>&1 &
        run "$name" "$6" "$7" "$8" "$9"
        wait $!; cat "$T/$name-$2.lane"
}
beside eval 'build asan "$r_ab" --enable-werror --enable-sanitizers --enable-test-seams --enable-bpf &&
        two_suites asan check-san test-san.log "$r_as" -j2 check-unit test-unit.log "$r_au" -j2'
if $ci_ok; then
        res_file ci check-unit; r_cu=$RES; res_file ci check-side; r_cs=$RES
        beside two_suites ci check-side test-side.log "$r_cs" -j1 check-unit test-unit.log "$r_cu" -j2
        # the release tarball builds, installs and uninstalls cleanly (its
        # tests are the ones here, not run a third time); then the Debian
        # packages (tests/systemd/systemd-package.sh): built from the release
        # tarball with dpkg-buildpackage, lintian, then installed, used,
        # removed and purged in a clean Debian root under a real systemd (the
        # root is debootstrap'd once and cached under /var/cache/scalemon-test)
        res_file ci distcheck; r_dc=$RES; res_file ci check-package; r_pk=$RES
        beside eval 'run ci distcheck - "$r_dc" TESTS=; run ci check-package test-package.log "$r_pk"'
fi
beside_end
grep -q ': PASS: ' "$r_ab" 2>/dev/null && asan_ok=true
# alone, one suite after the other: the timing checks in the plain build
res_file ci check-live; $ci_ok && run ci check-live test-live.log "$RES"
res_file ci check-faults; $ci_ok && run ci check-faults test-faults.log "$RES"
# the sanitizer build's test that takes a CPU offline (tests/Makefile.inc: san_alone_tests)
res_file asan check-san-alone; $asan_ok && run asan check-san-alone test-san-alone.log "$RES"

echo "=== the slowest tests"
slowest 12
echo "total: TIME: $(( $(date +%s) - t_start )) s" >"$T/99-total.res"
cat "$T"/*.res >"$T/results"
echo "=== summary"
exec bash "$top/tools/test-summary.sh" "$T/results"
