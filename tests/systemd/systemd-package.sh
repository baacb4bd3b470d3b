#!/bin/bash
# systemd-package.sh - the Debian packages, as a lab installs them.  Built
# from this build tree's release tarball (make dist) with dpkg-buildpackage
# (debian/rules: BPF on, no test seams; nocheck, the tests being these),
# lintian clean or each tag explained in debian/; then, in a clean Debian
# 12 root (debootstrap --variant=minbase with systemd and dbus, made once
# and cached under /var/cache/scalemon-test) booted with its own systemd
# by the harness: apt-get install ./scalemon_*.deb (no network inside: the
# dependencies come from the root's apt cache, filled beforehand),
# systemctl start scalemon, a member of group scalemon runs `scalemonctl
# run exec ... --score-from stress-ng` without root, the exporter answers
# a scrape, and apt-get remove, then purge, leave what Debian policy says.
# SCALEMON_DEBS=DIR takes packages built already (tools/test.sh).
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/systemd/systemd-harness.sh"
sd_need
T_START=$(date +%s)
for c in dpkg-buildpackage lintian debootstrap; do
        command -v $c >/dev/null || skip_all "no $c here (tools/install-deps.sh installs it)"
done

CACHE=/var/cache/scalemon-test
# the clean root: what it is made of names it, so that a change makes another
ROOT_PKGS=systemd,dbus
ROOT=$CACHE/bookworm-minbase-${ROOT_PKGS//,/-}-v1
MIRROR=${SCALEMON_MIRROR:-http://deb.debian.org/debian}

# ---- the packages ----
DEBS=${SCALEMON_DEBS:-}
if [ -z "$DEBS" ]; then
        t0=$(date +%s)
        make -s -C "$top_builddir" dist >"$TMP/dist.log" 2>&1 || { tail -n 20 "$TMP/dist.log"; bail "make dist failed"; }
        mkdir -p "$TMP/deb"
        tar -C "$TMP/deb" -xzf "$top_builddir"/scalemon-*.tar.gz
        (cd "$TMP"/deb/scalemon-*/ && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
                >"$TMP/deb/build.log" 2>&1
        ok $? "dpkg-buildpackage -us -uc -b of the release tarball ($(( $(date +%s) - t0 )) s)" ||
                { tail -n 30 "$TMP/deb/build.log" | sed 's/^/# build: /'; bail "no packages"; }
        DEBS=$TMP/deb
        grep -q -- '--enable-bpf' "$DEBS/build.log" && ! grep -q -- '--enable-test-seams' "$DEBS/build.log" &&
                grep -q 'whether to build lock wait time (BPF)... yes' "$DEBS/build.log"
        ok $? "configured as a release: BPF on, no test seams"
fi
DEB=$(ls "$DEBS"/scalemon_*.deb 2>/dev/null | head -1)
XDEB=$(ls "$DEBS"/scalemon-exporter_*.deb 2>/dev/null | head -1)
[ -f "$DEB" ] && [ -f "$XDEB" ] || bail "no scalemon_*.deb and scalemon-exporter_*.deb in $DEBS"

# what each package holds
contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
contents "$DEB" >"$TMP/scalemon.list"; contents "$XDEB" >"$TMP/exporter.list"
missing=
for f in /usr/sbin/scalemond /usr/bin/scalemonctl /lib/systemd/system/scalemon.service \
        /usr/lib/sysusers.d/scalemon.conf /usr/lib/tmpfiles.d/scalemon.conf /usr/share/man/man1/scalemonctl.1.gz \
        /usr/share/man/man8/scalemond.8.gz /usr/share/man/man5/scalemon.conf.5.gz \
        /usr/share/bash-completion/completions/scalemonctl /usr/share/zsh/vendor-completions/_scalemonctl \
        /usr/share/doc/scalemon/GUIDE.md.gz; do
        grep -qx "$f" "$TMP/scalemon.list" || missing="$missing $f"
done
[ -z "$missing" ]; ok $? "scalemon has the daemon, client, unit, sysusers and tmpfiles entries, man pages, completion${missing:+ (not:$missing)}"
missing=
for f in /usr/bin/scalemon-exporter /lib/systemd/system/scalemon-exporter.socket \
        /lib/systemd/system/scalemon-exporter.service /usr/share/man/man8/scalemon-exporter.8.gz \
        /usr/share/scalemon-exporter/grafana/scalemon.json /usr/share/scalemon-exporter/grafana/scalemon-dashboards.yaml; do
        grep -qx "$f" "$TMP/exporter.list" || missing="$missing $f"
done
[ -z "$missing" ]; ok $? "scalemon-exporter has its program, socket, service, man page, Grafana dashboard${missing:+ (not:$missing)}"
dpkg-deb -I "$XDEB" | grep -q "Depends: scalemon (= "; ok $? "scalemon-exporter depends on scalemon of its version"
dpkg-deb --fsys-tarfile "$XDEB" | tar -xO ./usr/share/scalemon-exporter/grafana/scalemon-dashboards.yaml |
        grep -q '^      path: /usr/share/scalemon-exporter/grafana$'
ok $? "its Grafana provisioning file loads the dashboard from where the package puts it"
dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./usr/sbin/scalemond | strings | grep -q SCALEMON_TEST
[ $? = 1 ]; ok $? "the packaged scalemond has no test hook (strings: no SCALEMON_TEST)"

# lintian: nothing, or an override that says why
lintian -I --pedantic "$DEB" "$XDEB" >"$TMP/lintian.out" 2>&1
grep -E '^[EWIPX]: ' "$TMP/lintian.out" | sed 's/^/# lintian: /'
! grep -qE '^[EWIPX]: ' "$TMP/lintian.out"; ok $? "lintian -I --pedantic: no tag left unexplained"
bad=
for f in "$srcdir"/debian/*.lintian-overrides; do
        awk '/^#/ { why = 1; next } /^[a-z]/ && !why { bad = 1 } /^[a-z]/ { why = 0 } END { exit bad }' "$f" ||
                bad="$bad $(basename "$f")"
done
[ -z "$bad" ]; ok $? "every lintian override has its reason above it${bad:+ (not in:$bad)}"

# ---- a clean Debian 12 root, made once ----
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
if [ ! -x "$ROOT/lib/systemd/systemd" ]; then
        t0=$(date +%s)
        rm -rf "$ROOT.tmp"
        debootstrap --variant=minbase --include="$ROOT_PKGS" bookworm "$ROOT.tmp" "$MIRROR" >"$TMP/debootstrap.log" 2>&1 ||
                { tail -n 5 "$TMP/debootstrap.log" | sed 's/^/# /'; skip_all "cannot debootstrap a clean root from $MIRROR"; }
        printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
                "$MIRROR" "$MIRROR" "$MIRROR" >"$ROOT.tmp/etc/apt/sources.list"
        chroot "$ROOT.tmp" apt-get clean
        mv "$ROOT.tmp" "$ROOT"
        diag "made the clean root $ROOT in $(( $(date +%s) - t0 )) s"
fi
# Its apt lists and cache: what installing the packages and stress-ng
# needs, fetched here, where there is a network (the container has none).
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mkdir -p "$ROOT/var/tmp/scalemon-debs"
cp "$DEB" "$XDEB" "$ROOT/var/tmp/scalemon-debs/"
t0=$(date +%s)
{ chroot "$ROOT" apt-get update -qq && chroot "$ROOT" apt-get install --download-only -y -qq \
        "/var/tmp/scalemon-debs/$(basename "$DEB")" "/var/tmp/scalemon-debs/$(basename "$XDEB")" stress-ng; } \
        >"$TMP/fetch.log" 2>&1
rc=$?
rm -rf "$ROOT/var/tmp/scalemon-debs"
[ $rc = 0 ] || { tail -n 5 "$TMP/fetch.log" | sed 's/^/# /'; skip_all "cannot fetch the dependencies from $MIRROR"; }
diag "dependencies in the root's apt cache ($(( $(date +%s) - t0 )) s)"
flock -u 9
[ -z "$(chroot "$ROOT" dpkg-query -W -f '${Package}\n' 'scalemon*' 2>/dev/null)" ]
ok $? "the clean root has no scalemon package"

# ---- installed, started, used ----
mkdir -p "$TMP/debs" && cp "$DEB" "$XDEB" "$TMP/debs/"
SD_ROOT=$ROOT SD_MORE_TREES=$TMP/debs sd_boot
in_root() { sd bash -c "$1"; }
t0=$(date +%s)
in_root "cd $TMP/debs && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ./$(basename "$DEB") ./$(basename "$XDEB")" \
        >"$TMP/install.log" 2>&1
ok $? "apt-get install ./$(basename "$DEB") ./$(basename "$XDEB") in the clean root ($(( $(date +%s) - t0 )) s)" ||
        tail -n 20 "$TMP/install.log" | sed 's/^/# apt: /'
grep -iE 'warning|error' "$TMP/install.log" | grep -v '^W: Download is performed unsandboxed' | sed 's/^/# apt: /'
in_root 'getent group scalemon >/dev/null && getent passwd scalemon >/dev/null'
ok $? "its sysusers entry made the user and group scalemon"
st=$(in_root 'stat -c "%U:%G %a" /var/lib/scalemon')
[ "$st" = "scalemon:scalemon 750" ]; ok $? "its tmpfiles entry made /var/lib/scalemon ($st)"
[ "$(in_root 'systemctl is-enabled scalemon.service scalemon-exporter.socket' | tr '\n' ' ')" = "enabled enabled " ]
ok $? "scalemon.service and scalemon-exporter.socket are enabled"
in_root 'systemctl start scalemon'; ok $? "systemctl start scalemon"
sd_poll 10 in_root 'systemctl is-active --quiet scalemon'; ok $? "scalemon is active: $(in_root 'systemctl show -P StatusText scalemon')"
lw=$(in_root 'scalemonctl --format json metrics' | jpy '[m["available"] for m in d["metrics"] if m["name"] == "lock_wait_ns"][0]')
[ "$lw" = true ]; ok $? "lock wait time (BPF) is available from the packaged daemon ($lw)"

in_root 'useradd --create-home --groups scalemon bench && DEBIAN_FRONTEND=noninteractive apt-get install -y -q stress-ng' \
        >"$TMP/stress.log" 2>&1
ok $? "a user bench in group scalemon; stress-ng installed" || tail -n 5 "$TMP/stress.log" | sed 's/^/# /'
in_root 'cd /home/bench && runuser -u bench -- scalemonctl run exec r1 --score-from stress-ng -- stress-ng --cpu 2 -t 3s --metrics-brief' \
        >"$TMP/r1.out" 2>&1
ok $? "bench (not root) runs scalemonctl run exec r1 --score-from stress-ng -- stress-ng --cpu 2 -t 3s --metrics-brief"
sed 's/^/# r1: /' "$TMP/r1.out"
in_root 'scalemonctl --format json runs' >"$TMP/runs.json"
want=$(awk '/metrc:/ && $4 == "cpu" && NF >= 10 { print $9 }' "$TMP/r1.out")
got=$(jpy '[r for r in d["runs"] if r["name"] == "r1"][0]["scores"].get("cpu")' <"$TMP/runs.json")
st=$(jpy '[r for r in d["runs"] if r["name"] == "r1"][0]["status"]' <"$TMP/runs.json")
[ "$st" = done ] && [ -n "$want" ] && awk -v a="$got" -v b="$want" 'BEGIN { exit !(a == b && b > 0) }'
ok $? "r1 is recorded, done, with score cpu $got (stress-ng printed $want)"
# the exporter: its socket starts it at the first scrape
in_root 'exec 3<>/dev/tcp/127.0.0.1/9993 && printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' >"$TMP/scrape.txt" 2>&1
grep -q '^scalemon_run_info{run="r1"' "$TMP/scrape.txt" && grep -q '^scalemon_context_switches_total{cpu="0"' "$TMP/scrape.txt"
ok $? "a scrape of port 9993 starts the exporter, which serves r1 and the per-CPU counters"
in_root 'bash -c "source /usr/share/bash-completion/completions/scalemonctl && complete -p scalemonctl"' | grep -q _scalemonctl
ok $? "bash completion for scalemonctl is installed"

# ---- removed, then purged ----
in_root 'DEBIAN_FRONTEND=noninteractive apt-get remove -y -q scalemon-exporter scalemon' >"$TMP/remove.log" 2>&1
ok $? "apt-get remove scalemon-exporter scalemon" || tail -n 10 "$TMP/remove.log" | sed 's/^/# /'
in_root '! systemctl is-active --quiet scalemon && [ ! -e /usr/sbin/scalemond ] && [ ! -e /lib/systemd/system/scalemon.service ]'
ok $? "removed: the daemon stopped, its program and unit gone"
in_root '[ -f /var/lib/scalemon/scalemon.db ] && getent group scalemon >/dev/null'
ok $? "removed, not purged: the database and the group stay"
[ "$(in_root "dpkg-query -W -f '\${db:Status-Abbrev}' scalemon")" = "rc " ]; ok $? "dpkg: scalemon removed, its purge to come (rc)"
in_root 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q scalemon-exporter scalemon' >"$TMP/purge.log" 2>&1
ok $? "apt-get purge scalemon-exporter scalemon" || tail -n 10 "$TMP/purge.log" | sed 's/^/# /'
in_root '[ ! -e /var/lib/scalemon ] && [ ! -e /etc/scalemon ]'; ok $? "purged: /var/lib/scalemon and /etc/scalemon are gone"
left=$(in_root 'find /etc/systemd /var/lib/systemd/deb-systemd-helper-enabled -name "scalemon*"')
[ -z "$left" ]; ok $? "no unit symlink or enablement state is left${left:+ ($left)}"
[ -z "$(in_root "dpkg-query -W -f '\${db:Status-Abbrev}' scalemon 2>/dev/null" | tr -d ' ')" ] ||
        [ "$(in_root "dpkg-query -W -f '\${db:Status-Abbrev}' scalemon" 2>/dev/null)" = "pn " ]
ok $? "dpkg: scalemon not installed"
in_root 'getent group scalemon >/dev/null'; ok $? "the user and group scalemon stay, as Debian leaves system users"
diag "the packages built, checked, installed, used, removed and purged in $(( $(date +%s) - T_START )) s"
finish
