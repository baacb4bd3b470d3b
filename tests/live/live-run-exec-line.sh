#!/bin/bash
# live-run-exec-line.sh - the live line of `run exec` on a real terminal
# (tmux; every byte written to it is kept with pipe-pane and replayed by a
# small line model: \r, ESC[K, \n and printable text).  Its first update
# comes at 0:01 and shows the run's first second: the ticks after the
# run's start tick until they cover a second, as `query` has them (within
# 10%).  The command's output, lines and a partial line left for a while,
# never shares a line with it, at any moment.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v tmux >/dev/null || skip_all "tmux not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

TM="tmux -L scalemon-live-$$ -f /dev/null"
cleanup_tmux() { $TM kill-server 2>/dev/null; }
trap 'cleanup_tmux; cleanup' EXIT

INTERVAL=200ms
start_daemon
$TM new-session -d -x 150 -y 40 -s t "env -i PATH=/usr/bin:/bin TERM=xterm-256color PS1='$ ' sh" || bail "tmux"
$TM pipe-pane -o -t t "cat > $TMP/raw"
cmd="$WL/wl-pingpong 300000 >/dev/null & for i in 1 2 3 4 5; do sleep 0.6; echo sops=\$i; done; printf partial; sleep 1.3; echo; wait"
$TM send-keys -t t "$SCALEMONCTL --db $DB --socket $SOCK run exec rx1 -- sh -c '$cmd'; echo exit=\$?" Enter
for _ in $(seq 150); do $TM capture-pane -p -t t | grep -q '^exit=' && break; sleep 0.1; done
$TM capture-pane -p -t t > "$TMP/screen"
sed 's/^/# screen: /' "$TMP/screen" | grep -v '^# screen: $'
grep -q '^exit=0$' "$TMP/screen"; ok $? "run exec ran the command (exit 0)"

python3 - "$TMP/raw" > "$TMP/model" <<'EOF'
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
live = re.compile(r"\[rx1 (\d+):(\d\d)\] context switches (\d+)/s, lock contentions (?:\d+/s|-)")
line, col, done, glued, firsts = [], 0, [], [], []
i = 0
def text():
    return "".join(line).rstrip()
def check():
    t = text()
    if "[rx1" in t:
        if not t.startswith("[rx1") or re.search(r"sops|partial|round_trips|scalemonctl|exit=", t):
            glued.append(t)
while i < len(data):
    ch = data[i]
    if data.startswith("\x1b[K", i):
        del line[col:]; i += 3; continue
    if ch == "\x1b":            # another sequence: skip it
        m = re.match(r"\x1b\[[0-9;?]*[A-Za-z]", data[i:])
        i += len(m.group(0)) if m else 1; continue
    if ch == "\r":
        col = 0
    elif ch == "\n":
        done.append(text()); line, col = [], 0
    else:
        if col < len(line): line[col] = ch
        else: line.append(ch)
        col += 1
        check()
        m = live.fullmatch(text())
        if m and not firsts:
            firsts.append(m.groups())
    i += 1
done.append(text())
print("glued", len(glued), repr(glued[:1]))
print("first", " ".join(firsts[0]) if firsts else "none")
print("sops_clean", sum(1 for l in done if re.fullmatch(r"sops=\d", l)))
print("updates", len(set(m.group(0) for m in live.finditer(data))))
EOF
sed 's/^/# model: /' "$TMP/model"
g=$(awk '$1 == "glued" { print $2 }' "$TMP/model")
[ "$g" = 0 ]; ok $? "the command's output never shares a line with the live line ($g moments it did)"
n=$(awk '$1 == "sops_clean" { print $2 }' "$TMP/model")
[ "$n" = 5 ]; ok $? "each output line stands alone ($n of 5 'sops=N' lines)"
grep -q '^partial$' "$TMP/screen"; ok $? "a partial line is finished by the command, not by the live line"
u=$(awk '$1 == "updates" { print $2 }' "$TMP/model")
[ "$u" -ge 2 ]; ok $? "the live line was updated ($u distinct lines)"
read -r _ m s rate < <(grep '^first ' "$TMP/model")
[ "$m:$s" = "0:01" ]; ok $? "the first update comes at 0:01 (at ${m:-?}:${s:-?})"

# the same ticks from query: after the run's start tick, until a second
iv=$(interval_ns)
need=$(( (iv > 1000000000 ? iv : 1000000000) - 1000000 )); sum=0; since=; until=
while IFS='|' read -r t dur; do
        [ -z "$since" ] && since=$((t - 1000))
        sum=$((sum + dur))
        if [ "$sum" -ge "$need" ]; then until=$((t + 1000)); break; fi
done < <(sql "SELECT t.t, t.dur FROM tick t, run r WHERE r.name = 'rx1' AND t.id > r.start_tick ORDER BY t.id LIMIT 50")
q=$(ctl --format json query context_switches --since "$(ns_to_when "$since")" --until "$(ns_to_when "$until")" |
        jpy 'round(sum(p["value"] for p in d["points"]) / sum(p["interval_s"] for p in d["points"]))')
awk -v a="${rate:-0}" -v b="${q:-0}" 'BEGIN { exit !(b > 1000 && a / b > 0.9 && a / b < 1.1) }'
ok $? "its first update shows the first second's rate: ${rate:-none}/s, query ${q:-none}/s (within 10%)"
cleanup_tmux    # finish() drops the EXIT trap
finish
