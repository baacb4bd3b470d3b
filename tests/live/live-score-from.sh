#!/bin/bash
# live-score-from.sh - `run exec --score-from` on the tools' real output:
# stress-ng (--metrics-brief, and --yaml FILE), perf bench (sched pipe, futex
# hash), fio (JSON on its standard output, and in --output FILE), and a
# number at a path in a JSON file (json:FILE:PATH, --score-json FILE:PATH).
# The truth is the tools' own output, read again here with awk and
# Python's json module; each tool runs for a second or two.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
for t in stress-ng perf fio; do
        command -v $t >/dev/null || skip_all "$t not installed (tools/install-deps.sh installs it)"
done

score() { sql "SELECT s.value FROM run r JOIN run_score s ON s.run = r.id WHERE r.name = '$1' AND s.key = '$2'"; }
nscores() { sql "SELECT count(*) FROM run r JOIN run_score s ON s.run = r.id WHERE r.name = '$1'"; }
near() {        # near GOT WANT RELATIVE-TOLERANCE
        awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
                                                    exit !(a != "" && b != "" && d <= t * m) }'
}
start_daemon

# --- stress-ng: its metrics table on standard error ---
ctl run exec sng --score-from stress-ng -- stress-ng --cpu 2 --matrix 1 -t 2s --metrics-brief >"$TMP/out" 2>"$TMP/err"
ok $? "run exec --score-from stress-ng -- stress-ng --cpu 2 --matrix 1 --metrics-brief"
grep 'metrc' "$TMP/err" | sed 's/^/# stress-ng: /'
for s in cpu matrix; do
        want=$(awk -v s=$s '/metrc:/ && $4 == s && NF >= 10 { print $9 }' "$TMP/err")
        got=$(score sng $s)
        near "$got" "$want" 0; ok $? "score $s = stress-ng's bogo ops/s (real time) for $s ($got, table $want)"
done
[ "$(nscores sng)" = 2 ]; ok $? "and nothing else (its miscellaneous metrics are not scores): $(nscores sng)"

# --- stress-ng --yaml FILE: read from the file, with more digits ---
ctl run exec sngy --score-from stress-ng -- stress-ng --cpu 1 -t 1s --metrics-brief --yaml "$TMP/s.yaml" >/dev/null 2>"$TMP/err"
ok $? "run exec --score-from stress-ng -- stress-ng ... --yaml FILE"
want=$(awk '/stressor: cpu/ { on = 1 } on && /bogo-ops-per-second-real-time:/ { print $2; exit }' "$TMP/s.yaml")
table=$(awk '/metrc:/ && $4 == "cpu" && NF >= 10 { print $9 }' "$TMP/err")
got=$(score sngy cpu)
near "$got" "$want" 1e-9; ok $? "score cpu = the YAML's bogo-ops-per-second-real-time ($got, YAML $want)"
near "$got" "$table" 0.0001; ok $? "which the table printed rounded ($table)"

# --- perf bench sched pipe: Total time, usecs/op, ops/sec ---
ctl run exec pipe --score-from perf-bench -- perf bench sched pipe -l 20000 >"$TMP/out" 2>&1
ok $? "run exec --score-from perf-bench -- perf bench sched pipe"
sed 's/^/# perf: /' "$TMP/out"
want=$(awk '/Total time:/ { print $3 }' "$TMP/out"); got=$(score pipe total_time)
near "$got" "$want" 0; ok $? "total_time = its Total time in seconds ($got, printed $want)"
want=$(awk '$2 == "usecs/op" { print $1 }' "$TMP/out"); got=$(score pipe usecs_per_op)
near "$got" "$want" 1e-9; ok $? "usecs_per_op ($got, printed $want)"
want=$(awk '$2 == "ops/sec" && NF == 2 { print $1 }' "$TMP/out"); got=$(score pipe ops_per_sec)
near "$got" "$want" 0; ok $? "ops_per_sec ($got, printed $want)"

# --- perf bench futex hash: its Averaged line, not the threads' ---
ctl run exec futex --score-from perf-bench -- perf bench futex hash -t 2 -r 1 >"$TMP/out" 2>&1
ok $? "run exec --score-from perf-bench -- perf bench futex hash"
want=$(awk '/^Averaged/ { print $2 }' "$TMP/out"); got=$(score futex ops_per_sec)
near "$got" "$want" 0; ok $? "ops_per_sec = its Averaged operations/sec ($got, printed $want)"

# --- fio: JSON on standard output, and in --output FILE ---
fio_args="--name=randread --filename=$TMP/fio.dat --size=8M --rw=randread --bs=4k --runtime=1 --time_based"
# shellcheck disable=SC2086
ctl run exec fio1 --score-from fio -- fio $fio_args --output-format=json >"$TMP/fio1.json" 2>"$TMP/err"
ok $? "run exec --score-from fio -- fio ... --output-format=json"
for k in read.iops read.bw_bytes read.lat_ns.mean; do
        want=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["jobs"][0]["read"]
k = sys.argv[2].split(".")[1:]
print(d[k[0]] if len(k) == 1 else d[k[0]][k[1]])' "$TMP/fio1.json" "$k")
        got=$(score fio1 "$k")
        near "$got" "$want" 1e-9; ok $? "score $k = fio's JSON ($got, fio $want)"
done
[ -z "$(score fio1 write.iops)" ]; ok $? "no write scores for a job that only read"
# shellcheck disable=SC2086
ctl run exec fio2 --score-from fio --score-json "$TMP/fio2.json:jobs.0.job_runtime" \
        -- fio $fio_args --output-format=json --output="$TMP/fio2.json" >/dev/null 2>"$TMP/err"
ok $? "run exec --score-from fio --score-json FILE:PATH -- fio ... --output=FILE"
want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"])' "$TMP/fio2.json")
near "$(score fio2 read.iops)" "$want" 1e-9; ok $? "fio's --output FILE read: read.iops $(score fio2 read.iops) ($want)"
want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["jobs"][0]["job_runtime"])' "$TMP/fio2.json")
[ "$(score fio2 job_runtime)" = "$want.0" ]; ok $? "--score-json FILE:PATH: job_runtime $(score fio2 job_runtime) ($want)"

# --- json:-:PATH on standard output, beside a regex, and a key both give ---
printf '{"summary": {"ops": 1234.5, "label": "x"}}\n' >"$TMP/doc.json"
ctl run exec both --score-from 'json:-:summary.ops' --score-regex 'ops=ops": ([0-9.]+)' \
        -- cat "$TMP/doc.json" >/dev/null 2>"$TMP/err"
ok $? "run exec --score-from json:-:summary.ops with --score-regex"
[ "$(score both ops)" = 1234.5 ]; ok $? "json:-:PATH reads standard output: ops $(score both ops)"
grep -q "^scalemonctl: score ops: given by --score-regex, not taken from json$" "$TMP/err"
ok $? "a score both give is the regex's, and that is said: $(head -c 200 "$TMP/err")"

# --- what goes wrong says so, in one line ---
ctl run exec nometrics --score-from stress-ng -- stress-ng --cpu 1 -t 1s >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 0 ] && grep -q "^scalemonctl: --score-from stress-ng: no stress-ng metrics table in the command's output (run stress-ng with --metrics-brief, --metrics or --yaml FILE)$" "$TMP/err"
ok $? "stress-ng without metrics: the run is recorded (exit $rc) and the line says what to add"
[ "$(nscores nometrics)" = 0 ] && [ "$(sql "SELECT status FROM run WHERE name = 'nometrics'")" = done ]
ok $? "with no score"
ctl run exec badfmt --score-from sysbench -- true >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$TMP/err")" = 1 ] &&
        grep -q "^scalemonctl: --score-from 'sysbench': use stress-ng, perf-bench, fio or json:FILE:PATH$" "$TMP/err"
ok $? "an unknown format: exit $rc, one line: $(cat "$TMP/err")"
[ -z "$(sql "SELECT name FROM run WHERE name = 'badfmt'")" ]; ok $? "and no run recorded"
ctl run exec badjson --score-json "$TMP/none.json" -- true >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 2 ] && grep -q "^scalemonctl: --score-json '$TMP/none.json': use FILE:PATH, e.g. result.json:summary.ops" "$TMP/err"
ok $? "--score-json without a PATH: exit $rc: $(cat "$TMP/err")"
ctl run exec nofile --score-json "$TMP/none.json:a.b" -- true >/dev/null 2>"$TMP/err"; rc=$?
[ $rc = 0 ] && grep -q "^scalemonctl: --score-from json: cannot read $TMP/none.json: No such file or directory$" "$TMP/err"
ok $? "a JSON file the command did not write: said ($(cat "$TMP/err"))"
stop_daemon; ok $? "the daemon stops cleanly"
finish
