#!/bin/bash
# readme.sh - README.md's "Using it" calls scalemond and scalemonctl by
# name (issue 17, item 13): it must say where the quick start put them, and
# that place must be where tools/demo.sh builds and hold both programs
# after a build; and it must say what tools/test.sh costs (time, root, a
# CPU taken offline, not beside measurements).  No root, no daemon.
. "${srcdir:-.}/tests/lib.sh"
R=$srcdir/README.md
[ -f "$R" ] || skip_all "no README.md in $srcdir"

using=$(awk '/^## Using it/ { on = 1; next } /^## / { on = 0 } on' "$R")
[ -n "$using" ]; ok $? "README has a 'Using it' section"
first_call=$(echo "$using" | grep -n '^scalemond \|^scalemonctl ' | head -1 | cut -d: -f1)
path_line=$(echo "$using" | grep -n 'export PATH=' | head -1 | cut -d: -f1)
[ -n "$path_line" ] && [ -n "$first_call" ] && [ "$path_line" -lt "$first_call" ]
ok $? "it puts a directory on PATH (line ${path_line:-none}) before the first call by name (line ${first_call:-none})"
dir=$(echo "$using" | sed -n 's/^export PATH=\$PWD\/\([^:]*\):\$PATH$/\1/p' | head -1)
demo_dir=$(sed -n 's/^B=\$top\/\([^ ]*\)$/\1/p' "$srcdir/tools/demo.sh" | head -1)
[ -n "$dir" ] && [ "$dir" = "$demo_dir" ]; ok $? "that directory ($dir) is where tools/demo.sh builds ($demo_dir)"
echo "$using" | grep -q "\./$dir/scalemond" && echo "$using" | grep -q "\./$dir/scalemonctl"
ok $? "and the text names ./$dir/scalemond and ./$dir/scalemonctl"
# in this tree the build directory is top_builddir: both programs are there
[ -x "$top_builddir/scalemond" ] && [ -x "$top_builddir/scalemonctl" ]; ok $? "a build puts both programs there"

cost=$(awk '/tools\/test.sh` takes/ { on = 1 } on && /^$/ { exit } on' "$R" | tr '\n' ' ')
echo "$cost" | grep -q "twenty minutes"; ok $? "README says how long the tests take"
echo "$cost" | grep -q "needs root"; ok $? "that they need root"
echo "$cost" | grep -q "CPU offline"; ok $? "that they take a CPU offline"
echo "$cost" | grep -q "measurements"; ok $? "and not to share the machine with measurements"
finish
