#!/bin/sh
# install-deps.sh - install what scalemon builds and tests with, from
# Debian's packages (Debian 12).  Runs apt-get only for what is missing.
set -eu
pkgs="build-essential autoconf automake pkg-config
      libsystemd-dev libsqlite3-dev libjansson-dev libgsl-dev libsmartcols-dev libncurses-dev libmicrohttpd-dev
      sqlite3 python3 linux-perf util-linux procps
      gnuplot-nox libxml2-utils socat systemd tmux
      clang libclang-rt-14-dev bpftool libbpf-dev
      prometheus curl stress-ng fio
      dpkg-dev debhelper lintian debootstrap zsh bash-completion"
missing=
for p in $pkgs; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
        echo "install-deps.sh: missing packages:$missing; run as root (or with sudo) to install them" >&2
        exit 1
fi
echo "install-deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
