#!/bin/sh
# gallery.sh BUILDDIR OUTDIR - draw one PNG of each plot kind from the test
# fixtures (tests/fixtures/seeds), for the charts in doc/GUIDE.md and README.md (`make docs`).
set -eu
b=$1
out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
f=$top/tests/fixtures/seeds
tmp=$(mktemp -d /tmp/scalemon-gallery.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sm() { db=$1; shift; "$b/scalemonctl" --db "$tmp/$db.db" "$@"; }
mkdir -p "$out"
sm aim7 import "$f/aim7.json" >/dev/null
sm speedup import "$f/speedup.json" >/dev/null
echo '{"format":"scalemon-runs","version":1,"hosts":[],"runs":[]}' > "$tmp/empty.json"
sm ts import "$tmp/empty.json" >/dev/null
sqlite3 "$tmp/ts.db" < "$f/timeseries.sql"
sm ts plot timeseries lock_contentions --run aim7-hotspot --per cpu -o "$out/timeseries.png"
sm ts plot heatmap lock_contentions --run aim7-hotspot -o "$out/heatmap.png"
sm speedup plot curve --by vcpus --series variant -o "$out/curve.png"
sm aim7 plot groups --group-by config,ways -o "$out/groups.png"
sm aim7 plot scatter lock_contentions --score jobs_per_min --group-by config -o "$out/scatter.png"
echo "gallery.sh: wrote $(ls "$out" | tr '\n' ' ')in $out"
