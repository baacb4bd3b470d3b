#!/bin/bash
# design-map.sh - doc/DESIGN.md's module map is the code's: every source
# file under daemon/, client/, lib/ and exporter/ is named in the table
# under its folder's heading (a header goes with the .c of the same name),
# every name in a table is a file that exists, and no basename is used
# twice.  No root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
D=$srcdir/doc/DESIGN.md
[ -f "$D" ] || skip_all "no doc/DESIGN.md in $srcdir"

# names listed in the first column of the table under "### DIR/"
listed() {
        awk -v h="### $1/" '$0 == h || index($0, h " ") == 1 { on = 1; next } /^##/ { on = 0 }
                on && /^\| / { split($0, c, "|"); print c[2] }' "$D" |
                grep -oE '[A-Za-z0-9_.-]+\.[ch]\b' | sort -u
}
for dir in daemon daemon/sampler daemon/kernel lib client client/verbs client/analysis client/render client/ipc exporter; do
        names=$(listed "$dir")
        [ -n "$names" ]; ok $? "$dir/ has a table in the module map"
        missing=
        for f in "$srcdir/$dir"/*.[ch]; do
                b=$(basename "$f")
                case $b in
                *.h) [ -f "${f%.h}.c" ] && echo "$names" | grep -qx "${b%.h}.c" && continue ;;
                esac
                echo "$names" | grep -qx "$b" || missing="$missing $b"
        done
        [ -z "$missing" ]; ok $? "every file in $dir/ is in its table${missing:+ (missing:$missing)}"
        stale=
        for b in $names; do [ -f "$srcdir/$dir/$b" ] || stale="$stale $b"; done
        [ -z "$stale" ]; ok $? "every name in $dir/'s table is a file there${stale:+ (not there:$stale)}"
done
dups=$(cd "$srcdir" && find daemon client lib exporter bpf tests bench -name '*.c' -printf '%f\n' | sort | uniq -d | tr '\n' ' ')
[ -z "$dups" ]; ok $? "every .c basename is used once${dups:+ (twice: $dups)}"
all=$(cd "$srcdir" && find daemon client lib exporter -name '*.[ch]' | wc -l)
mapped=$(cd "$srcdir" && for d in daemon daemon/sampler daemon/kernel lib client client/verbs client/analysis client/render client/ipc exporter; do ls $d/*.[ch]; done | wc -l)
[ "$all" = "$mapped" ]; ok $? "no source file lives in a folder the map does not cover ($mapped of $all)"
finish
