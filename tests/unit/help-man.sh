#!/bin/bash
# help-man.sh - `--help` and scalemonctl(1) say the same, verb by verb:
# every option a verb's parser takes (its getopt table, as `scalemonctl
# __complete` lists it) is in `scalemonctl VERB --help` and on the verb's
# line of `scalemonctl --help`; every option that --help names is in the
# verb's section of scalemonctl(1); every option of the section's synopsis
# is one the verb takes; and the forms of a value (the last: of --score-regex, the
# formats of --score-from) are in both.  No root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
C=$SCALEMONCTL
MAN=$srcdir/man/scalemonctl.1
opts() { grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }
missing() { comm -23 <(echo "$1" | sed '/^$/d' | sort -u) <(echo "$2" | sed '/^$/d' | sort -u) | tr '\n' ' '; }

# The man page's verb sections: a heading is the line after a .TP outside
# any .RS list; a section runs to the next heading.  Troff's escapes out.
python3 - "$MAN" "$TMP/man" <<'EOF'
import os, re, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
def plain(s):
    s = re.sub(r'\\f[BIRP]', '', s).replace('\\-', '-').replace('\\(aq', "'")
    s = re.sub(r'\\\(..', ' ', s)
    return s.replace('"', '')
lines = open(src).read().split('\n')
i = lines.index('.SH VERBS') + 1
depth, prev, verb, sec = 0, '', None, {}
for l in lines[i:]:
    if l.startswith('.SH'):
        break
    if l.startswith('.RS'):
        depth += 1
    elif l.startswith('.RE'):
        depth -= 1
    elif prev == '.TP' and depth == 0 and re.match(r'\.BI? ', l):
        w = plain(l[l.index(' ') + 1:]).split()
        verb = ' '.join(w[:2]) if w[0] == 'run' else w[0]
        sec.setdefault(verb, {'synopsis': '', 'text': ''})['synopsis'] += plain(l) + '\n'
    if verb:
        sec[verb]['text'] += plain(l) + '\n'
    prev = l
for v, d in sec.items():
    for k in ('synopsis', 'text'):
        open(os.path.join(out, v.replace(' ', '_') + '.' + k), 'w').write(d[k])
EOF
ok $? "scalemonctl(1)'s verb sections read"

verbs=$("$C" --help | awk '/^Verbs:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' | sort -u)
all=
for v in $verbs; do
        if [ "$v" = run ]; then
                for s in $("$C" __complete 1 run ""); do all="$all run_$s"; done
        else
                all="$all $v"
        fi
done
for vs in $all; do
        v=${vs//_/ }
        [ -f "$TMP/man/$vs.text" ]; ok $? "$v: scalemonctl(1) has a section for it"
        # shellcheck disable=SC2086
        help=$("$C" $v --help 2>&1)
        hopts=$(echo "$help" | opts | grep -vx -- --help)
        # shellcheck disable=SC2086
        topts=$("$C" __complete $(echo "$v" | wc -w) $v -- | grep -vx -- --help)
        m=$(missing "$topts" "$hopts")
        [ -z "$m" ]; ok $? "$v: every option it takes is in its --help${m:+ (not: $m)}"
        m=$(missing "$hopts" "$(opts <"$TMP/man/$vs.text")")
        [ -z "$m" ]; ok $? "$v: every option of its --help is in its section of scalemonctl(1)${m:+ (not: $m)}"
        m=$(missing "$(opts <"$TMP/man/$vs.synopsis")" "$topts")
        [ -z "$m" ]; ok $? "$v: every option of the section's synopsis is one it takes${m:+ (not: $m)}"
        # the verb's line(s) in scalemonctl --help, up to the next verb's
        line=$("$C" --help | awk -v v="$v" '/^Options:/ { on = 0 } on && /^  [a-z]/ { on = 0 }
                index($0, "  " v) == 1 && (substr($0, length(v) + 3, 1) ~ /[ ]|^$/) { on = 1 } on')
        m=$(missing "$topts" "$(echo "$line" | opts)")
        [ -n "$line" ] && [ -z "$m" ]; ok $? "$v: every option it takes is on its line of scalemonctl --help${m:+ (not: $m)}"
done

# the global options: --help's Options and the man page's GLOBAL OPTIONS
g=$("$C" --help | awk '/^Options:/ { on = 1 } on' | opts)
gm=$(awk '/^\.SH GLOBAL OPTIONS/ { on = 1; next } /^\.SH/ { on = 0 } on' "$MAN" | sed 's/\\-/-/g' | opts)
[ "$g" = "$gm" ]; ok $? "the global options: the same in --help and scalemonctl(1) ($(echo $g))"

# forms of a value, in both
rx=$("$C" run exec --help)
for f in 'sum:' 'mean:' 'last:' stress-ng perf-bench fio 'json:FILE:PATH'; do
        echo "$rx" | grep -qF -- "$f" && grep -qF -- "$f" "$TMP/man/run_exec.text"
        ok $? "run exec: $f in its --help and in scalemonctl(1)"
done
"$C" --help | grep -qF 'last:'; ok $? "scalemonctl --help shows the last: form of --score-regex"
finish
