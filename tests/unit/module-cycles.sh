#!/bin/bash
# module-cycles.sh - no two modules depend on each other, through any
# chain: the graph of `#include "X.h"` between the modules of daemon/,
# client/, lib/ and exporter/ has no cycle.  A module is a basename
# (X.c with X.h); a header X-internal.h is X's own.  The detector is first
# shown a tree with a known cycle, so that it can fail.  No root, no
# daemon.
. "${srcdir:-.}/tests/lib.sh"
command -v python3 >/dev/null || skip_all "no python3"

# cycles DIR...: one line per cycle (its modules, sorted), none if acyclic
cycles() {
        python3 - "$@" <<'PY'
import os, re, sys
mods = {}
for d in sys.argv[1:]:
    for f in sorted(os.listdir(d)):
        if f.endswith(('.c', '.h')):
            m = re.sub(r'-internal$', '', f[:-2])
            mods.setdefault(m, []).append(os.path.join(d, f))
edges = {m: set() for m in mods}
for m, files in mods.items():
    for f in files:
        for line in open(f, errors='replace'):
            g = re.match(r'\s*#\s*include\s+"([^"]+)\.h"', line)
            if g:
                t = re.sub(r'-internal$', '', os.path.basename(g.group(1)))
                if t in mods and t != m:
                    edges[m].add(t)
sys.setrecursionlimit(100000)
index, low, stack, on, n = {}, {}, [], set(), [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in sorted(edges[v]):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            print(' '.join(sorted(comp)))
for v in sorted(mods):
    if v not in index:
        visit(v)
PY
}

# the detector on a known tree: a -> b -> c -> a is one cycle; d, and a
# module with its own internal header, are none
mkdir -p "$TMP/t"
printf '#include "b.h"\n' > "$TMP/t/a.c"; : > "$TMP/t/a.h"
printf '#include "c.h"\n' > "$TMP/t/b.c"; : > "$TMP/t/b.h"
printf '#include "a.h"\n' > "$TMP/t/c.c"; : > "$TMP/t/c.h"
printf '#include "a.h"\n#include "d-internal.h"\n' > "$TMP/t/d.c"; : > "$TMP/t/d.h"
printf '#include "d.h"\n' > "$TMP/t/d-internal.h"
[ "$(cycles "$TMP/t")" = "a b c" ]; ok $? "the detector finds the cycle a -> b -> c -> a, and only it"

cd "$srcdir" || bail "no $srcdir"
found=$(cycles daemon daemon/kernel daemon/sampler client client/verbs client/analysis client/render client/ipc lib exporter)
[ -z "$found" ]; ok $? "no module cycle in daemon/, client/, lib/, exporter/${found:+ (cycles: $(echo $found | tr '\n' ';'))}"
# the control requests act on what the manager lends them, not on it
! grep -q '#include "manager.h"' daemon/requests.c daemon/requests.h
ok $? "requests.c and requests.h do not include manager.h"
finish
