#!/bin/bash
# live-files.sh - the modes scalemond creates its files with, and the
# symlinks it refuses to follow (scalemond(8), FILES AND PERMISSIONS):
# database, -wal, -shm and socket (0660, the control group's: never
# world-writable) under umask 000 and 077, and symlinks planted by another
# user (nobody) at the database, -wal and socket paths.
. "${srcdir:-.}/tests/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip_all "sqlite3 command-line tool not installed"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) not installed"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null || skip_all "no user nobody or group nogroup"
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
modes() { stat -c '%n %a' "$@" | sed "s|$TMP/||"; }
chmod 0711 "$TMP"
CG=users                        # the control group: it gets the socket file
getent group "$CG" >/dev/null || CG=
printf 'control_group = %s\n' "${CG:-scalemon}" > "$TMP/scalemon.conf"
CGID=$(getent group "${CG:-scalemon}" | cut -d: -f3); CGID=${CGID:-$(id -g)}   # no such group: the daemon's own

# --- modes, under the widest and a narrow umask; directories made by the daemon ---
for um in 000 077; do
        DB=$TMP/state$um/scalemon.db SOCK=$TMP/run$um/control.sock
        umask $um; start_daemon --config "$TMP/scalemon.conf"; umask 022
        wait_flushed "$(now_ns)"
        got=$(modes "$TMP/state$um" "$DB" "$DB-wal" "$DB-shm" "$TMP/run$um" "$SOCK" | tr '\n' ' ')
        db=$(printf '%o' $((0640 & ~0$um)))
        dir=$(printf '%o' $((0755 & ~0$um)))
        want="state$um $dir state$um/scalemon.db $db state$um/scalemon.db-wal $db state$um/scalemon.db-shm $db run$um $dir run$um/control.sock 660 "
        [ "$got" = "$want" ]; ok $? "umask $um: directories $dir, database, -wal, -shm $db, socket 660 ($got)"
        ww=$(find "$TMP/state$um" "$TMP/run$um" -perm /o+w | wc -l)
        [ "$ww" = 0 ]; ok $? "umask $um: nothing world-writable, the socket included ($ww)"
        own=$(stat -c '%u:%g' "$DB" "$DB-wal" "$DB-shm" | sort -u)
        [ "$own" = "$(id -u):$(id -g)" ]; ok $? "umask $um: database files owned by the daemon's uid and gid ($own)"
        own=$(stat -c '%u:%g' "$SOCK")
        [ "$own" = "$(id -u):$CGID" ]; ok $? "umask $um: socket owned by the daemon's uid and the control group ${CG:-(none: its own)} ($own)"
        stop_daemon; ok $? "umask $um: daemon stops (exit 0)"
done

# --- symlinks planted by another user in a sticky, world-writable directory (/tmp) ---
mkdir -m 1777 "$TMP/sticky"
plant() { "${AS_NOBODY[@]}" ln -s "$1" "$2"; }
refused() {     # refused WHAT LINK DAEMON-ARGS...: exit 1, one line naming LINK
        local what=$1 link=$2; shift 2
        out=$("$SCALEMOND" --foreground --interval 100ms "$@" 2>&1); rc=$?
        [ $rc = 1 ] && [ "$(echo "$out" | grep -c "symlink")" = 1 ] &&
                echo "$out" | grep -q "^scalemond: $what $link is a symlink owned by uid 65534, neither scalemond's user (uid $(id -u)) nor the owner of its directory (uid 0): refusing to follow it"
        ok $? "$what symlink planted by nobody: exit $rc, one line naming it ($(echo "$out" | grep symlink))"
}
plant "$TMP/victim.db" "$TMP/sticky/scalemon.db"
refused "database path" "$TMP/sticky/scalemon.db" --db "$TMP/sticky/scalemon.db" --socket "$TMP/s1.sock"
[ ! -e "$TMP/victim.db" ]; ok $? "its target not created"

plant "$TMP/victim-wal" "$TMP/sticky/w.db-wal"
refused "database path" "$TMP/sticky/w.db-wal" --db "$TMP/sticky/w.db" --socket "$TMP/s2.sock"
[ ! -e "$TMP/victim-wal" ] && [ ! -e "$TMP/sticky/w.db" ]; ok $? "neither the -wal target nor the database created"

plant "$TMP/victim.sock" "$TMP/sticky/control.sock"
refused "control socket" "$TMP/sticky/control.sock" --db "$TMP/s3.db" --socket "$TMP/sticky/control.sock"
[ ! -e "$TMP/victim.sock" ] && [ -L "$TMP/sticky/control.sock" ]; ok $? "the socket link left alone, nothing at its target"

# --- allowed: a symlink of the daemon's own user, or of the directory's owner ---
ln -s "$TMP/mine.db" "$TMP/sticky/mine.db"
DB=$TMP/sticky/mine.db SOCK=$TMP/mine.sock
start_daemon
wait_flushed "$(now_ns)"
stop_daemon
[ -L "$TMP/sticky/mine.db" ] && [ "$(sqlite3 -readonly "$TMP/mine.db" 'SELECT count(*) > 0 FROM tick')" = 1 ]
ok $? "a root-owned symlink is followed: the target holds the ticks"
mkdir "$TMP/nbdir" && chown nobody:nogroup "$TMP/nbdir"
plant "$TMP/theirs.db" "$TMP/nbdir/theirs.db"
DB=$TMP/nbdir/theirs.db SOCK=$TMP/theirs.sock
start_daemon
wait_flushed "$(now_ns)"
stop_daemon
[ "$(sqlite3 -readonly "$TMP/theirs.db" 'SELECT count(*) > 0 FROM tick')" = 1 ]
ok $? "a symlink owned by the owner of its directory is followed (the kernel's protected_symlinks rule)"
finish
