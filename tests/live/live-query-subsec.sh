#!/bin/bash
# live-query-subsec.sh - query times below a second, and the WHEN words
# people type.  With --step 500ms every row has its own
# time: the table prints milliseconds (and whole seconds again for a step of
# a second or more), CSV and JSON carry RFC 3339 times with the fraction,
# and consecutive times are exactly the step apart.  --since today,
# yesterday, -1d and now-1h are accepted and select the same samples as
# the equivalent absolute times.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v python3 >/dev/null || skip_all "python3 not installed"

INTERVAL=100ms start_daemon
sleep 3.2
t0=$(now_ns); since=$(ns_to_when $((t0 - 3000000000))); until=$(ns_to_when "$t0")
wait_flushed "$t0" || bail "nothing flushed"

ctl query context_switches --since "$since" --until "$until" --step 500ms >"$TMP/table"; ok $? "query --step 500ms (table)"
sed 's/^/# /' "$TMP/table" | head -8
rows=$(tail -n +3 "$TMP/table" | awk '{ print $1 " " $2 }')
n=$(echo "$rows" | wc -l)
[ "$n" -ge 5 ]; ok $? "at least 5 rows in 3 s ($n)"
[ "$(echo "$rows" | sort -u | wc -l)" = "$n" ]; ok $? "no two rows have the same time"
echo "$rows" | grep -Evq '^[0-9-]+ [0-9:]+\.(000|500)$'; [ $? = 1 ]; ok $? "every time ends in .000 or .500"

ctl --format csv query context_switches --since "$since" --until "$until" --step 500ms >"$TMP/csv"; ok $? "CSV"
python3 - "$TMP/csv" <<'PY'; ok $? "CSV times are RFC 3339 with the fraction, 0.5 s apart"
import csv, sys, datetime
rows = list(csv.DictReader(open(sys.argv[1])))
ts = [datetime.datetime.fromisoformat(r["time"].replace("Z", "+00:00")) for r in rows]
assert all("." in r["time"] and r["time"].endswith("Z") for r in rows), rows[0]
d = [(b - a).total_seconds() for a, b in zip(ts, ts[1:])]
assert len(d) >= 4 and all(x == 0.5 for x in d), d
PY
ctl --format json query context_switches --since "$since" --until "$until" --step 500ms >"$TMP/json"; ok $? "JSON"
python3 - "$TMP/json" <<'PY'; ok $? "JSON times carry the fraction, 0.5 s apart"
import json, sys, datetime
pts = json.load(open(sys.argv[1]))["points"]
ts = [datetime.datetime.fromisoformat(p["time"].replace("Z", "+00:00")) for p in pts]
assert all(p["time"][19] == "." for p in pts)
d = [(b - a).total_seconds() for a, b in zip(ts, ts[1:])]
assert len(d) >= 4 and all(x == 0.5 for x in d), d
PY
ctl query context_switches --since "$since" --until "$until" --step 1s >"$TMP/table1"; ok $? "query --step 1s"
tail -n +3 "$TMP/table1" | awk '{ print $2 }' | grep -q '\.'; [ $? = 1 ]; ok $? "a step of a second prints whole seconds"
ctl query context_switches --since "$since" --until "$until" >"$TMP/raw"; ok $? "raw ticks (100 ms)"
raw=$(tail -n +3 "$TMP/raw" | awk '{ print $1 " " $2 }')
[ "$(echo "$raw" | sort -u | wc -l)" = "$(echo "$raw" | wc -l)" ] && [ "$(echo "$raw" | wc -l)" -ge 20 ]
ok $? "raw 100 ms ticks: $(echo "$raw" | wc -l) rows, each time its own"

# the WHEN words: the same rows as the absolute times they stand for
same() {        # same DESC WORD ABSOLUTE
        local a b
        a=$(ctl --format csv query context_switches --since "$2" --until "$until" --step 1s 2>&1 | md5sum)
        b=$(ctl --format csv query context_switches --since "$3" --until "$until" --step 1s 2>&1 | md5sum)
        [ "$a" = "$b" ] && ctl query context_switches --since "$2" --until "$until" --step 1s >/dev/null
        ok $? "$1"
}
midnight=$(date -d 'today 00:00' +%s); ymid=$(date -d 'yesterday 00:00' +%s)
same "--since today = local midnight" today "@$midnight"
same "--since yesterday = the midnight before" yesterday "@$ymid"
same "--since -1d" -1d "@$(( t0 / 1000000000 - 86400 ))"      # to the second: the same rows
same "--since now-1h" now-1h "@$(( $(date +%s) - 3600 ))"
ctl query context_switches --since now-1x >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "^scalemonctl: --since 'now-1x': not a time; use .*now-1h" "$TMP/err"; ok $? "now-1x: not a time (exit $rc)"
stop_daemon; ok $? "the daemon stops cleanly"
finish
