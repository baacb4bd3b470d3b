#!/bin/bash
# explain-fixtures.sh - explain's causes on real runs of a 2-CPU machine,
# recorded once (tests/fixtures/explain/record.sh: three 5 s runs of
# stress-ng --cpu 2 per case, each in a cgroup of its own, the second with
# a known trouble, and ten more such groups per case; and 30 groups of three 1.5 s runs with none), so that
# the answer is judged the same way every time, without root:
#   hog     stress-ng --cpu 2 OUTSIDE the run's cgroup, +1 s for 3 s
#   faults  a page-fault storm inside the run (wl-touch again and again), +1.5 s for 2 s
#   locks   wl-mmapstorm inside the run (mmap_lock contended), +1.5 s for 2 s
# The first cause must be that trouble, in its family and words, with its
# phase where the counters show it in time; the normal runs have none; the
# answer is the same whatever else is in the database; and the quiet groups
# claim no cause the benchmark did not feel itself (its score).
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not installed (the test reads JSON with it)"
command -v gzip >/dev/null || skip_all "gzip not installed (the fixtures are compressed)"
F=$srcdir/tests/fixtures/explain
for c in hog faults locks; do
        gzip -dc "$F/$c.db.gz" > "$TMP/$c.db"; ok $? "fixture $c"
done
x() { "$SCALEMONCTL" --db "$TMP/$1.db" --format json explain "$2"; }
first() { jpy "$1" < "$TMP/$2.json"; }

# --- another process's CPU time: the hog ---
x hog hog-r2 > "$TMP/hog.json"; ok $? "explain hog-r2"
[ "$(first '" ".join([d["causes"][0]["family"], d["causes"][0]["part"], d["causes"][0]["metrics"][0]])' hog)" = \
  "others others everything_else:cpu_time" ]
ok $? "first cause: another process's CPU time ($(first 'd["causes"][0]["text"][:80]' hog))"
first 'd["causes"][0]["text"]' hog | grep -Eq "^Another process took 3\.51 CPU-s from \+1\.0 s to \+4\.0 s \(0\.70 CPU-s a second, against 0\.11-0\.16 in the siblings; 34\.9% of the run's CPU-seconds; the benchmark's own CPU time fell by 2\.84 CPU-s; its tasks waited for a CPU 1\.82 s"
ok $? "in plain words, with what the benchmark lost"
first 'd["summary"]' hog | grep -q "^Another process took 3.51 CPU-s"; ok $? "the summary begins with it"
# when: the hog ran from +1 s for 3 s (as record.sh started it); from the
# run's own per-tick CPU time against the machine's busy time
first '(d["causes"][0]["window"]["start_offset_s"], d["causes"][0]["window"]["duration_s"])' hog > "$TMP/ph"
awk '{ gsub(/[(),]/, " "); exit !($1 >= 0.9 && $1 <= 1.3 && $2 >= 2.7 && $2 <= 3.3) }' "$TMP/ph"; ok $? "its window: the hog's +1 s for 3 s ($(cat "$TMP/ph"))"
# report's figure, in report's words (one function writes both)
line=$("$SCALEMONCTL" --db "$TMP/hog.db" report --since hog-r2 --until hog-r2 | grep "^  cpu time busy:" | sed 's/^  //')
first 'd["summary"]' hog | grep -qF "The run's $line."; ok $? "the CPU time split as report says it: $line"
[ "$(first '[c["family"] for c in d["causes"]].count("pressure")' hog)" = 0 ]; ok $? "its pressure is its effect, not a second cause"
[ "$(first 'round(d["causes"][0]["share"], 3)' hog)" = 0.349 ]; ok $? "share 0.349 of the run's CPU-seconds"

# --- a page-fault storm ---
x faults faults-r2 > "$TMP/faults.json"; ok $? "explain faults-r2"
[ "$(first 'd["causes"][0]["family"]' faults)" = page_faults ]; ok $? "first cause: page faults ($(first 'd["causes"][0]["text"][:80]' faults))"
[ "$(first 'sorted(d["causes"][0]["metrics"])' faults | tr '\n' ' ')" = "numa_hit numa_local page_faults page_faults_minor " ]
ok $? "one cause for the four counters of one storm"
# the storm ran from +1.5 s for 2 s (as record.sh started it, give or take
# a 100 ms tick and the shell's start)
first '(d["causes"][0]["phase"]["start_offset_s"], d["causes"][0]["phase"]["duration_s"])' faults > "$TMP/ph"
awk '{ gsub(/[(),]/, " "); exit !($1 >= 1.4 && $1 <= 1.7 && $2 >= 1.8 && $2 <= 2.3) }' "$TMP/ph"; ok $? "its phase: the storm's +1.5 s for 2 s ($(cat "$TMP/ph"))"
first 'd["causes"][0]["text"]' faults | grep -q "^A page-fault storm, minor page faults: 107k/s above the siblings' highest (11.4x; 10.7% of the run's CPU-seconds at its nominal cost) on CPUs 0-1 from +1.5 s to +3.6 s"
ok $? "in plain words"

# --- a lock storm ---
x locks locks-r2 > "$TMP/locks.json"; ok $? "explain locks-r2"
[ "$(first '" ".join([d["causes"][0]["family"], d["causes"][0]["metrics"][0]])' locks)" = "locks lock_wait_ns" ]
ok $? "first cause: kernel lock wait ($(first 'd["causes"][0]["text"][:80]' locks))"
[ "$(first 'd["causes"][0]["callers"][0]["caller"]' locks)" = "__x64_sys_mprotect+0x1b" ]; ok $? "the caller whose wait grew most: mprotect, which the storm calls"
w=$(first 'round(d["causes"][0]["callers"][0]["wait_ms"], 1)' locks)
[ "$w" = 1117.4 ]; ok $? "its wait in ms from the run's lock table: $w"
first '(d["causes"][0]["phase"]["start_offset_s"], d["causes"][0]["phase"]["duration_s"])' locks > "$TMP/ph"
awk '{ gsub(/[(),]/, " "); exit !($1 >= 1.4 && $1 <= 1.7 && $2 >= 1.8 && $2 <= 2.3) }' "$TMP/ph"; ok $? "its phase: the storm's +1.5 s for 2 s ($(cat "$TMP/ph"))"
first 'd["summary"]' locks | grep -q "^Kernel lock wait: 1.31 s above the siblings' highest (62.5x; 13.1% of the run's CPU-seconds) on CPUs 0-1 from +1.5 s to +3.5 s; most at __x64_sys_mprotect+0x1b (rwsem:W) 1117.4 ms against 0.0 ms"
ok $? "in plain words, with the caller"
[ "$(first '[c["metric"] for c in d["counters"] if c["metric"].startswith("lock_wait_max")]' locks)" = "" ]; ok $? "lock_wait_max_ns is never a rate"

# --- the normal runs of each case: nothing ---
for c in hog faults locks; do
        for r in 1 3; do
                [ "$(x $c $c-r$r | jpy 'len(d["causes"])')" = 0 ]; ok $? "$c-r$r, a normal run: no cause"
        done
done

# --- ten groups of each case: the first cause, 10 of 10 ---
# record.sh groups: ten more groups of each case, recorded the same way,
# one database per case (runs CASE-gG-r1..3, tagged group=G: the siblings
# of CASE-gG-r2 are that group's r1 and r3).  The same judgement as above:
# hog, another process's CPU time; faults, the page-fault family; locks,
# kernel lock wait with its top caller named in the text, mprotect (which
# the storm calls).
judge() {       # judge CASE: 1 when $TMP/g.json's first cause is the case's trouble
        jpy "$(case $1 in
        hog)    echo 'int(bool(d["causes"]) and [d["causes"][0][k] for k in ("family", "part")] + d["causes"][0]["metrics"][:1] == ["others", "others", "everything_else:cpu_time"])' ;;
        faults) echo 'int(bool(d["causes"]) and d["causes"][0]["family"] == "page_faults")' ;;
        locks)  echo 'int(bool(d["causes"]) and d["causes"][0]["family"] == "locks" and d["causes"][0]["metrics"][:1] == ["lock_wait_ns"] and bool(d["causes"][0].get("callers")) and ("most at " + d["causes"][0]["callers"][0]["caller"] + " ") in d["causes"][0]["text"] and d["causes"][0]["callers"][0]["caller"].startswith("__x64_sys_mprotect+"))' ;;
        esac)" < "$TMP/g.json"
}
for c in hog faults locks; do
        gzip -dc "$F/$c-10.db.gz" > "$TMP/$c-10.db"; ok $? "fixture $c-10"
        right=0
        for g in $(seq 1 10); do
                x "$c-10" "$c-g$g-r2" > "$TMP/g.json" || { diag "$c-g$g-r2: explain failed"; continue; }
                j=$(judge "$c")
                right=$((right + j))
                diag "$c-g$g-r2: $([ "$j" = 1 ] && echo right || echo MISS): $(jpy 'd["causes"][0]["text"][:100] if d["causes"] else d["summary"][:100]' < "$TMP/g.json")"
        done
        diag "$c: the first cause right in $right of 10 groups"
        [ "$right" = 10 ]; ok $? "$c: the first cause right in 10 of 10 groups ($right)"
done
# the lock storm's lock: one process's mmap_lock (wl-mmapstorm's threads
# share it), named from the run's lock table by lock, in JSON and words
named=0
for g in $(seq 1 10); do
        x locks-10 "locks-g$g-r2" > "$TMP/g.json" || continue
        named=$((named + $(jpy 'int(d["causes"][0].get("lock", {}).get("name") == "mmap_lock" and ("the lock waited for most: mmap_lock at " + d["causes"][0]["lock"]["lock"]) in d["causes"][0]["text"])' < "$TMP/g.json")))
done
[ "$named" = 10 ]; ok $? "locks: the lock waited for most is the storm's mmap_lock, named in 10 of 10 groups ($named)"

# --- the same answer in any database ---
# every run recorded here, imported beside the hog's: other groups, other
# spreads; the hog run's causes, counters and phases are the same
cp "$TMP/hog.db" "$TMP/hog-crowd.db"
for f in "$F"/quiet-*.json.gz; do
        gzip -dc "$f" > "$TMP/q.json" && "$SCALEMONCTL" --db "$TMP/hog-crowd.db" import "$TMP/q.json" >/dev/null
        ok $? "import $(basename "$f") into a copy of the hog's"
done
for c in faults locks; do
        "$SCALEMONCTL" --db "$TMP/$c.db" export > "$TMP/$c-x.json" && "$SCALEMONCTL" --db "$TMP/hog-crowd.db" import "$TMP/$c-x.json" >/dev/null
        ok $? "and the $c runs"
done
same() { jpy 'json.dumps([d["causes"], d["counters"], d["phases"], d["summary"]], sort_keys=True)'; }
[ "$(x hog-crowd hog-r2 | same)" = "$(same < "$TMP/hog.json")" ]; ok $? "hog-r2 among 99 other runs: the same causes, counters, phases and summary"
# exported and imported into an empty database (totals only: no phases)
"$SCALEMONCTL" --db "$TMP/hog.db" export > "$TMP/hog-x.json" && "$SCALEMONCTL" --db "$TMP/empty.db" import "$TMP/hog-x.json" >/dev/null
ok $? "the hog runs exported into an empty database"
"$SCALEMONCTL" --db "$TMP/hog-crowd.db" export --tag case=hog > "$TMP/hog-y.json" && "$SCALEMONCTL" --db "$TMP/crowd.db" import "$TMP/hog-y.json" >/dev/null &&
        "$SCALEMONCTL" --db "$TMP/crowd.db" import "$TMP/faults-x.json" >/dev/null && gzip -dc "$F/quiet-1.json.gz" > "$TMP/q.json" &&
        "$SCALEMONCTL" --db "$TMP/crowd.db" import "$TMP/q.json" >/dev/null
ok $? "and into another with 48 other runs"
[ "$(x empty hog-r2 | same)" = "$(x crowd hog-r2 | same)" ]; ok $? "the same JSON causes, counters and phases in both"

# --- quiet groups: no cause the benchmark did not feel ---
# A cause claimed for a run whose score (stress-ng's bogo ops) is not at
# least 3% under its lowest sibling's is false: the benchmark itself saw
# nothing.  These were recorded with nothing else running (record.sh under
# the machine lock); what the machine still does on its own (kernel
# threads, the hypervisor) may make a real cause, which its score shows.
for f in "$F"/quiet-*.json.gz; do gzip -dc "$f" > "$TMP/q.json" && "$SCALEMONCTL" --db "$TMP/quiet.db" import "$TMP/q.json" >/dev/null; done
ok $? "import the 30 quiet groups"
good=0 none=0
for g in $(seq 1 30); do
        fine=1 claims=0
        for r in 1 2 3; do
                x quiet "q$g-r$r" > "$TMP/q.json" || { fine=0; continue; }
                n=$(jpy 'len(d["causes"])' < "$TMP/q.json")
                [ "$n" = 0 ] && continue
                claims=$((claims + 1))
                # the run's score against its siblings' lowest
                felt=$("$SCALEMONCTL" --db "$TMP/quiet.db" --format json report --tag group="$g" | python3 -c '
import json, sys
s = {r["name"]: r["scores"]["bogo_ops"] for r in json.load(sys.stdin)["runs"]}
me = s.pop(sys.argv[1])
print(1 if me <= 0.97 * min(s.values()) else 0)' "q$g-r$r")
                [ "$felt" = 1 ] || fine=0
                diag "q$g-r$r: $(jpy 'd["causes"][0]["text"][:100]' < "$TMP/q.json") (score felt it: $felt)"
        done
        good=$((good + fine))
        [ $claims = 0 ] && none=$((none + 1))
done
diag "quiet groups: $none of 30 with no cause at all; $good of 30 with no cause the score did not confirm"
[ "$none" -ge 28 ]; ok $? "no cause claimed in at least 28 of 30 quiet groups ($none)"
finish
