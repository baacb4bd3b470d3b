#!/bin/bash
# plot.sh - every kind of chart from fixture data: svg that is well-formed
# XML and carries the expected series and point counts (as the same plot's
# --format json says), png, the terminal chart's title and axis labels, and
# the message when gnuplot is missing.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test reads JSON and SVG with it)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (apt-get install gnuplot-nox)"
command -v xmllint >/dev/null || skip_all "xmllint not installed (apt-get install libxml2-utils)"
F=$srcdir/tests/fixtures/seeds
sm() { "$SCALEMONCTL" --db "$TMP/$1.db" "${@:2}"; }
sm aim7 import "$F/aim7.json" >/dev/null && sm speedup import "$F/speedup.json" >/dev/null || bail "fixtures"
echo '{"format":"scalemon-runs","version":1,"hosts":[],"runs":[]}' > "$TMP/empty.json"
sm ts import "$TMP/empty.json" >/dev/null && sqlite3 "$TMP/ts.db" < "$F/timeseries.sql" || bail "time-series fixture"

# series name -> number of points drawn, from gnuplot's svg: each plotted
# series is <g id="gnuplot_plot_N"><title>NAME</title>, each point a <use>,
# one more for the sample in the legend
svg_counts() {
        python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    if g.get("id", "").startswith("gnuplot_plot_"):
        t = g.find("s:title", ns)
        uses = len(list(g.iter("{http://www.w3.org/2000/svg}use")))
        print("%s=%d" % (t.text if t is not None else "?", max(uses - 1, 0)))
PY
}
json_counts() { jpy '["%s=%d" % (s["name"], len(s["points"])) for s in d["series"] if s["points"]]'; }

chart() {       # chart NAME DB ARGS...: svg + json + terminal, compared
        local name=$1 db=$2; shift 2
        sm "$db" plot "$@" -o "$TMP/$name.svg"; ok $? "$name: svg written"
        xmllint --noout "$TMP/$name.svg"; ok $? "$name: well-formed XML"
        sm "$db" --format json plot "$@" > "$TMP/$name.json"; ok $? "$name: --format json"
        local want got
        want=$(json_counts < "$TMP/$name.json" | sort)
        got=$(svg_counts "$TMP/$name.svg" | grep -v '^\(USL\|linear\)' | sort)
        [ -n "$want" ] && [ "$want" = "$got" ]; ok $? "$name: series and point counts in the svg match the data ($(echo $want))"
        [ -n "$want" ] && [ "$want" = "$got" ] || diag "svg has: $(echo $got)"
        COLUMNS=120 LINES=40 sm "$db" plot "$@" > "$TMP/$name.txt"; ok $? "$name: terminal chart"
        local title xl yl
        title=$(jpy 'd["title"]' < "$TMP/$name.json"); xl=$(jpy 'd["xlabel"]' < "$TMP/$name.json"); yl=$(jpy 'd["ylabel"]' < "$TMP/$name.json")
        grep -qF "${title:0:40}" "$TMP/$name.txt" && grep -qF "$xl" "$TMP/$name.txt"; ok $? "$name: terminal chart has the title and the x label"
        tr -d ' \n' < "$TMP/$name.txt" | grep -qF "$(echo "${yl:0:12}" | tr -d ' ')"
        ok $? "$name: and the y label"
        [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$TMP/$name.txt")" -le 120 ]; ok $? "$name: fits a 120-column terminal"
        sm "$db" plot "$@" -o "$TMP/$name.png"; ok $? "$name: png"
        [ "$(head -c 8 "$TMP/$name.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ]; ok $? "$name: png signature"
}

chart timeseries ts timeseries lock_contentions --run aim7-hotspot --per cpu
[ "$(jpy 'len(d["series"])' < "$TMP/timeseries.json")" = 8 ]; ok $? "timeseries: one line per CPU"
[ "$(jpy '[m["text"] for m in d["markers"]]' < "$TMP/timeseries.json" | tr '\n' ,)" = "warm-up done,cool-down," ]; ok $? "timeseries: the run's marks"
grep -q "warm-up done" "$TMP/timeseries.svg"; ok $? "timeseries: marks drawn with their text"
chart timeseries-node ts timeseries context_switches --run aim7-hotspot --per node
sm ts plot heatmap lock_contentions --run aim7-hotspot -o "$TMP/heat.svg"; ok $? "heatmap: svg written"
xmllint --noout "$TMP/heat.svg"; ok $? "heatmap: well-formed XML"
grep -q "<image" "$TMP/heat.svg"; ok $? "heatmap: drawn as an image"
sm ts --format json plot heatmap lock_contentions --run aim7-hotspot > "$TMP/heat.json"
[ "$(jpy 'len(d["heatmap"]["y"])' < "$TMP/heat.json")" = 8 ] && [ "$(jpy 'len(d["heatmap"]["x"])' < "$TMP/heat.json")" = 120 ]
ok $? "heatmap: 8 CPUs by 120 intervals"
jpy 'max(range(8), key=lambda c: d["heatmap"]["z"][c][40])' < "$TMP/heat.json" | grep -qx 2; ok $? "heatmap: the hot spot on cpu2 at 40s"
COLUMNS=100 LINES=30 sm ts plot heatmap lock_contentions --run aim7-hotspot > "$TMP/heat.txt"
grep -q "lock_contentions per second on each CPU" "$TMP/heat.txt" && grep -q "@@@" "$TMP/heat.txt"; ok $? "heatmap: terminal shading"
chart curve speedup curve --by vcpus --series variant
grep -q "<title>USL fit baseline" "$TMP/curve.svg" && grep -q "<title>linear (ideal)" "$TMP/curve.svg"; ok $? "curve: USL fits and the ideal line drawn"
chart groups aim7 groups --group-by config,ways
[ "$(jpy '[len(s["points"]) for s in d["series"] if s["name"] == "HIGH VARIANCE"][0]' < "$TMP/groups.json")" = 1 ]; ok $? "groups: one HIGH VARIANCE group marked"
chart scatter aim7 scatter lock_contentions --score jobs_per_min --group-by config
grep -q "Spearman rho -1.00, n=18" "$TMP/scatter.json"; ok $? "scatter: title carries the correlation"

# --- the gnuplot script itself, from a stand-in that keeps it ---
printf '#!/bin/sh\ncat > "$GP_SCRIPT"\n' > "$TMP/gp-standin"; chmod +x "$TMP/gp-standin"
gp() {  # gp FILE DB ARGS...: the terminal chart's script into FILE
        local out=$1 db=$2; shift 2
        COLUMNS=120 LINES=40 GP_SCRIPT="$out" SCALEMON_GNUPLOT="$TMP/gp-standin" sm "$db" plot "$@" >/dev/null
}
# two more runs inside the time-series fixture's 120 s: 10-50 s and 60-110 s
t0=$(sqlite3 "$TMP/ts.db" "SELECT start FROM run WHERE name = 'aim7-hotspot'")
h=$(sqlite3 "$TMP/ts.db" "SELECT host FROM run WHERE name = 'aim7-hotspot'")
sqlite3 "$TMP/ts.db" "INSERT INTO run (name, host, status, start, end, start_tick, end_tick, exit_status) VALUES
        ('part-1', $h, 'done', $t0 + 10000000000, $t0 + 50000000000, 10, 50, 0),
        ('part-2', $h, 'done', $t0 + 60000000000, $t0 + 110000000000, 60, 110, 0)" || bail "runs in the time-series fixture"
gp "$TMP/multi.gp" ts timeseries lock_contentions --since part-1 --until part-2; ok $? "timeseries over two runs: script written"
grep -q '^set title ".*part-1 to part-2 (2 runs)' "$TMP/multi.gp"; ok $? "the title names the range, not the first run: $(grep -m1 '^set title' "$TMP/multi.gp" | cut -c1-90)"
grep -Eq "^set arrow from 0, graph 0 to 0, graph 1 nohead" "$TMP/multi.gp" && grep -Eq "^set arrow from 40, graph 0 to 40, graph 1 nohead" "$TMP/multi.gp" &&
        grep -Eq "^set arrow from 50, graph 0 to 50, graph 1 nohead" "$TMP/multi.gp" && grep -Eq "^set arrow from 100, graph 0 to 100, graph 1 nohead" "$TMP/multi.gp"
ok $? "each run's window drawn: part-1 at 0..40 s, part-2 at 50..100 s"
grep -q "^set label 'part-1' at 0," "$TMP/multi.gp" && grep -q "^set label 'part-2' at 50," "$TMP/multi.gp"; ok $? "and named"
grep -q "^set autoscale xfix" "$TMP/multi.gp"; ok $? "the x axis starts at the data (autoscale xfix), not at a round tic like -5"
sm ts --format json plot timeseries lock_contentions --since part-1 --until part-2 > "$TMP/multi.json"
[ "$(jpy '[w["run"] for w in d["windows"]]' < "$TMP/multi.json" | tr '\n' ,)" = "part-1,part-2," ]; ok $? "JSON: the windows"
gp "$TMP/curve.gp" speedup curve --by vcpus --series variant
plotline=$(sed -n '/^plot /,/[^\\]$/p' "$TMP/curve.gp" | tr -d '\n')
echo "$plotline" | grep -Eq '^plot f0\(x\).*\$s0 ' ; ok $? "curve: the fits drawn first, the data over them"
grep -q '^set title ".*\\nx: N = vcpus' "$TMP/curve.gp" && grep -q '^unset xlabel' "$TMP/curve.gp"
ok $? "curve: in the terminal the x label is a line of the title, where no point can land on it"
gp "$TMP/scatter.gp" aim7 scatter lock_contentions --score jobs_per_min --group-by config
pts=$(grep -o 'with points pt [0-9]*' "$TMP/scatter.gp" | sort -u | wc -l)
[ "$pts" = 2 ]; ok $? "scatter: each group its own letter in the terminal ($pts point types for 2 groups)"
gp "$TMP/heat.gp" ts heatmap lock_contentions --run aim7-hotspot
# the hot spot peaks near 8.4k/s: nine levels, the last up to the maximum
grep -Eq '^set title .*scale: \.<[0-9.]+k? :<[0-9.]+k? -<.* @<=[0-9.]+k?"' "$TMP/heat.gp"; ok $? "heatmap: the terminal chart has a scale: $(grep -o 'scale: [^"]*' "$TMP/heat.gp")"
COLUMNS=100 LINES=30 sm ts plot heatmap lock_contentions --run aim7-hotspot | grep -q "scale: \.<"; ok $? "heatmap: and gnuplot prints it in 100 columns"
hmax=$(jpy 'max(max(r) for r in d["heatmap"]["z"])' < "$TMP/heat.json")
want=$(python3 -c "v=$hmax; print('%.3gk' % (v/1e3) if v >= 1e3 else '%.3g' % v)")
grep -q "@<=$want\"" "$TMP/heat.gp"; ok $? "heatmap: the top of the scale is the largest cell of the data ($hmax/s: @<=$want)"

# no gnuplot
out=$(PATH=/nonexistent "$SCALEMONCTL" --db "$TMP/aim7.db" plot groups --group-by config 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "plot needs gnuplot, which is not on PATH: install it (Debian: apt-get install gnuplot-nox)"
ok $? "no gnuplot on PATH: exit 1 and how to install it ($out)"
PATH=/nonexistent "$SCALEMONCTL" --db "$TMP/aim7.db" --format json plot groups --group-by config >/dev/null; ok $? "--format json needs no gnuplot"
err() { local out; out=$("$@" 2>&1 >/dev/null); [ $? = 2 ]; ok $? "exit 2: $out"; }
err sm aim7 plot pie
err sm aim7 plot groups --group-by config -o chart.pdf
err sm aim7 plot timeseries
err sm ts plot heatmap numa_hit --run aim7-hotspot
err sm aim7 plot curve
[ ! -e chart.pdf ]; ok $? "nothing written on a usage error"
finish
