# systemd-harness.sh - boot a real systemd as PID 1 in private namespaces,
# on a throw-away overlay of this machine's root file system, so that tests
# can `make install` scalemon into it and drive scalemon.service with
# systemctl.  Source it after tests/lib.sh; then:
#
#   sd_need                 skip (exit 77, with the reason) unless this can work here
#   sd_boot                 boot; returns once `systemctl is-system-running`
#                           says running or degraded, or bails out
#   sd CMD [ARG...]         run CMD inside the container (all namespaces and
#                           its root); stdin, stdout, stderr and status pass
#   sd_install              `make install` of this build tree inside, then
#                           `systemctl daemon-reload` (sanitizer builds: see there)
#   sd_installed_files      the files that `make install` put under /usr
#   sd_poll SECONDS CMD...  until CMD succeeds, at most SECONDS
#   sd_host_pids            host PIDs of the processes in the container's cgroup
#   sd_teardown             power systemd off, kill what is left, remove the
#                           cgroup; runs from the EXIT trap in any case
#
# How: the launcher moves itself into a fresh cgroup2 directory (so that
# the cgroup namespace is rooted there), then setsid + unshare --pid --mount
# --uts --ipc --net --cgroup.  The new PID 1 (this file, run with __init)
# mounts a tmpfs-backed overlay with / as its lower layer, the API file
# systems (proc, read-only sysfs and /proc/sys, cgroup2, tracefs, a small
# /dev, tmpfs /run and /tmp), the source and build trees (each as an
# overlay of its own, so that make writes nothing to them), moves the
# overlay onto / and execs systemd with container=... set.  Everything the
# container writes is in the tmpfs upper layer and goes away with it; the
# mounts live only in its mount namespace.  unshare runs with
# --kill-child and a parent-death signal, so even a test killed with
# SIGKILL takes the container down with it; a cgroup directory left behind
# by such a test is removed by the next sd_boot.
#
# SD_ROOT (default /) is the root file system the overlay covers: another
# one (a debootstrap'd Debian, tests/systemd/systemd-package.sh) boots its
# own systemd.  SD_MORE_TREES (DIR[:DIR...]) are mounted inside like the
# source and build trees.
#
# Needs root, util-linux (unshare, nsenter, setpriv), overlayfs, a cgroup2
# hierarchy (/sys/fs/cgroup or /sys/fs/cgroup/unified) and systemd.

SD_CG_PREFIX=scalemon-test.
SD_TARGET=basic.target          # boot no further: nothing of multi-user's
# Units of the host image that must not run in a test container: they
# would touch the host's kernel (modules, binfmt), wait for hardware, or
# just take time.
SD_MASK="timers.target systemd-firstboot.service systemd-pstore.service systemd-timesyncd.service
        systemd-modules-load.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount
        systemd-networkd.service systemd-resolved.service systemd-journal-flush.service
        systemd-hwdb-update.service systemd-update-done.service ldconfig.service
        getty.target console-getty.service postgresql.service"
SD_STATE=
SD_CGROUP=
SD_UNSHARE_PID=
SD_PID1=
SD_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SD_HARNESS=$(readlink -f "${BASH_SOURCE[0]}")
SD_ROOT=${SD_ROOT:-/}
SD_MORE_TREES=${SD_MORE_TREES:-}

sd_cgroup2_root() {
        local d
        for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
                [ "$(stat -fc %T "$d" 2>/dev/null)" = cgroup2fs ] && { echo "$d"; return 0; }
        done
        return 1
}

sd_need() {
        local c
        [ "$(id -u)" = 0 ] || skip_all "booting systemd in namespaces needs root"
        [ "$SD_ROOT" != / ] || [ -x /lib/systemd/systemd ] || skip_all "no systemd here (/lib/systemd/systemd)"
        for c in unshare nsenter setpriv setsid; do
                command -v "$c" >/dev/null || skip_all "no $c (util-linux) here"
        done
        sd_cgroup2_root >/dev/null || skip_all "no cgroup2 hierarchy mounted (at /sys/fs/cgroup or /sys/fs/cgroup/unified)"
        grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null
        grep -qw overlay /proc/filesystems || skip_all "no overlayfs in this kernel"
        unshare --mount --pid --fork true 2>/dev/null || skip_all "cannot create mount and pid namespaces here"
}

# Remove cgroup directories of earlier containers whose test was killed
# before it could tear down (their processes are gone with it).
sd_reap_stale() {
        local root=$1 d pid
        for d in "$root/$SD_CG_PREFIX"*; do
                [ -d "$d" ] || continue
                pid=${d##*.}
                [ -d "/proc/$pid" ] && continue
                find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
        done
}

# The container's PID 1 as seen from here: the one child of unshare.
sd_find_pid1() {
        local p
        [ -n "$SD_UNSHARE_PID" ] && [ -d "/proc/$SD_UNSHARE_PID" ] || return 0
        for p in $(cat "/proc/$SD_UNSHARE_PID/task/$SD_UNSHARE_PID/children" 2>/dev/null); do
                echo "$p"
                return 0
        done
}

sd() {
        [ -n "$SD_PID1" ] || { echo "sd: the container is not running" >&2; return 125; }
        nsenter --target "$SD_PID1" --mount --uts --ipc --net --pid --cgroup --root --wd -- \
                /usr/bin/env -i PATH="$SD_PATH" HOME=/root LANG=C.UTF-8 TERM=dumb SYSTEMD_PAGER= SYSTEMD_COLORS=0 \
                ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} "$@"
}

sd_boot() {
        local cg2 t0 p state= i
        cg2=$(sd_cgroup2_root) || bail "no cgroup2 hierarchy"
        sd_reap_stale "$cg2"
        SD_STATE=$TMP/systemd
        mkdir -p "$SD_STATE/root" "$SD_STATE/ovl"
        SD_CGROUP=$cg2/$SD_CG_PREFIX$$
        mkdir "$SD_CGROUP" || bail "cannot create cgroup $SD_CGROUP"
        t0=$(date +%s%N)
        # The launcher enters the new cgroup first, so that the cgroup
        # namespace is rooted there; the container dies with this shell.
        SD_TREES="$(readlink -f "$srcdir"):$(readlink -f "$top_builddir")${SD_MORE_TREES:+:$SD_MORE_TREES}" \
        SD_ROOT="$SD_ROOT" SD_MASK="$SD_MASK" SD_TARGET="$SD_TARGET" \
        setsid bash -c 'echo $$ > "$1/cgroup.procs" && exec setpriv --pdeathsig KILL -- \
                unshare --fork --kill-child=KILL --pid --mount --uts --ipc --net --cgroup --propagation private -- \
                bash "$2" __init "$3"' _ "$SD_CGROUP" "$SD_HARNESS" "$SD_STATE" \
                </dev/null >"$SD_STATE/console.log" 2>&1 &
        SD_UNSHARE_PID=$!
        for i in $(seq 600); do        # 30 s
                p=$(sd_find_pid1)
                if [ -z "$p" ] && ! [ -d "/proc/$SD_UNSHARE_PID" ]; then
                        sed 's/^/# console: /' "$SD_STATE/console.log"
                        bail "the container died while booting"
                fi
                if [ -n "$p" ] && [ -S "/proc/$p/root/run/systemd/private" ]; then
                        SD_PID1=$p
                        state=$(sd systemctl is-system-running 2>/dev/null)
                        case $state in
                        running|degraded) break ;;
                        maintenance|stopping|offline)
                                sd journalctl -b --no-pager | tail -n 30 | sed 's/^/# journal: /'
                                bail "systemd did not boot (state $state)" ;;
                        esac
                fi
                sleep 0.05
        done
        case $state in
        running|degraded) ;;
        *)      [ -n "$SD_PID1" ] && sd systemctl list-jobs --no-pager | sed 's/^/# jobs: /'
                bail "systemd did not boot in 30 s (state ${state:-none})" ;;
        esac
        diag "systemd booted as host PID $SD_PID1 in $(( ($(date +%s%N) - t0) / 1000000 )) ms, $state"
        [ "$state" = running ] || sd systemctl --failed --no-legend --no-pager | sed 's/^/# failed: /'
}

# sd_poll SECONDS CMD [ARG...]: run CMD every 0.1 s until it succeeds;
# fails if it has not within SECONDS.
sd_poll() {
        local n=$(($1 * 10)) i; shift
        for i in $(seq "$n"); do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        return 1
}

# Is this build tree built with the sanitizers?
sd_asan_build() { grep -q '^SAN_CFLAGS = .*-fsanitize=address' "$top_builddir/Makefile" 2>/dev/null; }

# `make install` of this build tree inside the container, then a
# daemon-reload.  /run/scalemon-test.stamp is older than every file it
# installed (see sd_installed_files).
sd_install() {
        sd touch /run/scalemon-test.stamp
        sleep 0.01
        if ! sd make -C "$top_builddir" install >"$TMP/install.log" 2>&1; then
                tail -n 30 "$TMP/install.log" | sed 's/^/# install: /'
                bail "make install failed inside the container"
        fi
        # LeakSanitizer stops the process's threads with ptrace(2) at
        # exit, which the unit's SystemCallFilter= refuses: allow it for
        # sanitizer builds only, so that their leak check still runs.
        if sd_asan_build; then
                diag "sanitizer build: allowing ptrace(2) for LeakSanitizer in a drop-in"
                for u in scalemon.service scalemon-exporter.service; do
                        sd mkdir -p "/etc/systemd/system/$u.d"
                        printf '[Service]\nSystemCallFilter=ptrace\n' |
                                sd sh -c "cat > /etc/systemd/system/$u.d/50-sanitizers.conf"
                done
        fi
        sd systemctl daemon-reload || bail "systemctl daemon-reload failed"
}

# The files `make install` put under /usr (and so /lib): newer than the stamp.
sd_installed_files() {
        sd find /usr -xdev -newer /run/scalemon-test.stamp \( -type f -o -type l \) | sort
}

# Host PIDs of every process in the container's cgroup tree.
sd_host_pids() {
        [ -n "$SD_CGROUP" ] && [ -d "$SD_CGROUP" ] || return 0
        find "$SD_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null
}

sd_teardown() {
        local i
        [ -n "$SD_STATE" ] || return 0
        [ -n "$SD_PID1" ] || SD_PID1=$(sd_find_pid1)
        if [ -n "$SD_PID1" ] && [ -d "/proc/$SD_PID1" ]; then
                kill -s RTMIN+4 "$SD_PID1" 2>/dev/null      # poweroff: systemd stops every unit, then exits
                for i in $(seq 300); do [ -d "/proc/$SD_PID1" ] || break; sleep 0.05; done
                if [ -d "/proc/$SD_PID1" ]; then             # SIGKILL on PID 1 ends the whole pid namespace
                        diag "systemd did not power off in 15 s; killing it"
                        kill -KILL "$SD_PID1" 2>/dev/null
                fi
        fi
        if [ -n "$SD_UNSHARE_PID" ]; then
                for i in $(seq 100); do [ -d "/proc/$SD_UNSHARE_PID" ] || break; sleep 0.05; done
                kill -KILL "$SD_UNSHARE_PID" 2>/dev/null
                wait "$SD_UNSHARE_PID" 2>/dev/null
        fi
        if [ -n "$SD_CGROUP" ] && [ -d "$SD_CGROUP" ]; then
                for i in $(seq 100); do
                        find "$SD_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
                        [ -d "$SD_CGROUP" ] || break
                        sleep 0.05
                done
                [ -d "$SD_CGROUP" ] && diag "could not remove cgroup $SD_CGROUP"
        fi
        SD_STATE= SD_PID1= SD_UNSHARE_PID= SD_CGROUP=
}

# Chain the teardown in front of lib.sh's cleanup, which `finish`,
# `skip_all`, `bail` and the EXIT trap all call; a signal exits through
# the EXIT trap too.
if declare -F cleanup >/dev/null && ! declare -F sd_lib_cleanup >/dev/null; then
        eval "sd_lib_cleanup() $(declare -f cleanup | tail -n +2)"
        cleanup() { sd_teardown; sd_lib_cleanup; }
        trap 'exit 130' INT
        trap 'exit 143' TERM HUP
fi

# ---- PID 1 of the new pid namespace, in the new mount namespace ----
sd_init() {
        local S=$1 R=$1/root O=$1/ovl u d
        mount -t tmpfs -o mode=0755 scalemon-ovl "$O" || exit 1
        mkdir "$O/upper" "$O/work"
        mount -t overlay scalemon-root -o "lowerdir=${SD_ROOT:-/},upperdir=$O/upper,workdir=$O/work" "$R" || exit 1
        # Never boot on the real root: the boot's tmpfiles would clean the host's /tmp.
        [ "$(stat -fc %T "$R")" = overlayfs ] || { echo "overlay not mounted on $R" >&2; exit 1; }

        # Configuration, written to the discarded upper layer.
        mkdir -p "$R/etc/systemd/system" "$R/etc/tmpfiles.d"
        ln -sfn "/lib/systemd/system/$SD_TARGET" "$R/etc/systemd/system/default.target"
        for u in $SD_MASK; do ln -sfn /dev/null "$R/etc/systemd/system/$u"; done
        echo 'd /tmp 1777 root root -' > "$R/etc/tmpfiles.d/tmp.conf"
        echo scalemon-test > "$R/etc/hostname"
        hostname scalemon-test

        # API file systems, much as systemd-nspawn sets them up.
        mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
        mount --bind "$R/proc/sys" "$R/proc/sys"       # the host's kernel settings stay as they are
        mount -o remount,bind,ro "$R/proc/sys"
        mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
        mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$R/sys/fs/cgroup"
        [ -d "$R/sys/kernel/tracing" ] && mount -t tracefs -o nosuid,nodev,noexec tracefs "$R/sys/kernel/tracing"
        mount -t tmpfs -o mode=0755,nosuid,size=8m scalemon-dev "$R/dev"
        mknod -m 666 "$R/dev/null" c 1 3
        mknod -m 666 "$R/dev/zero" c 1 5
        mknod -m 666 "$R/dev/full" c 1 7
        mknod -m 666 "$R/dev/random" c 1 8
        mknod -m 666 "$R/dev/urandom" c 1 9
        mknod -m 666 "$R/dev/tty" c 5 0
        mkdir -m 0755 "$R/dev/pts"
        mkdir -m 1777 "$R/dev/shm"
        mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5,nosuid,noexec devpts "$R/dev/pts"
        ln -s pts/ptmx "$R/dev/ptmx"
        mount -t tmpfs -o mode=1777,nosuid,nodev scalemon-shm "$R/dev/shm"
        ln -s /proc/self/fd "$R/dev/fd"
        ln -s /proc/self/fd/0 "$R/dev/stdin"
        ln -s /proc/self/fd/1 "$R/dev/stdout"
        ln -s /proc/self/fd/2 "$R/dev/stderr"
        mount -t tmpfs -o mode=0755,nosuid,nodev scalemon-run "$R/run"
        mount -t tmpfs -o mode=1777,nosuid,nodev scalemon-tmp "$R/tmp"

        # The source and build trees, where the tests `make install` from:
        # copy-on-write, so that whatever make writes there (a rebuild of
        # something edited meanwhile) stays in the container.
        local IFS=: n=0
        for d in $SD_TREES; do
                [ -n "$d" ] && [ -d "$d" ] || continue
                n=$((n + 1))
                mkdir -p "$O/tree$n/upper" "$O/tree$n/work" "$R$d"
                mount -t overlay scalemon-tree -o "lowerdir=$d,upperdir=$O/tree$n/upper,workdir=$O/tree$n/work" "$R$d" ||
                        exit 1
        done
        unset IFS

        cd "$R" || exit 1
        mount --move . /
        exec chroot . /usr/bin/env -i container=scalemon-test TERM=dumb /lib/systemd/systemd
}

if [ "${1:-}" = __init ] && [ "${BASH_SOURCE[0]}" = "$0" ]; then
        sd_init "$2"
fi
