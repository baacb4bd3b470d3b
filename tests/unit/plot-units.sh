#!/bin/bash
# plot-units.sh - charts a person reads: rate axes in the units of the
# counter (a lock wait in us/s or ms/s, not ns/s), numbers of 10^9 set as
# gnuplot's enhanced text draws them (a raised 9, not "10^{9}" printed),
# titles that name the metric and the runs.  Rendered by gnuplot to SVG
# (whose text is read) and PNG, and the script gnuplot was given read
# through a stand-in.  On the generated export of groups-units.sh and the
# seed time-series fixture with its context switches relabelled as a
# lock wait in ns.  No root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test reads JSON and SVG with it)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (apt-get install gnuplot-nox)"
python3 "$srcdir/tests/fixtures/gen-units.py" > "$TMP/units.json" || bail "generator"
sm() { "$SCALEMONCTL" --db "$TMP/$1.db" "${@:2}"; }
sm u import "$TMP/units.json" >/dev/null || bail "import"
echo '{"format":"scalemon-runs","version":1,"hosts":[],"runs":[]}' > "$TMP/empty.json"
sm ts import "$TMP/empty.json" >/dev/null || bail "empty database"
sed "s/'context_switches', 'cpu', 'switches'/'lock_wait_ns', 'cpu', 'ns'/; s/name = 'context_switches'/name = 'lock_wait_ns'/g" \
        "$srcdir/tests/fixtures/seeds/timeseries.sql" | sqlite3 "$TMP/ts.db" || bail "time-series fixture"
# SVG text: each <text> element's characters, with a raised part as ^N
svg_text() {
        python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text"):
    out = ""
    for s in t.iter("{http://www.w3.org/2000/svg}tspan"):
        dy = s.get("dy", "0").replace("px", "")
        out += ("^" if float(dy) < 0 else "") + (s.text or "")
    print(out if t.find("{http://www.w3.org/2000/svg}tspan") is not None else (t.text or ""))
PY
}
cat > "$TMP/gp-standin" <<'GP'
#!/bin/sh
cat > "$GP_SCRIPT"
out=$(sed -n "s/^set output '\(.*\)'$/\1/p" "$GP_SCRIPT")
[ -z "$out" ] || : > "$out"
GP
chmod +x "$TMP/gp-standin"
gp() { local out=$1 db=$2; shift 2; GP_SCRIPT="$out" SCALEMON_GNUPLOT="$TMP/gp-standin" sm "$db" plot "$@" 2>/dev/null; }

# --- a count of 10^9 per second: the tics typeset, not the markup ---
sm u plot scatter cycles -o "$TMP/cyc.svg"; ok $? "scatter cycles: svg"
svg_text "$TMP/cyc.svg" > "$TMP/cyc.txt"
! grep -q '\^{' "$TMP/cyc.svg"; ok $? "no raw ^{ markup in the svg"
grep -qx "2×10^9" "$TMP/cyc.txt" && grep -qx "4×10^9" "$TMP/cyc.txt"; ok $? "x tics 2×10 with a raised 9: $(grep -m3 '×10' "$TMP/cyc.txt" | tr '\n' ' ')"
grep -qx "cycles per second (cycles/s)" "$TMP/cyc.txt"; ok $? "x label: the metric per second in its unit"
grep -q "^bogo_ops_s against cycles, one point per run (.*n=12" "$TMP/cyc.txt"; ok $? "title names the score, the metric and the runs: $(grep -m1 against "$TMP/cyc.txt")"
gp "$TMP/cyc.gp" u scatter cycles -o "$TMP/cyc.png"
grep -qx "set xtics enhanced" "$TMP/cyc.gp" && grep -qx "set ytics enhanced" "$TMP/cyc.gp" && grep -qx "set format '%h'" "$TMP/cyc.gp"
ok $? "the script: numeric tics enhanced, in gnuplot's %h format"
grep -q "^set terminal pngcairo .* enhanced" "$TMP/cyc.gp"; ok $? "on an enhanced terminal (pngcairo)"
grep -q "^set xlabel 'cycles per second (cycles/s)' noenhanced" "$TMP/cyc.gp"; ok $? "labels stay noenhanced (metric names have underscores)"
sm u plot scatter cycles -o "$TMP/cyc.png"; ok $? "png rendered by gnuplot"
[ "$(head -c 8 "$TMP/cyc.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] && [ "$(stat -c %s "$TMP/cyc.png")" -gt 10000 ]
ok $? "a PNG of $(stat -c %s "$TMP/cyc.png") bytes"

# --- a time: lock wait in ms/s ---
sm u --format json plot scatter lock_wait_ns > "$TMP/lw.json"
[ "$(jpy 'd["xlabel"]' < "$TMP/lw.json")" = "lock_wait_ns per second (ms/s)" ]; ok $? "lock wait's axis in ms/s"
want=$(python3 -c '
import json
d = json.load(open("'"$TMP/units.json"'"))
print(sorted(set(round(r["totals"]["system"]["lock_wait_ns"] / 10 / 1e6, 6) for r in d["runs"])))')
got=$(jpy 'sorted(set(round(p["x"], 6) for s in d["series"] for p in s["points"]))' < "$TMP/lw.json" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
[ "[$got]" = "$want" ]; ok $? "the points are the runs' lock wait per second in ms ($want)"
sm u plot scatter lock_wait_ns -o "$TMP/lw.svg"
svg_text "$TMP/lw.svg" | grep -qx "lock_wait_ns per second (ms/s)"; ok $? "and the svg says so"
! svg_text "$TMP/lw.svg" | grep -q "×10"; ok $? "with plain tics (49 to 197 ms/s need no power of ten)"

# --- a maximum: the run's longest wait, in ms, never per second ---
sm u --format json plot scatter lock_wait_max_ns > "$TMP/mx.json"
[ "$(jpy 'd["xlabel"]' < "$TMP/mx.json")" = "lock_wait_max_ns, the run's maximum (ms)" ]; ok $? "a maximum's axis: the run's maximum, in ms"
want=$(python3 -c '
import json
d = json.load(open("'"$TMP/units.json"'"))
print(sorted(set(r["totals"]["system"]["lock_wait_max_ns"] / 1e6 for r in d["runs"])))')
got=$(jpy 'sorted(set(p["x"] for s in d["series"] for p in s["points"]))' < "$TMP/mx.json" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
[ "[$got]" = "$want" ]; ok $? "its points are the runs' maxima in ms, not divided by the run's 10 s ($want)"

# --- time series and heat map of a time counter ---
sm ts --format json plot timeseries lock_wait_ns --run aim7-hotspot > "$TMP/tsl.json"
[ "$(jpy 'd["ylabel"]' < "$TMP/tsl.json")" = "lock_wait_ns per second (us/s)" ]; ok $? "timeseries: us/s for a wait of some 170 us/s"
want=$(sqlite3 "$TMP/ts.db" "SELECT total FROM cpu_sample WHERE metric = (SELECT id FROM metric WHERE name = 'lock_wait_ns') ORDER BY tick LIMIT 1")
got=$(jpy 'd["series"][0]["points"][0]["y"]' < "$TMP/tsl.json")
awk -v w="$want" -v g="$got" 'BEGIN { exit !(g * 1000 > w * 0.999 && g * 1000 < w * 1.001) }'; ok $? "the first point is the stored ns over 1000 ($want ns/s: $got us/s)"
grep -q "lock_wait_ns per second, run aim7-hotspot" "$TMP/tsl.json"; ok $? "the title names the metric and the run"
sm ts --format json plot heatmap lock_wait_ns --run aim7-hotspot > "$TMP/hm.json"
[ "$(jpy 'd["heatmap"]["zlabel"]' < "$TMP/hm.json")" = "lock_wait_ns per second (us/s)" ]; ok $? "heatmap: its colour scale in us/s"
sm ts --format json plot timeseries lock_contentions --run aim7-hotspot | grep -q '"ylabel": "lock_contentions per second (contentions/s)"'
ok $? "a count stays per second in its unit"
sm ts plot timeseries lock_wait_ns --run aim7-hotspot -o "$TMP/tsl.png"; ok $? "timeseries png"
finish
