#!/bin/bash
# readme.sh - the facts README.md states, and where its guide moved:
# README.md is short (<= 200 lines) and its quick start puts on PATH the
# directory tools/demo.sh builds into, before any call by name; it says
# what tools/test.sh costs; its "first ten commands" are ten, each a verb
# scalemonctl has; and every file the README, doc/GUIDE.md,
# doc/PERFORMANCE.md and HACKING.md name as a test, bench, tool or doc
# (the claims' evidence) and every image they show exists.  No root, no
# daemon.
. "${srcdir:-.}/tests/lib.sh"
R=$srcdir/README.md
[ -f "$R" ] || skip_all "no README.md in $srcdir"

lines=$(wc -l <"$R")
[ "$lines" -le 200 ]; ok $? "README.md is $lines lines (at most 200)"

section() {     # section FILE HEADING: the lines under '## HEADING', to the next '## '
        awk -v h="## $2" '$0 == h { on = 1; next } /^## / { on = 0 } on' "$1"
}
quick=$(section "$R" "Quick start")
[ -n "$quick" ]; ok $? "README has a 'Quick start' section"
first_call=$(echo "$quick" | grep -n '^scalemond \|^scalemonctl ' | head -1 | cut -d: -f1)
path_line=$(echo "$quick" | grep -n '^export PATH=' | head -1 | cut -d: -f1)
[ -n "$path_line" ] && { [ -z "$first_call" ] || [ "$path_line" -lt "$first_call" ]; }
ok $? "it puts a directory on PATH (line ${path_line:-none}) before any call by name (line ${first_call:-none})"
dir=$(echo "$quick" | sed -n 's/^export PATH=\$PWD\/\([^:]*\):\$PATH\( .*\)\{0,1\}$/\1/p' | head -1)
demo_dir=$(sed -n 's/^B=\$top\/\([^ ]*\)$/\1/p' "$srcdir/tools/demo.sh" | head -1)
[ -n "$dir" ] && [ "$dir" = "$demo_dir" ]; ok $? "that directory ($dir) is where tools/demo.sh builds ($demo_dir)"
echo "$quick" | grep -q "\./$dir/scalemond" && echo "$quick" | grep -q "\./$dir/scalemonctl"
ok $? "and the text names ./$dir/scalemond and ./$dir/scalemonctl"
# in this tree the build directory is top_builddir: both programs are there
[ -x "$top_builddir/scalemond" ] && [ -x "$top_builddir/scalemonctl" ]; ok $? "a build puts both programs there"
db=$(echo "$quick" | sed -n 's/^export .*SCALEMON_DB=\$PWD\/\([^ ]*\).*/\1/p' | head -1)
grep -q "SCALEMON_DB=\$top/$db " "$srcdir/tools/demo.sh"; ok $? "the database it names ($db) is the demo's"

cost=$(awk '/tools\/test.sh` runs every test/ { on = 1 } on && /^$/ { exit } on' "$R" | tr '\n' ' ')
mins=$(echo "$cost" | grep -oE 'about [0-9]+ minutes' | grep -oE '[0-9]+')
[ -n "$mins" ]; ok $? "README says how long the tests take (${mins:-no figure} minutes)"
echo "$cost" | grep -q "HACKING.md"; ok $? "and where the time per suite is"
echo "$cost" | grep -q "needs root"; ok $? "that they need root"
echo "$cost" | grep -q "CPU offline"; ok $? "that they take a CPU offline"
echo "$cost" | grep -q "measurements"; ok $? "and not to share the machine with measurements"

# The package path: dpkg-buildpackage in this tree makes the packages the
# README installs, under the names it gives.
ver=$(sed -n '1s/^scalemon (\([^)]*\)).*/\1/p' "$srcdir/debian/changelog")
acver=$(sed -n 's/^AC_INIT(\[scalemon\], \[\([^]]*\)\].*/\1/p' "$srcdir/configure.ac")
echo "$quick" | grep -q '^tools/install-deps.sh && dpkg-buildpackage -us -uc -b' &&
        echo "$quick" | grep -qF "../scalemon_${ver}_" && echo "$quick" | grep -qF "../scalemon-exporter_${ver}_" &&
        echo "$quick" | grep -q '^apt-get install \.\./scalemon_\*\.deb'
ok $? "the quick start builds the Debian packages and installs scalemon_${ver} (debian/changelog)"
[ "$ver" = "$acver" ]; ok $? "debian/changelog's version is configure.ac's ($ver, $acver)"
[ "$(sed -n 's/^Package: //p' "$srcdir/debian/control" | tr '\n' ' ')" = "scalemon scalemon-exporter " ]
ok $? "debian/control makes the two packages it names"
grep -q '^tools/install-deps.sh' <<<"$quick" && grep -q 'dpkg-dev' "$srcdir/tools/install-deps.sh" &&
        grep -q 'debhelper' "$srcdir/tools/install-deps.sh"
ok $? "tools/install-deps.sh installs dpkg-dev and debhelper"

# The first ten commands: ten numbered items, each naming `scalemonctl VERB`
# for a verb that scalemonctl --help lists.
ten=$(section "$R" "The first ten commands")
items=$(echo "$ten" | grep -c '^\*\*[0-9]*\. ')
[ "$items" = 10 ]; ok $? "'The first ten commands' has $items items"
verbs=$("$top_builddir/scalemonctl" --help | awk '/^Verbs:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' | sort -u)
bad=
while read -r v; do
        echo "$verbs" | grep -qx "$v" || bad="$bad $v"
done < <(echo "$ten" | grep -o '`scalemonctl [a-z]*' | sed 's/`scalemonctl //' | sort -u)
[ -z "$bad" ]; ok $? "every verb they show is one scalemonctl --help lists${bad:+ (not:$bad)}"

# Where the guide went: each document exists, and everything it names as
# evidence (a test, a bench, a tool, a fixture, another document) exists.
for f in doc/GUIDE.md doc/PERFORMANCE.md HACKING.md doc/DESIGN.md; do
        grep -q "$f" "$R" && [ -f "$srcdir/$f" ]; ok $? "README points to $f, which exists"
done
for f in README.md doc/GUIDE.md doc/PERFORMANCE.md HACKING.md; do
        missing=
        for p in $(grep -o '\(tests\|bench\|tools\|doc\|man\)/[A-Za-z0-9_./*-]*[A-Za-z0-9*]' "$srcdir/$f" | sort -u); do
                # a glob names a family: at least one file of it
                compgen -G "$srcdir/$p" >/dev/null || compgen -G "$srcdir/$p.*" >/dev/null || missing="$missing $p"
        done
        [ -z "$missing" ]; ok $? "every file $f names exists${missing:+ (not:$missing)}"
        missing=
        for p in $(grep -o '](\([^)]*\.png\))' "$srcdir/$f" | sed 's/^](\(.*\))$/\1/'); do
                [ -f "$(dirname "$srcdir/$f")/$p" ] || missing="$missing $p"
        done
        [ -z "$missing" ]; ok $? "every image $f shows exists${missing:+ (not:$missing)}"
done
finish
