#!/bin/bash
# live-top.sh - scalemonctl top on a real terminal (tmux), against a real
# scalemond at 200 ms with a pipe ping-pong running: the screen shows both
# CPUs and the open run with its elapsed time; its rates are those of
# `scalemonctl query` over the same ticks (top's first line names the
# ticks it covers: the first tick's start and the last one's end, in ms,
# and query's --since/--until select ticks by their start, so that
# --since START --until END selects exactly those); the keys switch the
# counter set and the sort; q, SIGTERM and ^C leave the terminal as it was
# (no alternate screen, cursor visible); with 256 simulated CPUs on a
# 40-line terminal it folds to nodes.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v tmux >/dev/null || skip_all "tmux not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs"

TM="tmux -L scalemon-top-$$ -f /dev/null"
cleanup_tmux() { $TM kill-server 2>/dev/null; }
WLPID=
# the ping-pong loop stops when $TMP/stop exists: on a bail-out TMP goes first
trap 'cleanup_tmux; [ -n "$WLPID" ] && kill "$WLPID" 2>/dev/null; cleanup' EXIT

INTERVAL=200ms
start_daemon
( while [ ! -e "$TMP/stop" ]; do "$WL/wl-pingpong" 200000 >/dev/null; done ) &
WLPID=$!
ctl run start top-pp >/dev/null || bail "cannot start a run"
t_run=$(now_ns)

# a shell in a 120x40 terminal; top is typed into it
$TM new-session -d -x 120 -y 40 -s t "env -i PATH=/usr/bin:/bin TERM=xterm-256color PS1='$ ' sh" || bail "tmux"
screen() { $TM capture-pane -p -t t; }
flag() { $TM display -p -t t "$1"; }
wait_screen() {         # wait_screen REGEX [TRIES]: until the screen shows it
        local i
        for i in $(seq "${2:-50}"); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
        return 1
}
$TM send-keys -t t "$SCALEMONCTL --socket $SOCK top" Enter
wait_screen '^ticks .* \.\. ' || { screen | sed 's/^/# /'; bail "top shows no frame"; }
sleep 1.5
# a frame, taken whole: the pane can change between two captures, so
# capture until two in a row agree
prev=; for _ in $(seq 20); do cur=$(screen); [ "$cur" = "$prev" ] && break; prev=$cur; sleep 0.05; done
echo "$cur" > "$TMP/screen1"
sed 's/^/# /' "$TMP/screen1" | head -12
t_now=$(now_ns)

alt=$(flag '#{alternate_on}')
[ "$alt" = 1 ]; ok $? "top draws on the alternate screen (alternate_on=$alt)"
rows=$(awk '$1 == "0" || $1 == "1"' "$TMP/screen1" | wc -l)
[ "$rows" = 2 ]; ok $? "the screen shows both CPUs ($rows rows)"
el=$(sed -n 's/^run top-pp: running \([0-9]*\):\([0-9][0-9]\).*/\1 \2/p' "$TMP/screen1")
real=$(( (t_now - t_run) / 1000000000 ))
[ -n "$el" ] && awk -v m="${el% *}" -v s="${el#* }" -v r="$real" 'BEGIN { e = m * 60 + s; exit !(e <= r + 1 && e >= r - 3) }'
ok $? "the open run with its elapsed time (${el:-none}, really ${real}s)"

# the same ticks from query
read -r start end < <(awk '/^ticks / { print $2, $4; exit }' "$TMP/screen1")
wait_flushed "$t_now"
col=$(awk '$1 == "CPU" { for (i = 1; i <= NF; i++) if ($i == "CSW/s") print i; exit }' "$TMP/screen1")
for loc in 0 1 all; do
        shown=$(awk -v l="$loc" -v c="$col" '$1 == l { print $c; exit }' "$TMP/screen1")
        if [ "$loc" = all ]; then sel=(); else sel=(--cpu "$loc"); fi
        q=$(ctl --format json query context_switches "${sel[@]}" --since "$start" --until "$end" |
                jpy 'round(sum(p["value"] for p in d["points"]) / sum(p["interval_s"] for p in d["points"]), 1)')
        awk -v a="$shown" -v b="$q" 'BEGIN { exit !(b > 0 && a / b > 0.9 && a / b < 1.1) }'
        ok $? "cpu $loc: context switches $shown/s on the screen, $q/s from query over $start .. $end (within 10%)"
done

# keys: sort by the first column (descending), then another counter set
$TM send-keys -t t s
wait_screen 's/S sort \[CSW/s\]' 20; ok $? "s sorts by the first counter (the key line says so)"
sleep 0.6
scr=$(screen)
first=$(echo "$scr" | awk '$1 == "0" || $1 == "1" { print $2; exit }')
second=$(echo "$scr" | awk '$1 == "0" || $1 == "1" { n++; if (n == 2) { print $2; exit } }')
awk -v a="$first" -v b="$second" 'BEGIN { exit !(a + 0 >= b + 0) }'; ok $? "rows in descending order ($first, $second)"
$TM send-keys -t t m
# the per-CPU fault events are off by default (per_cpu_faults): the
# machine's pgfault and pgmajfault stand in, on the system: line
wait_screen 'system: pgfault [0-9][0-9.]*[kM]?/s +pgmajfault [0-9]' 30
ok $? "m switches to the next counter set (page faults): the machine's pgfault and pgmajfault"
screen | grep -q 'counters \[faults\]'; ok $? "the key line names the set"
! screen | grep -q 'FLT/s'; ok $? "no column of the per-CPU fault events, which are off"
$TM send-keys -t t 1
wait_screen ' CSW/s +MIGR/s +LOCK/s' 30; ok $? "1 switches back to the first set"

# space pauses the screen (the ticks are still read), space again goes on
$TM send-keys -t t Space
wait_screen 'PAUSED' 20; ok $? "space pauses (PAUSED on the first line)"
t1=$(screen | awk '/^ticks / { print $2 }'); sleep 1; t2=$(screen | awk '/^ticks / { print $2 }')
[ -n "$t1" ] && [ "$t1" = "$t2" ]; ok $? "while paused the screen stays ($t1)"
$TM send-keys -t t Space
sleep 0.8; t3=$(screen | awk '/^ticks / { print $2 }')
[ "$t3" != "$t1" ] && ! screen | grep -q PAUSED; ok $? "space again goes on ($t3)"

# q: the terminal is as it was
$TM send-keys -t t q
for _ in $(seq 30); do [ "$(flag '#{alternate_on}')" = 0 ] && break; sleep 0.1; done
alt=$(flag '#{alternate_on}'); cur=$(flag '#{cursor_flag}')
[ "$alt" = 0 ] && [ "$cur" = 1 ]; ok $? "q quits and restores the terminal (alternate_on=$alt, cursor_flag=$cur)"
wait_screen '^\$ *$' 20; ok $? "back at the shell prompt"

# SIGTERM and ^C restore it too
for how in TERM INT; do
        $TM send-keys -t t "clear; $SCALEMONCTL --socket $SOCK top; echo exit=\$?" Enter
        wait_screen '^ticks .* \.\. ' || bail "top did not start again"
        shpid=$(flag '#{pane_pid}')
        tpid=$(pgrep -P "$shpid" -x scalemonctl | head -1)
        if [ "$how" = TERM ]; then kill -TERM "$tpid"; else $TM send-keys -t t C-c; fi
        for _ in $(seq 30); do [ "$(flag '#{alternate_on}')" = 0 ] && break; sleep 0.1; done
        alt=$(flag '#{alternate_on}'); cur=$(flag '#{cursor_flag}')
        wait_screen "^exit=$([ $how = TERM ] && echo 143 || echo 130)" 20
        ok $? "SIG$how: top exits with 128+signal"
        [ "$alt" = 0 ] && [ "$cur" = 1 ]; ok $? "SIG$how: the terminal is restored (alternate_on=$alt, cursor_flag=$cur)"
done

touch "$TMP/stop"; wait "$WLPID"; WLPID=
ctl run stop >/dev/null
stop_daemon

# 256 simulated CPUs at 100 ms on a 40-line terminal: folded to nodes
INTERVAL=100ms
rm -f "$DB"*
start_daemon --simulate-cpus 256
$TM send-keys -t t "clear; $SCALEMONCTL --socket $SOCK top" Enter
wait_screen 'per node \(folded' 50; ok $? "256 CPUs on 40 lines: folded to nodes"
sleep 1
scr=$(screen)
nodes=$(echo "$scr" | awk '$1 ~ /^[0-3]$/' | wc -l)
[ "$nodes" = 4 ] && echo "$scr" | grep -q '^ *NODE '; ok $? "one row per node ($nodes)"
$TM resize-window -t t -x 120 -y 300 2>/dev/null
wait_screen 'per cpu,' 30; ok $? "a terminal with room for the CPUs unfolds"
$TM send-keys -t t q
cleanup_tmux    # finish() drops the EXIT trap
finish
