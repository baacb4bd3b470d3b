#!/bin/bash
# live-dashboard.sh - the Grafana dashboard (exporter/grafana/scalemon.json)
# against a real Prometheus that scraped a real scalemon-exporter of a
# real scalemond: every PromQL expression in it (panels and annotations,
# Grafana's variables given values as Grafana would: $instance the All
# regex, $__rate_interval four scrape intervals) is accepted and returns
# series; the per-CPU heat maps have a row per CPU; the run annotations
# put each run at its start and end as scalemonctl runs has them.  The
# JSON is a dashboard Grafana can provision (ids, grid positions, data
# source references, targets with refIds) and the provisioning file points
# where the package installs it.
. "$srcdir/tests/lib.sh"
need_root
command -v prometheus >/dev/null || skip_all "no prometheus binary (Debian package prometheus)"
command -v curl >/dev/null || skip_all "no curl"
DASH=$srcdir/exporter/grafana/scalemon.json

# the JSON itself, and the provisioning file (as make builds it)
python3 - "$DASH" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ids, bad = set(), []
def need(cond, what):
    if not cond:
        bad.append(what)
need(d.get("uid") and d.get("title") and isinstance(d.get("schemaVersion"), int), "uid, title, schemaVersion")
names = [v["name"] for v in d["templating"]["list"]]
need(names[:2] == ["datasource", "instance"], "variables datasource, instance: %s" % names)
for p in d["panels"]:
    need(p["id"] not in ids, "panel id %s unique" % p["id"]); ids.add(p["id"])
    g = p.get("gridPos", {})
    need(all(k in g for k in "hwxy") and g["x"] + g["w"] <= 24, "panel %s gridPos" % p["title"])
    need(p.get("datasource", {}).get("uid") == "${datasource}", "panel %s data source" % p["title"])
    need(p["type"] in ("heatmap", "timeseries", "table", "stat"), "panel %s type" % p["title"])
    refs = [t.get("refId") for t in p["targets"]]
    need(p["targets"] and all(refs) and len(set(refs)) == len(refs), "panel %s refIds" % p["title"])
    need(all(t.get("expr") for t in p["targets"]), "panel %s expressions" % p["title"])
for a in d["annotations"]["list"]:
    need(a.get("expr") and a.get("useValueForTime") is True, "annotation %s" % a["name"])
print("\n".join("# not: " + b for b in bad))
sys.exit(1 if bad else 0)
EOF
ok $? "the dashboard's JSON: unique panel ids, grid positions, the data source variable, targets with refIds"
make -s -C "$top_builddir" exporter/grafana/scalemon-dashboards.yaml >/dev/null 2>&1
prov=$top_builddir/exporter/grafana/scalemon-dashboards.yaml
grafanadir=$(make -s -C "$top_builddir" -f Makefile -f - print-grafanadir <<<'print-grafanadir: ; @echo $(grafanadir)' 2>/dev/null)
grep -q "^      path: $grafanadir$" "$prov" && grep -q '^apiVersion: 1$' "$prov" && grep -q '^    type: file$' "$prov"
ok $? "the provisioning file loads dashboards from where the JSON is installed ($grafanadir)"

start_daemon
start_exporter
start_prometheus "127.0.0.1:$EPORT"

# two runs, with some lock contention in them, and scrapes around them
sleep 2
ctl run exec d1 --tag threads=2 -- "$WL/wl-mmapstorm" 2 1 >/dev/null || bail "run exec d1"
ctl run exec d2 --tag threads=1 -- "$WL/wl-pingpong" 20000 >/dev/null || bail "run exec d2"
sleep 6
ncpu=$(ctl --format json status | jpy 'd["cpus"]["online"]')

# every expression, with Grafana's variables as Grafana fills them for
# "All" hosts and 1 s scrapes ($__rate_interval: four scrape intervals)
python3 - "$DASH" >"$TMP/exprs" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["panels"]:
    for t in p["targets"]:
        print("%s\t%s\t%s" % (p["type"], p["title"], t["expr"].replace("\n", " ")))
for a in d["annotations"]["list"]:
    print("annotation\t%s\t%s" % (a["name"], a["expr"]))
EOF
n=0
while IFS=$'\t' read -r type title expr; do
        n=$((n + 1))
        e=${expr//\$__rate_interval/4s}
        e=${e//\$instance/.*}
        res=$(curl -s "$API/query" --data-urlencode "query=$e")
        st=$(echo "$res" | jpy 'd["status"]')
        k=$(echo "$res" | jpy 'len(d["data"]["result"]) if d["status"] == "success" else 0')
        [ "$st" = success ] && [ "$k" -ge 1 ]
        ok $? "$title: Prometheus accepts it and returns $k series: $expr"
        if [ "$type" = heatmap ]; then
                cpus=$(echo "$res" | jpy '",".join(sorted(r["metric"].get("cpu", "?") for r in d["data"]["result"]))')
                [ "$k" = "$ncpu" ] && [ "$cpus" = "$(seq -s, 0 $((ncpu - 1)))" ]
                ok $? "$title: a row per CPU ($cpus; $ncpu online)"
        fi
        case $type:$expr in
        annotation:*run_start*) echo "$res" >"$TMP/annotation-start.json" ;;
        annotation:*run_end*) echo "$res" >"$TMP/annotation-end.json" ;;
        esac
done <"$TMP/exprs"
[ "$n" -ge 10 ]; ok $? "the dashboard has $n expressions"

# the annotations put the runs where scalemonctl has them (ms since the epoch)
ctl --format json runs >"$TMP/runs.json"
for k in start end; do
        python3 - "$TMP/annotation-$k.json" "$TMP/runs.json" "$k" <<'EOF'
import json, sys, datetime
a = json.load(open(sys.argv[1]))["data"]["result"]
runs = {r["name"]: r for r in json.load(open(sys.argv[2]))["runs"]}
k = sys.argv[3]
bad = 0
for r in a:
    name, v = r["metric"]["run"], float(r["value"][1])
    want = datetime.datetime.fromisoformat(runs[name][k].replace("Z", "+00:00")).timestamp() * 1000
    print("# %s %s at %.0f ms, scalemonctl runs: %.0f" % (name, k, v, want))
    bad += abs(v - want) > 1
sys.exit(1 if bad or {r["metric"]["run"] for r in a} != set(runs) else 0)
EOF
        ok $? "the run $k annotations: every run, each at its $k as scalemonctl runs has it, to the millisecond"
done
finish
