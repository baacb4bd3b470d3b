#!/bin/bash
# live-names.sh - hostile content in run names, tag keys and values, score
# keys and mark texts: quotes, semicolons, SQL, newlines, tabs, escape
# sequences, 10 kB strings, bytes that are not UTF-8, and NUL (which argv
# cannot carry, so it goes through the control socket as JSON "\u0000").
#
# The rule (lib/proto.c, shared by scalemonctl and scalemond; documented in
# scalemonctl(1) and scalemond(8)):
#   run name   1-128 of  A-Z a-z 0-9 . _ - + : = ,  not starting with - or @
#   key        1-64 of  A-Z a-z 0-9 _ . -  starting with a letter or _
#   tag value  1-256 bytes, mark text 1-1024 bytes: valid UTF-8, no control
#              character but tab (no C0, DEL or C1; no NUL)
# Whatever the rule lets through must come back byte for byte, from
# `scalemonctl --format json` and from SQLite itself; whatever it refuses
# gets exit 2 and one line from scalemonctl, and an error reply from the
# daemon.  Nothing is ever read as SQL: the tables stay, integrity_check is
# ok, and the number of runs is the number of good requests.
. "${srcdir:-.}/tests/lib.sh"
fake_kernel
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v python3 >/dev/null || skip_all "python3 not installed"

hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
lc() { tr 'A-F' 'a-f'; }
nruns() { sql "SELECT count(*) FROM run"; }

# refused DESC WANT-REGEX -- scalemonctl ARGS...: exit 2, one stderr line
# matching, nothing on stdout, no run added.
refused() {
        local desc=$1 re=$2; shift 3
        local before; before=$(nruns)
        ctl "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
        local why=""
        [ "$rc" = 2 ] || why="exit $rc"
        [ -s "$TMP/out" ] && why="$why; stdout not empty"
        [ "$(wc -l <"$TMP/err")" = 1 ] || why="$why; $(wc -l <"$TMP/err") stderr lines"
        grep -Eq -- "$re" "$TMP/err" || why="$why; message"
        [ "$(nruns)" = "$before" ] || why="$why; a run was added"
        [ -z "$why" ]; ok $? "refused by scalemonctl: $desc"
        [ -z "$why" ] || diag "$why: $(head -c 300 "$TMP/err" | od -c | head -5 | tr '\n' ' ')"
}

# ask HEX-OF-REQUEST-LINE: one request (bytes) on the control socket; prints
# the reply line.
ask() {
        python3 - "$SOCK" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(bytes.fromhex(sys.argv[2]) + b"\n")
buf = b""
while not buf.endswith(b"\n"):
        k = s.recv(65536)
        if not k:
                break
        buf += k
sys.stdout.write(buf.decode("utf-8", "backslashreplace"))
EOF
}

# sock_refused DESC HEX-OF-REQUEST: the daemon answers ok:false with an
# error on one line, and adds no run.
sock_refused() {
        local before reply; before=$(nruns)
        reply=$(ask "$2")
        [ "$(printf '%s\n' "$reply" | wc -l)" = 1 ] &&
                [ "$(printf '%s' "$reply" | jpy 'd["ok"]')" = false ] &&
                [ -n "$(printf '%s' "$reply" | jpy 'd["error"]')" ] &&
                [ "$(nruns)" = "$before" ]
        ok $? "refused by scalemond: $1"
        diag "  reply: ${reply:0:200}"
}

# req JSON-TEMPLATE RAW-VALUE: the request line as hex, with @V@ in the
# template replaced by RAW-VALUE encoded as a JSON string (when it is UTF-8;
# otherwise its bytes go in raw).
req() {
        python3 - "$1" "$(hex "$2")" <<'EOF'
import json, sys
v = bytes.fromhex(sys.argv[2])
try:
        enc = json.dumps(v.decode("utf-8")).encode()
except UnicodeDecodeError:
        enc = b'"' + v + b'"'
print(sys.argv[1].encode().replace(b"@V@", enc).hex())
EOF
}

# A run's tag value from `scalemonctl --format json runs`, and from SQLite,
# as hex.
json_tag() {
        ctl --format json runs | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = [r for r in d["runs"] if r["name"] == sys.argv[1]]
print(r[0]["tags"].get(sys.argv[2], "").encode().hex() if r else "no-run")' "$1" "$2"
}
sql_tag() { sql "SELECT hex(value) FROM run_tag JOIN run ON run.id = run_tag.run WHERE run.name = '$1' AND key = '$2'" | lc; }

TEN_K=$(head -c 10240 /dev/zero | tr '\0' v)
DROP="'; DROP TABLE run; --"

start_daemon
expect_runs=0

# --- tag values the rule lets through: stored byte for byte ---
good_values=(
        "it's"
        'say "hi"'
        'a;b;c'
        "$DROP"
        "\"); DELETE FROM run_tag; --"
        $'tab\there'
        'back\slash \n not a newline'
        '%s%n%x'
        '$(id) `id`'
        '  spaces around  '
        'ünïcødé ✓ 🙂 日本語'
        "$(head -c 256 /dev/zero | tr '\0' w)"
        "$(printf '%.0sé' $(seq 128))"
)
targs=()
for i in "${!good_values[@]}"; do targs+=(--tag "v$i=${good_values[$i]}"); done
ctl run start tagged "${targs[@]}" >/dev/null; ok $? "run start with ${#good_values[@]} tags of quotes, SQL, tabs, UTF-8, 256 bytes"
ctl run stop tagged >/dev/null; ok $? "and stop"
expect_runs=$((expect_runs + 1))
for i in "${!good_values[@]}"; do
        want=$(hex "${good_values[$i]}")
        got_json=$(json_tag tagged "v$i")
        got_sql=$(sql_tag tagged "v$i")
        [ "$got_json" = "$want" ] && [ "$got_sql" = "$want" ]
        ok $? "tag v$i (${#good_values[$i]} chars) read back byte-exact from --format json and from SQLite"
        [ "$got_json" = "$want" ] && [ "$got_sql" = "$want" ] || diag "want $want json $got_json sql $got_sql"
done

# --- names the rule lets through, at their limits ---
longname=$(printf 'a.b_c-d+e:f=g,h%.0s' $(seq 8))$(printf 'x%.0s' $(seq 8))   # 128 characters
for n in "x=1,y:2" "$longname" "_.+" "9lives"; do
        ctl run exec "$n" --tag "k=$DROP" -- true >/dev/null
        ok $? "run exec with name '${n:0:40}' (${#n} characters)"
        expect_runs=$((expect_runs + 1))
        [ "$(sql "SELECT lower(hex(name)) FROM run WHERE name = '$n'")" = "$(hex "$n")" ] &&
                [ "$(ctl --format json runs | jpy "[r['name'] for r in d['runs']]" | grep -cxF -- "$n")" = 1 ]
        ok $? "name '${n:0:40}' stored and listed as given"
        [ "$(sql_tag "$n" k)" = "$(hex "$DROP")" ]; ok $? "its tag holding SQL is plain text"
done

# --- mark texts ---
ctl run start marked >/dev/null || bail "run start marked failed"
expect_runs=$((expect_runs + 1))
good_marks=("$DROP" "it's \"quoted\"; really" $'col1\tcol2' "phase ✓ 2" "$(head -c 1024 /dev/zero | tr '\0' m)")
for t in "${good_marks[@]}"; do
        ctl run mark marked "$t" >/dev/null; ok $? "mark of ${#t} characters accepted"
done
ctl run stop marked >/dev/null
got=$(ctl --format json report --since marked --until marked |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(m["text"].encode().hex() for m in d["runs"][0]["marks"]))')
want=$(for t in "${good_marks[@]}"; do hex "$t"; echo; done | paste -sd ' ')
[ "$got" = "$want" ]; ok $? "the marks read back byte-exact from --format json report, in order"
got=$(sql "SELECT lower(hex(text)) FROM run_mark JOIN run ON run.id = run_mark.run WHERE run.name = 'marked' ORDER BY run_mark.t, run_mark.id" | paste -sd ' ')
[ "$got" = "$want" ]; ok $? "and from SQLite"

# --- what the rule refuses, through scalemonctl: exit 2, one line ---
NAME_RE="run name '.*': a run name"
for n in "it's" 'a"b' 'a;b' "$DROP" $'a\nb' $'a\tb' "$TEN_K" $'\xff\xfe' 'ünï' "" "-x" "@1"; do
        refused "run name $(printf '%q' "${n:0:24}") (${#n} chars)" "$NAME_RE" -- run start -- "$n"
done
refused "run exec name with SQL" "$NAME_RE" -- run exec "$DROP" -- true
for k in "k'" 'k"' 'k;' "$DROP" $'k\nx' "$TEN_K" $'\xff' "9k" ""; do
        refused "tag key $(printf '%q' "${k:0:24}")" "(--tag '.*': (a key|expected KEY=VALUE))" -- run start ok1 --tag "$k=v"
        refused "score key $(printf '%q' "${k:0:24}")" "(--score '.*': (a key|expected KEY=VALUE))" -- run stop --score "$k=1"
done
for v in $'a\nb' $'a\rb' $'\e[31mred' $'\x7f' $'\xc2\x85' $'\xff\xfe' $'\xc0\xaf' $'\xed\xa0\x80' \
         "$(head -c 257 /dev/zero | tr '\0' w)" "$TEN_K" ""; do
        refused "tag value $(printf '%q' "${v:0:24}") (${#v} chars)" \
                "--tag 'k=.*': (a value is 1 to 256 bytes|control characters|not valid UTF-8)" -- run start ok1 --tag "k=$v"
done
for t in $'a\nb' $'\xff\xfe' "$TEN_K" $'\e]0;title\a'; do
        refused "mark text $(printf '%q' "${t:0:24}")" "run mark TEXT: " -- run mark marked "$t"
done
# the message escapes what it echoes: no raw newline or escape reaches the terminal
ctl run start ok1 --tag $'k=\e[2J\nx' 2>"$TMP/err" >/dev/null
! grep -q $'\e' "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ]; ok $? "an escape sequence in a bad value is shown escaped: $(cat "$TMP/err")"

# --- and through the control socket: the daemon applies the same rule ---
ask "$(printf '%s' '{"cmd":"status"}' | od -An -v -tx1 | tr -d ' \n')" | grep -q '"ok":true'; ok $? "the socket answers"
sock_refused "NUL in a name (\\u0000)" "$(printf '%s' '{"cmd":"run-start","name":"nul\u0000x"}' | od -An -v -tx1 | tr -d ' \n')"
sock_refused "NUL in a tag value" "$(printf '%s' '{"cmd":"run-start","name":"nul1","tags":{"k":"a\u0000b"}}' | od -An -v -tx1 | tr -d ' \n')"
sock_refused "NUL in a mark text" "$(printf '%s' '{"cmd":"run-mark","name":"marked","text":"a\u0000b"}' | od -An -v -tx1 | tr -d ' \n')"
sock_refused "NUL in a key" "$(printf '%s' '{"cmd":"run-start","name":"nul2","tags":{"k\u0000":"v"}}' | od -An -v -tx1 | tr -d ' \n')"
sock_refused "a raw NUL byte in the line" "$(printf '%s' '{"cmd":"run-start","name":"nul3"}' | od -An -v -tx1 | tr -d ' \n' | sed 's/^7b/7b00/')"
sock_refused "a lone surrogate (\\ud800)" "$(printf '%s' '{"cmd":"run-start","name":"s1","tags":{"k":"\ud800"}}' | od -An -v -tx1 | tr -d ' \n')"
sock_refused "a C1 control (\\u0085)" "$(printf '%s' '{"cmd":"run-start","name":"s2","tags":{"k":"a\u0085b"}}' | od -An -v -tx1 | tr -d ' \n')"
for v in $'a\nb' $'\e[31m' $'\xff\xfe' "$(head -c 257 /dev/zero | tr '\0' w)" "$TEN_K"; do
        sock_refused "tag value $(printf '%q' "${v:0:24}") (${#v} chars)" "$(req '{"cmd":"run-start","name":"s3","tags":{"k":@V@}}' "$v")"
done
for n in "$DROP" "it's" $'a\nb' $'\xff\xfe' "$TEN_K"; do
        sock_refused "run name $(printf '%q' "${n:0:24}")" "$(req '{"cmd":"run-start","name":@V@}' "$n")"
done
for t in $'a\nb' $'\xff' "$TEN_K"; do
        sock_refused "mark text $(printf '%q' "${t:0:24}")" "$(req '{"cmd":"run-mark","name":"marked","text":@V@}' "$t")"
done
sock_refused "score key with SQL" "$(req '{"cmd":"run-stop","name":"marked","scores":{"k":1,@V@:2}}' "$DROP")"
# the daemon's error echoes what it was sent, but as one line of UTF-8 of
# at most 300 bytes: a 60 kB key, a key with a newline forging a log line,
# an unknown cmd cut inside a character.  Otherwise json_pack() refuses the
# reply (the client waits 30 s for nothing) and the log gets a fake line.
chk_err() {     # chk_err DESC HEX
        local reply; reply=$(ask "$2")
        printf '%s' "$reply" | python3 -c '
import json, sys
d = json.loads(sys.stdin.buffer.read())
e = d["error"].encode()
sys.exit(0 if d["ok"] is False and 0 < len(e) <= 300 and b"\n" not in e else 1)'
        ok $? "$1: an error reply of one line, at most 300 bytes (${#reply} bytes of reply)"
}
chk_err "a 60 kB tag key" "$(req '{"cmd":"run-start","name":"e1","tags":{@V@:"v"}}' "$(head -c 60000 /dev/zero | tr '\0' k)x;")"
chk_err "a tag key with a newline" "$(req '{"cmd":"run-start","name":"e2","tags":{@V@:"v"}}' $'k\nFORGED: run e2 started')"
chk_err "an unknown field with a newline" "$(req '{"cmd":"run-start","name":"e3",@V@:1}' $'f\nFORGED: reload done')"
chk_err "a run name with a newline" "$(req '{"cmd":"run-start","name":@V@}' $'n\nFORGED: x')"
chk_err "an unknown cmd cut inside a character" "$(req '{"cmd":@V@}' "a$(printf '%.0sé' $(seq 40))")"
! grep -q '^FORGED' "$TMP/daemon.log"; ok $? "no forged line in the daemon's log"

# what the rule allows arrives intact over the socket too, escapes decoded
r=$(ask "$(req '{"cmd":"run-start","name":"viasock","tags":{"q":@V@}}' "$DROP \"x\" ✓	tab")")
[ "$(printf '%s' "$r" | jpy 'd["ok"]')" = true ]; ok $? "a tag with quotes, SQL, UTF-8 and a tab over the socket: $r"
expect_runs=$((expect_runs + 1))
[ "$(sql_tag viasock q)" = "$(hex "$DROP \"x\" ✓	tab")" ]; ok $? "stored byte-exact"
ctl run stop viasock >/dev/null

# --- nothing was read as SQL ---
kill -0 "$DAEMON_PID"; ok $? "the daemon is still running"
tables=$(sql "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('run', 'run_tag', 'run_score', 'context_kv', 'run_mark', 'run_total') ORDER BY name" | paste -sd ' ')
[ "$tables" = "context_kv run run_mark run_score run_tag run_total" ]; ok $? "every run table is still there ($tables)"
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
[ "$(nruns)" = "$expect_runs" ]; ok $? "$(nruns) runs, as many as the good requests ($expect_runs)"
[ "$(sql "SELECT count(*) FROM run_tag")" -ge "${#good_values[@]}" ]; ok $? "the tags are all there"
stop_daemon; ok $? "scalemond stops cleanly"
finish
