#!/bin/sh
# fuzz.sh [SECONDS] [TARGET...] - run the libFuzzer targets (tests/fuzz-*.c)
# built with clang, AddressSanitizer and UndefinedBehaviorSanitizer, each
# for SECONDS (default 60), starting from its saved corpus tests/fuzz/TARGET.
# New interesting inputs go to build-fuzz/corpus-TARGET; a crash leaves a
# crash-* file: add it to tests/fuzz/TARGET so `make check` replays it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-$(cd "$top/tests/fuzz" && ls fuzz-*.c | sed -n 's/^fuzz-\(.*\)\.c$/\1/p' | grep -v '^main$')}
b=$top/build-fuzz
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$b"
[ -f "$top/configure" ] || (cd "$top" && autoreconf -fi)
if [ ! -f "$b/Makefile" ]; then
        (cd "$b" && "$top/configure" -q CC=clang CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $san")
fi
# what a library target alone does not make first: the embedded schema, the BPF skeletons
make -s -C "$b" lib/schema-sql.c
if grep -q '^bpf/lockwait.skel.h:' "$b/Makefile"; then make -s -C "$b" bpf/lockwait.skel.h bpf/runqwait.skel.h; fi
make -s -C "$b" libscalemon.a libsmkernel.a libsmsampler.a libscalemond.a libscalemon-exporter.a
libs="$(pkg-config --libs libsystemd sqlite3 jansson) $(pkg-config --libs libbpf 2>/dev/null) -lm"
for t in $targets; do
        clang -g -O1 -fsanitize=fuzzer $san -I"$b" -I"$top/lib" -I"$top/daemon" -I"$top/daemon/sampler" -I"$top/daemon/kernel" -I"$top/client" -I"$top/exporter" \
                $(pkg-config --cflags jansson) "$top/tests/fuzz/fuzz-$t.c" $(sed "s|^|$top/|" "$top/tests/fuzz/fuzz-$t.deps" 2>/dev/null || true) \
                "$b/libscalemon-exporter.a" "$b/libscalemond.a" "$b/libsmsampler.a" "$b/libsmkernel.a" "$b/libscalemon.a" $libs -o "$b/fuzz-$t"
        mkdir -p "$b/corpus-$t"
        echo "fuzz.sh: $t for ${secs}s"
        (cd "$b" && "./fuzz-$t" -max_total_time="$secs" -print_final_stats=1 "corpus-$t" "$top/tests/fuzz/$t")
done
