#!/bin/bash
# cli-args.sh - bad command lines, table-driven, for every scalemonctl verb:
# missing, extra, empty, huge and malformed arguments, unknown options,
# options without their value.  Each must give the exit status of the
# contract (doc/DESIGN.md: 2 bad usage, 1 the request failed), exactly one line
# on stderr that says what is wrong (matched by a regex, at most 1024 bytes),
# nothing on stdout, and no change to the runs in the database.  The table
# runs against a live daemon holding two finished runs and one open run (so
# a bad `run stop` or `run mark` that slipped through would change it), then
# the usage errors again with no daemon: they must not depend on one.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"

H=$(head -c 100000 /dev/zero | tr '\0' x)       # a 100 kB argument
NL=$'\n'
NOW=now

# One case a line: EXIT|REGEX|ARGS.  ARGS is shell words (eval'd, so $H and
# $NL expand); REGEX is matched (grep -E) against the one stderr line with
# its "scalemonctl: " prefix taken off.
table=$(cat <<'EOF'
2|^no verb given; try 'scalemonctl --help'$|
2|^unknown verb 'frobnicate'; try 'scalemonctl --help'$|frobnicate
2|^unknown verb 'reprot'; did you mean 'report'\? \(scalemonctl --help lists them\)$|reprot
2|^unknown verb ''; try|""
2|^unknown verb 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+'; try 'scalemonctl --help'$|$H
2|^unknown option '--bogus'; try 'scalemonctl --help'$|--bogus status
2|^option '--format' needs a value; try 'scalemonctl --help'$|--format
2|^--format 'xml': use table, json or csv$|--format xml status
2|^--format '': use table, json or csv$|--format "" status
2|^option '--help' takes no value; try 'scalemonctl --help'$|--help=yes
2|^status takes no arguments, got 'extra'$|status extra
2|^status takes no arguments, got ''$|status ""
2|^unknown option '--bogus'; try 'scalemonctl status --help'$|status --bogus
2|^metrics takes no arguments, got 'all'$|metrics all
2|^unknown option '--all'; try 'scalemonctl metrics --help'$|metrics --all
2|^reload takes no arguments, got 'now'$|reload now
2|^unknown option '--force'; try 'scalemonctl reload --help'$|reload --force
2|^query needs a METRIC \(scalemonctl metrics lists them\)$|query
2|^unknown metric 'nosuch' \(scalemonctl metrics lists them\)$|query nosuch
2|^unknown metric '' \(scalemonctl|query ""
2|^unknown metric 'context_switch' \(scalemonctl metrics lists them\); did you mean 'context_switches'\?$|query context_switch
2|^unknown metric 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+' \(scalemonctl metrics lists them\)$|query $H
2|^query takes one METRIC, got also 'extra'$|query context_switches extra
2|^option '--since' needs a value; try 'scalemonctl query --help'$|query context_switches --since
2|^--since '12:00': not a time; use a run name|query context_switches --since 12:00
2|^--since '-5parsecs': not a time; use|query context_switches --since -5parsecs
2|^--since '': not a run name or a time; use|query context_switches --since ""
2|^--since 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+': not a run name or a time; use|query context_switches --since $H
2|^--since '--cpu': not a time; use|query context_switches --since --cpu
2|^--until '@abc': not a time; use|query context_switches --until @abc
2|^--until '99999999999999999999-01-01': not a time; use|query context_switches --until 99999999999999999999-01-01
2|^--until is not after --since$|query context_switches --since -1m --until -2m
2|^--step '0': not a duration; use a number with a unit|query context_switches --step 0
2|^--step '-1s': not a duration; use|query context_switches --step -1s
2|^--step '5parsecs': not a duration; use|query context_switches --step 5parsecs
2|^--step '': not a duration; use|query context_switches --step ""
2|^--step '99999999999999999999h': not a duration; use|query context_switches --step 99999999999999999999h
2|^--step '1e999s': not a duration; use|query context_switches --step 1e999s
2|^--cpu '-1': expected a whole number from 0 to 65535$|query context_switches --cpu -1
2|^--cpu '99999999999999999999': expected a whole number from 0 to 65535$|query context_switches --cpu 99999999999999999999
2|^--cpu 'abc': expected a whole number|query context_switches --cpu abc
2|^--cpu '': expected a whole number|query context_switches --cpu ""
2|^--node '-3': expected a whole number from 0 to 4095$|query context_switches --node -3
2|^--per 'galaxy': use system, node or cpu$|query context_switches --per galaxy
2|^use only one of --cpu, --node and --per$|query context_switches --cpu 0 --node 0
2|^--cpu: thp_fault_alloc is a system metric, not per CPU$|query thp_fault_alloc --cpu 0
2|^unknown option '--bogus'; try 'scalemonctl query --help'$|query context_switches --bogus
2|^unknown option '-x'; try 'scalemonctl query --help'$|query context_switches -x
1|^no run named 'nosuchrun' \(see scalemonctl runs\)$|query context_switches --since nosuchrun
2|^run needs start, stop, exec, mark or delete$|run
2|^unknown run verb 'begin': use start, stop, exec, mark or delete$|run begin x
2|^unknown run verb '': use start|run ""
2|^run start needs a NAME$|run start
2|^run start takes one NAME; tags are --tag K=V$|run start a b
2|^run name '': a run name has 1 to 128 characters$|run start ""
2|^run name 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+': a run name has 1 to 128 characters$|run start $H
2|^run name '-x': a run name does not start with|run start -- -x
2|^run name 'a b': a run name has only letters|run start "a b"
2|^run name 'x;y': a run name has only letters|run start "x;y"
2|^run name 'a\\nb': a run name has only letters|run start "a${NL}b"
2|^option '--tag' needs a value; try 'scalemonctl run start --help'$|run start x --tag
2|^--tag 'ways': expected KEY=VALUE$|run start x --tag ways
2|^option '--cgroup' needs a value; try 'scalemonctl run start --help'$|run start x --cgroup
2|^run start takes --cgroup or --unit, not both$|run start x --cgroup a --unit b
2|^--tag '=1': expected KEY=VALUE$|run start x --tag =1
2|^--tag '9x=1': a key starts with a letter|run start x --tag 9x=1
2|^--tag 'k=': a value is 1 to 256 bytes of UTF-8 text$|run start x --tag k=
2|^--tag 'k=x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+': a value is 1 to 256 bytes of UTF-8 text$|run start x --tag k=$H
2|^--tag 'k=a\\nb': control characters are not allowed|run start x --tag "k=a${NL}b"
2|^--tag k given twice$|run start x --tag k=1 --tag k=2
2|^unknown option '--bogus'; try 'scalemonctl run start --help'$|run start x --bogus
2|^--lower-is-better 'a b': |run start x --lower-is-better "a b"
2|^run stop takes at most one NAME; scores are --score K=V$|run stop a b
2|^run delete takes one NAME \(scalemonctl runs lists them\)$|run delete
2|^run delete takes one NAME \(scalemonctl runs lists them\)$|run delete a b
2|^run name '': a run name has 1 to 128 characters$|run delete ""
2|^run name 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+': a run name has 1 to 128 characters$|run delete $H
2|^run name 'x;y': a run name has only letters|run delete "x;y"
2|^unknown option '--bogus'; try 'scalemonctl run delete --help'$|run delete x --bogus
2|^run name '': a run name has 1|run stop ""
2|^run name 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+': a run name has 1|run stop $H
2|^option '--score' needs a value; try 'scalemonctl run stop --help'$|run stop --score
2|^--score 'jobs=fast': the value must be a number$|run stop --score jobs=fast
2|^--score 'jobs=': the value must be a number$|run stop --score jobs=
2|^--score '=5': expected KEY=VALUE$|run stop --score =5
2|^--score 'j=1e999': the value must be a number$|run stop --score j=1e999
2|^--score 'j=nan': the value must be a number$|run stop --score j=nan
2|^--score j given twice$|run stop --score j=1 --score j=2
2|^--exit-status '300': expected a whole number from 0 to 255$|run stop --exit-status 300
2|^--exit-status '-1': expected a whole number from 0 to 255$|run stop --exit-status -1
2|^--exit-status '': expected a whole number|run stop --exit-status ""
2|^--exit-status '99999999999999999999': expected|run stop --exit-status 99999999999999999999
2|^option '--exit-status' needs a value; try|run stop --exit-status
2|^unknown option '--bogus'; try 'scalemonctl run stop --help'$|run stop --bogus
2|^run exec needs a NAME and, after --, the command to run$|run exec
2|^run exec needs a NAME and, after --, the command to run$|run exec -- true
2|^run exec x: no command given \(put it after --\)$|run exec x
2|^run exec x: no command given \(put it after --\)$|run exec x --
2|^run name '': a run name has 1|run exec "" -- true
2|^run name 'x+\[\.\.\.[0-9]+ bytes\.\.\.\]x+': a run name has 1|run exec $H -- true
2|^--tag '9x=1': a key starts with a letter|run exec x --tag 9x=1 -- true
2|^--score-regex s: needs a capture group|run exec x --score-regex 's=[0-9]+' -- true
2|^--score-regex s: not a POSIX extended regular expression|run exec x --score-regex 's=([0-9]+' -- true
2|^--score-regex '--': expected KEY=VALUE$|run exec x --score-regex -- true
2|^--score-regex n given twice$|run exec x --score-regex 'n=([0-9]+)' --score-regex 'n=sum:([0-9]+)' -- true
2|^--score-regex s: needs a capture group|run exec x --score-regex 's=sum:[0-9]+' -- true
2|^use only one of --name-suffix and --replace$|run start x --name-suffix --replace
2|^use only one of --name-suffix and --replace$|run exec x --replace --name-suffix -- true
2|^unknown option '--bogus'; try 'scalemonctl run exec --help'$|run exec x --bogus -- true
2|^--lower-is-better 's,': |run exec x --lower-is-better s, -- true
2|^run mark takes \[NAME\] TEXT|run mark
2|^run mark takes \[NAME\] TEXT|run mark a b c
2|^run mark TEXT: a text is 1 to 1024 bytes of UTF-8 text|run mark ""
2|^run mark TEXT: a text is 1 to 1024 bytes of UTF-8 text|run mark open1 ""
2|^run mark TEXT: a text is 1 to 1024 bytes of UTF-8 text|run mark $H
2|^run mark TEXT: control characters are not allowed|run mark "a${NL}b"
2|^run name 'a b': a run name has only|run mark "a b" text
2|^unknown option '--bogus'; try 'scalemonctl run mark --help'$|run mark --bogus x
1|^no run named 'nosuchrun' \(see scalemonctl runs\)$|run stop nosuchrun
1|^no run named 'nosuchrun' \(see scalemonctl runs\)$|run mark nosuchrun text
1|^a run named 'done1' already exists|run start done1
2|^runs takes no arguments|runs extra
2|^option '--since' needs a value; try 'scalemonctl runs --help'$|runs --since
2|^--since '12:00': not a time; use|runs --since 12:00
2|^--since '': not a run name or a time; use|runs --since ""
2|^--until '2026-13-40': not a time; use|runs --until 2026-13-40
2|^--since '@99999999999999999999': not a time; use|runs --since @99999999999999999999
2|^--until '\+5h': not a time; use|runs --until +5h
2|^--since '1e999': not a time; use|runs --since 1e999
2|^option '--tag' needs a value; try|runs --tag
2|^--tag 'ways': expected KEY=VALUE$|runs --tag ways
2|^--tag '=1': expected KEY=VALUE$|runs --tag =1
2|^unknown option '--bogus'; try 'scalemonctl runs --help'$|runs --bogus
1|^no runs tagged ways=999 between|runs --tag ways=999
2|^report takes no arguments, got 'extra'|report extra
2|^--metric: unknown metric 'nope'|report --metric nope
2|^--metric: unknown metric 'lock_contention' \(scalemonctl metrics lists them\); did you mean 'lock_contentions'\?$|report --metric lock_contention
2|^--group-by 'way': no selected run has it \(tags: ways\); did you mean 'ways'\?$|report --group-by way
2|^--metric: unknown metric 'contextswitches' \(scalemonctl metrics lists them\); did you mean 'context_switches'\?$|top --metric contextswitches
2|^--group-by 'threads': no selected run has it \(tags: ways\)$|report --group-by threads
2|^--baseline ways=16: no selected run has ways=16 \(ways: 1, 2, 4\)$|report --group-by ways --baseline ways=16
2|^--group-by 'way': no selected run has it \(tags: ways\); did you mean 'ways'\?$|plot groups --group-by way
2|^--metric '': no metric named; give METRIC|report --metric ""
2|^--metric ',': no metric named; give METRIC|report --metric ,
2|^option '--metric' needs a value; try|report --metric
2|^--per 'galaxy': use system, node or cpu$|report --per galaxy
2|^--group-by|report --group-by ""
2|^--group-by '9x':|report --group-by 9x
2|^--baseline needs --group-by|report --baseline ways=1
2|^--score '9x':|report --score 9x
2|^--variance-cv 'abc':|report --variance-cv abc
2|^--alpha '2':|report --alpha 2
2|^--alpha '-1':|report --alpha -1
2|^--variance-cv '-1': a percentage above 0|report --variance-cv -1
2|^--variance-minmax '2': a number between 0 and 1$|report --variance-minmax 2
2|^--lower-is-better '9x': a key starts with|report --lower-is-better 9x
2|^--lower-is-better needs K|report --lower-is-better ,
2|^--baseline 'ways': expected KEY=VALUE$|report --group-by ways --baseline ways
2|^option '--explain' takes no value; try 'scalemonctl report --help'$|report --explain=yes
2|^unknown option '--bogus'; try 'scalemonctl report --help'$|report --bogus
2|^curve needs --by TAG|curve
2|^option '--by' needs a value; try 'scalemonctl curve --help'$|curve --by
2|^--by '':|curve --by ""
2|^--series '': a key starts with|curve --by ways --series ""
2|^curve takes no arguments, got 'extra'$|curve --by ways extra
2|^--score '9x':|curve --by ways --score 9x
2|^--metric: unknown metric 'nope'|curve --by ways --metric nope
2|^unknown option '--bogus'; try 'scalemonctl curve --help'$|curve --by ways --bogus
2|^--work 'some': use fixed \(the same work at every N\) or per-n |curve --by ways --work some
2|^--lower-is-better '9x': |curve --by ways --lower-is-better 9x
2|^--by 'way': no selected run has it \(tags: ways\); did you mean 'ways'\?$|curve --by way
2|^--series 'kind': no selected run has it \(tags: ways\)$|curve --by ways --series kind
2|^--by 'wayz': no selected run has it \(tags: ways\); did you mean 'ways'\?$|plot curve --by wayz
2|^plot needs a KIND: timeseries, heatmap, curve, groups, scatter or explain$|plot
2|^unknown plot kind 'pie': use timeseries|plot pie
2|^unknown plot kind '': use timeseries|plot ""
2|^this plot needs a METRIC|plot timeseries
2|^unknown metric 'nosuch'|plot timeseries nosuch
2|^plot timeseries: unexpected argument 'extra'$|plot timeseries context_switches extra
2|^option '-o' needs a value; try 'scalemonctl plot --help'$|plot timeseries context_switches -o
2|^-o out.txt: name a .svg or .png file$|plot timeseries context_switches -o out.txt
2|^--y 'nonsense': use speedup or score$|plot curve --by ways --y nonsense
2|^--work 'x': use fixed or per-n$|plot curve --by ways --work x
2|^plot curve needs --by TAG|plot curve
2|^plot groups needs --group-by|plot groups
2|^--run '': a run name has 1 to 128|plot timeseries context_switches --run ""
2|^--run '-x': a run name does not start|plot timeseries context_switches --run -x
1|^no run named 'nosuch' \(see scalemonctl runs\)$|plot timeseries context_switches --run nosuch
2|^unknown metric 'nosuch'|plot scatter nosuch
2|^--per 'galaxy': use system, node or cpu$|plot timeseries context_switches --per galaxy
2|^plot writes a chart, or its data with --format json; csv does not apply$|--format csv plot timeseries context_switches
2|^unknown option '--bogus'; try 'scalemonctl plot --help'$|plot timeseries context_switches --bogus
2|^plot explain needs a RUN$|plot explain
1|^no run named 'nosuch' \(see scalemonctl runs\)$|plot explain nosuch
2|^explain needs a RUN; try 'scalemonctl explain --help'$|explain
2|^explain takes one RUN, got also 'b' \(compare with --against RUN,...\)$|explain a b
2|^explain '': not a run name|explain ""
2|^--against needs RUN\[,RUN...\]$|explain a --against ,
2|^--against 'a b': not a run name|explain b --against "a b"
2|^unknown option '--bogus'; try 'scalemonctl explain --help'$|explain a --bogus
2|^option '--against' needs a value; try 'scalemonctl explain --help'$|explain a --against
2|^explain writes a table or --format json; csv does not apply$|--format csv explain a
1|^no run named 'nosuch' \(see scalemonctl runs\)$|explain nosuch
1|^run 'open1' is still running: explain it once it has stopped$|explain open1
1|^run 'done1' has no siblings: no other finished run has its tags \(ways=1\); name the runs|explain done1
1|^--against: run 'open1' is still running$|explain done1 --against open1
2|^export takes no arguments|export extra
2|^option '--since' needs a value; try|export --since
2|^--tag 'ways': expected KEY=VALUE$|export --tag ways
2|^export writes JSON only; --format csv does not apply$|--format csv export
2|^unknown option '--bogus'; try 'scalemonctl export --help'$|export --bogus
2|^import takes one FILE|import
2|^import takes one FILE|import a b
2|^import FILE: an empty name; give a file from scalemonctl export, or - for standard input$|import ""
2|^unknown option '--bogus'; try 'scalemonctl import --help'$|import --bogus
1|^cannot open /nonexistent/x.json: No such file or directory$|import /nonexistent/x.json
EOF
)

# The state a bad command must leave alone: every run table, as SQL text.
runs_dump() {
        sqlite3 -readonly -batch "$DB" \
                ".dump run" ".dump run_tag" ".dump run_score" ".dump context_kv" ".dump context_set" ".dump run_mark" ".dump run_total"
}

# check_table DAEMON-RUNNING: one TAP line per case (only the usage errors
# without a daemon).
check_table() {
        local daemon=$1 line want re args rc out nerr emsg label
        label=$([ "$daemon" = yes ] && echo "with daemon" || echo "no daemon")
        while IFS= read -r line; do
                [ -n "$line" ] || continue
                want=${line%%|*}; line=${line#*|}
                re=${line%%|*}; args=${line#*|}
                [ "$daemon" = yes ] || [ "$want" = 2 ] || continue
                eval "set -- $args"
                ctl "$@" >"$TMP/out" 2>"$TMP/err" </dev/null; rc=$?
                nerr=$(wc -l <"$TMP/err")
                emsg=$(head -n 1 "$TMP/err")
                out=ok
                [ "$rc" = "$want" ] || out="exit $rc, not $want"
                [ -s "$TMP/out" ] && out="$out; stdout has $(wc -c <"$TMP/out") bytes"
                [ "$nerr" = 1 ] && [ "$(tail -c 1 "$TMP/err" | od -An -c | tr -d ' ')" = '\n' ] ||
                        out="$out; $nerr lines on stderr"
                [ "$(wc -c <"$TMP/err")" -le 1024 ] || out="$out; stderr has $(wc -c <"$TMP/err") bytes"
                case $emsg in scalemonctl:\ *) ;; *) out="$out; no 'scalemonctl: ' prefix" ;; esac
                printf '%s\n' "${emsg#scalemonctl: }" | grep -Eq -- "$re" || out="$out; message does not match"
                [ "$out" = ok ]
                ok $? "$label: scalemonctl ${args:0:60} -> $want"
                [ "$out" = ok ] || diag "$out: $(head -c 300 "$TMP/err" | tr '\n' '|')"
        done <<<"$table"
}

start_daemon
ctl run exec done1 --tag ways=1 -- true >/dev/null || bail "run exec done1 failed"
ctl run exec done2 --tag ways=2 -- sh -c 'echo jobs: 42' >/dev/null || bail "run exec done2 failed"
ctl run start open1 --tag ways=4 >/dev/null || bail "run start open1 failed"
ctl run mark open1 "warm" >/dev/null || bail "run mark failed"
cd "$TMP" || bail "no $TMP"                     # plot -o writes here, if it ever does

runs_dump >"$TMP/before"
grep -q "INSERT INTO run VALUES" "$TMP/before" && grep -q "INSERT INTO run_mark VALUES" "$TMP/before"
ok $? "the dump holds the runs ($(grep -c 'INSERT INTO run VALUES' "$TMP/before") runs, $(wc -c <"$TMP/before") bytes)"
[ "$(sql "SELECT count(*) FROM run")" = 3 ]; ok $? "three runs before the table"

check_table yes
runs_dump >"$TMP/after"
cmp -s "$TMP/before" "$TMP/after"; ok $? "no bad command changed a run, tag, score, mark or total"
cmp -s "$TMP/before" "$TMP/after" || diff "$TMP/before" "$TMP/after" | head -20 | sed 's/^/# /'
kill -0 "$DAEMON_PID"; ok $? "the daemon is still running"
ctl run stop open1 --score jobs=1 >/dev/null; ok $? "and a good command still works after them"
runs_dump >"$TMP/before"

stop_daemon
check_table no
runs_dump >"$TMP/after"
cmp -s "$TMP/before" "$TMP/after"; ok $? "no change without a daemon either"
[ "$(sqlite3 -readonly "$DB" 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
finish
