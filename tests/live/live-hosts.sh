#!/bin/bash
# live-hosts.sh - a lab of hosts in one database: runs recorded here are
# exported, two more hosts' exports are made from that one by hand (other
# machine ids and host names, other scores), and all three are imported
# into one database.  report --group-by host has one group per host with
# that host's runs and scores; --host selects one host's runs in runs,
# report and curve; the same run names from three hosts do not collide
# (another host's are imported as NAME:HOSTNAME); importing a file again
# adds nothing and says so; --group-by a recorded context key (kernel)
# groups by it; report names each run's host when they come from several.
. "$srcdir/tests/lib.sh"
need_root
LAB=$TMP/lab.db
lab() { "$SCALEMONCTL" --db "$LAB" "$@"; }

start_daemon
for w in 1 2 4; do
        ctl run start "pp-$w" --tag ways=$w >/dev/null || bail "run start"
        "$WL/wl-pingpong" $((1000 * w)) >/dev/null
        ctl run stop --score jpm=$((100 * w)) >/dev/null || bail "run stop"
done
stop_daemon
ctl export >"$TMP/here.json" || bail "export"
here=$(hostname)
python3 - "$TMP" <<'EOP' || bail "cannot make the other hosts' exports"
import json, sys
t = sys.argv[1]
d = json.load(open(t + "/here.json"))
for h, f in (("lab-b", 2), ("lab-c", 3)):
    e = json.loads(json.dumps(d))
    for x in e["hosts"]:
        x["machine_id"], x["hostname"] = "machine-" + h, h
    for r in e["runs"]:
        r["host"] = "machine-" + h
        r["scores"] = {k: v * f for k, v in r["scores"].items()}
    json.dump(e, open("%s/%s.json" % (t, h), "w"))
EOP

out=$(lab import "$TMP/here.json"); ok $? "import this host's runs: $out"
out=$(lab import "$TMP/lab-b.json"); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "imported 3 runs.*3 named like another host's run, imported as NAME:HOSTNAME"
ok $? "lab-b's runs, named like this host's, do not collide: $out"
out=$(lab import "$TMP/lab-c.json"); ok $? "and lab-c's: $out"
out=$(lab import "$TMP/lab-b.json"); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "imported 0 runs.*3 already there (same name, host and start), skipped"
ok $? "importing lab-b's file again adds nothing and says so: $out"
n=$(lab --format json import "$TMP/here.json" | jpy '(d["imported"], d["skipped"], d["renamed"])')
check "and this host's again, in JSON: imported, skipped, renamed = $n" -- test "$n" = "(0, 3, 0)"
names=$(lab --format json runs | jpy 'sorted(r["name"] for r in d["runs"])' | tr '\n' ' ')
check "9 runs, 3 per host: $names" -- test "$names" = "pp-1 pp-1:lab-b pp-1:lab-c pp-2 pp-2:lab-b pp-2:lab-c pp-4 pp-4:lab-b pp-4:lab-c "

g=$(lab --format json report --group-by host | jpy 'repr(sorted((g["tags"]["host"], g["n"], int(g["scores"]["jpm"]["max"])) for g in d["groups"]))')
want=$(python3 -c "print(repr(sorted([('$here', 3, 400), ('lab-b', 3, 800), ('lab-c', 3, 1200)])))")
check "report --group-by host: one group per host with its runs and scores ($g)" -- test "$g" = "$want"
g=$(lab --format json report --group-by host,ways | jpy 'len(d["groups"])')
check "--group-by host,ways: 9 groups ($g)" -- test "$g" = 9
k=$(lab --format json report --group-by kernel | jpy 'repr([(g["tags"]["kernel"], g["n"]) for g in d["groups"]])')
check "--group-by kernel, a recorded context key: one group of 9 ($k)" -- test "$k" = "[('$(uname -r)', 9)]"
r=$(lab --format json runs --host lab-b | jpy 'sorted(r["name"] for r in d["runs"])' | tr '\n' ' ')
check "runs --host lab-b: lab-b's runs only ($r)" -- test "$r" = "pp-1:lab-b pp-2:lab-b pp-4:lab-b "
r=$(lab --format json report --host lab-c | jpy 'sorted((r["name"], r["host"]) for r in d["runs"])')
check "report --host lab-c: lab-c's runs, each with its host ($(echo $r))" -- \
        test "$(echo $r)" = "('pp-1:lab-c', 'lab-c') ('pp-2:lab-c', 'lab-c') ('pp-4:lab-c', 'lab-c')"
c=$(lab --format json curve --by ways --host lab-b | jpy '[(p["n"], p["runs"], p["mean"]) for p in d["points"]]' | tr '\n' ' ')
check "curve --by ways --host lab-b: lab-b's run and score at each point ($c)" -- \
        test "$c" = "(1, 1, 200.0) (2, 1, 400.0) (4, 1, 800.0) "
out=$(lab runs --host nowhere 2>&1); rc=$?
check "--host of no host: exit 1, one line ($out)" -- sh -c "[ $rc = 1 ] && [ \$(echo '$out' | wc -l) = 1 ] && echo '$out' | grep -q 'from host nowhere'"
lab report >"$TMP/report.txt"
grep -q "^pp-1:lab-b: done, host lab-b" "$TMP/report.txt"
ok $? "report names each run's host when they come from several ($(grep '^pp-1:lab-b' "$TMP/report.txt" | cut -c1-60))"
lab report --host lab-b >"$TMP/report1.txt"
! grep -q ", host " "$TMP/report1.txt"; ok $? "and not when they come from one"
finish
