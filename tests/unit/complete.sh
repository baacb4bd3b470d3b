#!/bin/bash
# complete.sh - shell completion for scalemonctl: `scalemonctl __complete`
# offers the verbs --help lists, each verb's options (every one of which
# the verb accepts), and from a database the run names, tag keys and
# values, score keys and metric names that `runs` and `metrics` show; the
# bash script (completion/bash/scalemonctl) and the zsh one
# (completion/zsh/_scalemonctl) give the shell those words.  On the study
# fixture (tests/fixtures/study.json) imported into a fresh database; no
# root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
C=$SCALEMONCTL
"$C" --db "$DB" import "$srcdir/tests/fixtures/study.json" >/dev/null; ok $? "import the study fixture"
export SCALEMON_DB=$DB
comp() { "$C" __complete "$@" | sort; }
sorted() { tr ' ' '\n' | sed '/^$/d' | sort; }

verbs=$("$C" --help | awk '/^Verbs:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' | sort -u)
[ "$(comp 0 "")" = "$verbs" ]; ok $? "the verbs are those --help lists: $(echo $verbs)"
[ "$(comp 0 "r")" = "$(echo "$verbs" | grep '^r')" ]; ok $? "and those that start with what is typed"
subs=$("$C" --help | sed -n 's/^ *run \([a-z]*\) .*/\1/p; s/^ *run \([a-z]*\)$/\1/p' | sort -u)
[ "$(comp 1 run "")" = "$subs" ]; ok $? "run's sub-verbs are those --help lists: $(echo $subs)"
kinds=$(comp 1 plot "")
[ "$(echo "$kinds" | sorted)" = "$(echo curve explain groups heatmap scatter timeseries | sorted)" ]
ok $? "plot's kinds: $(echo $kinds)"
bad=
for k in $kinds; do
        "$C" plot "$k" 2>&1 | grep -q "unknown plot kind" && bad="$bad $k"
done
[ -z "$bad" ]; ok $? "each is a kind plot knows${bad:+ (not:$bad)}"

# every option offered is one the verb's own parser takes: none is unknown to it
for v in $verbs; do
        [ "$v" = run ] && continue
        opts=$(comp 1 "$v" --)
        bad=
        for o in $opts; do
                "$C" "$v" "$o" </dev/null 2>&1 | grep -q "unknown option" && bad="$bad $o"
        done
        echo "$opts" | grep -qx -- --help && [ -z "$bad" ]
        ok $? "$v: $(echo "$opts" | wc -l) options offered, each taken by $v${bad:+ (unknown:$bad)}"
done
for s in $subs; do
        opts=$(comp 2 run "$s" --)
        bad=
        for o in $opts; do
                "$C" run "$s" "$o" </dev/null 2>&1 | grep -q "unknown option" && bad="$bad $o"
        done
        echo "$opts" | grep -qx -- --help && [ -z "$bad" ]
        ok $? "run $s: $(echo "$opts" | wc -l) options offered, each taken by it${bad:+ (unknown:$bad)}"
done
echo "$(comp 2 run exec --score-f)" | grep -qx -- --score-from; ok $? "run exec offers --score-from"

# values from the database, as runs and metrics show them
"$C" --format json runs >"$TMP/runs.json"
names=$(jpy '"\n".join(r["name"] for r in d["runs"])' <"$TMP/runs.json" | sort)
[ "$(comp 1 explain "")" = "$names" ]; ok $? "explain RUN: the $(echo "$names" | wc -l) run names runs lists"
[ "$(comp 2 report --since "" | grep -v -x -e today -e yesterday -e now)" = "$names" ]
ok $? "report --since: the run names (and today, yesterday, now)"
[ "$(comp 1 report --until=msg-g1 | sed 's/^--until=//')" = "$(echo "$names" | grep '^msg-g1')" ]
ok $? "--until=PREFIX: the run names that start with it, after --until="
keys=$(jpy '"\n".join(sorted({k + "=" for r in d["runs"] for k in r["tags"]}))' <"$TMP/runs.json")
[ "$(comp 2 runs --tag "")" = "$keys" ]; ok $? "--tag: the tag keys, each with its =: $(echo $keys)"
vals=$(jpy '"\n".join(sorted({"bench=" + r["tags"]["bench"] for r in d["runs"] if "bench" in r["tags"]}))' <"$TMP/runs.json")
[ "$(comp 2 runs --tag bench=)" = "$vals" ]; ok $? "--tag bench=: its values: $(echo $vals)"
scores=$(jpy '"\n".join(sorted({k for r in d["runs"] for k in r["scores"]}))' <"$TMP/runs.json")
[ "$(comp 2 curve --score "")" = "$scores" ]; ok $? "--score: the score keys: $(echo $scores)"
comp 2 report --group-by "" | grep -qx host && [ -z "$(comm -23 <(echo "$keys" | tr -d =) <(comp 2 report --group-by ""))" ]
ok $? "--group-by: host and every tag key"
metrics=$("$C" --format json metrics | jpy '"\n".join(m["name"] for m in d["metrics"])' | sort)
[ "$(comp 1 query "")" = "$metrics" ]; ok $? "query METRIC: the $(echo "$metrics" | wc -l) metrics that metrics lists"
[ "$(comp 2 report --metric context_switches,lock_con)" = "context_switches,lock_contentions" ]
ok $? "--metric M,M: the list's last item"
[ "$(comp 4 run exec x -- "")" = @commands ] && [ "$(comp 5 run exec x -- cat "")" = @files ]
ok $? "run exec after --: a command, then files"
[ "$(comp 1 --db "")" = @files ] && [ "$(comp 1 --format "")" = "$(echo csv json table | sorted)" ]
ok $? "the global options' values: --db a file, --format its three"
[ -z "$("$C" __complete 3 --db "$TMP/none.db" explain "" 2>&1)" ] && [ ! -e "$TMP/none.db" ]
ok $? "no database (--db names none): no run names, not a word on standard error, no file made"

# the bash script, as bash calls it (words split at = and :, as bash does)
bash_complete() {
        bash -c '
                source /usr/share/bash-completion/bash_completion 2>/dev/null
                source "$1/completion/bash/scalemonctl"
                line=$2 COMP_LINE=$2 COMP_POINT=${#2}
                read -r -a COMP_WORDS < <(echo "$line" | sed "s/\([=:]\)/ \1 /g")
                [ "${line: -1}" = " " ] && COMP_WORDS+=("")
                COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
                _scalemonctl
                printf "%s\n" "${COMPREPLY[@]}"' _ "$srcdir" "$1" | sort
}
export PATH=$top_builddir:$PATH
[ "$(bash_complete "scalemonctl run e")" = exec ]; ok $? "bash: scalemonctl run e -> exec"
[ "$(bash_complete "scalemonctl report --since msg-g1")" = "$(echo "$names" | grep '^msg-g1')" ]
ok $? "bash: --since msg-g1 -> the run names"
[ "$(bash_complete "scalemonctl report --since=msg-g1-r")" = "$(echo "$names" | grep '^msg-g1-r')" ]
ok $? "bash: --since=msg-g1-r -> the run names (bash replaces the word after =)"
[ "$(bash_complete "scalemonctl runs --tag bench=m")" = "$(echo "$vals" | grep '^bench=m' | sed 's/^bench=//')" ]
ok $? "bash: --tag bench=m -> its values"
[ "$(bash_complete "scalemonctl report --metric context_switches,lock_cont")" = context_switches,lock_contentions ]
ok $? "bash: --metric context_switches,lock_cont -> the list completed"
if command -v zsh >/dev/null; then
        zsh_complete() {
                zsh -f -c '
                        words=(${(z)2}); [[ $2 == *" " ]] && words+=("")
                        CURRENT=${#words}
                        compadd() { while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -S ]] && shift; shift; done
                                    [[ $1 == -- ]] && shift; print -rl -- "$@"; }
                        _files() { print -r -- @files; }
                        source "$1/completion/zsh/_scalemonctl"' _ "$srcdir" "$1" | sort
        }
        [ "$(zsh_complete "scalemonctl run e")" = exec ]; ok $? "zsh: scalemonctl run e -> exec"
        [ "$(zsh_complete "scalemonctl runs --tag bench=m")" = "$(echo "$vals" | grep '^bench=m')" ]
        ok $? "zsh: --tag bench=m -> its values"
        [ "$(zsh_complete "scalemonctl --db ")" = @files ]; ok $? "zsh: --db -> files"
else
        for t in "run e" "--tag bench=m" "--db"; do skip_one "zsh is not installed" -- "zsh: $t"; done
fi
finish
