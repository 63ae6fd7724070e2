#!/bin/sh
# Records expected/<gamefolder>/ (logs, observer stream, score.json) with the official proboj
# runner (Go, trojsten/ksp-proboj runner/ v23.1004), built by hand from its source at that tag
# (`go build ./runner`; offline, github.com/charmbracelet/log may be replaced by a stand-in
# module with the same calls, since it only prints the runner's own console messages):
# ./record.sh /path/to/runner. Runs in a copy of this folder; the environment is the one the
# conformance test gives farm (less its FARM_* probe). games_writers.json is farm's alone (the
# official runner runs players in place, so there the two writers and the two games share one
# state file): it is not recorded.
set -e
runner=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cp -a "$here"/. "$work"/
cd "$work"
rm -rf expected hra hra2 hra3 hra4
mkdir bin
ln -s /usr/bin/python3 bin/python
env -i PATH="$work/bin:/usr/local/bin:/usr/bin:/bin:/opt/probe" LANG=C.UTF-8 "$runner" config.json games.json
# The official runner sometimes adds `error while reading stderr: read |0: file already
# closed` to a log (a race in its stderr copy; always for a player that could not start); that
# line is not kept. The start folder is written `{start}` (a player's program path). Its stderr copy may
# also lag behind its own `[proboj] ` lines (a line the player wrote before its answer then
# comes after it); the expected logs keep the order the player wrote in (hra3/closer.txt).
for g in hra hra2 hra3 hra4; do
    mkdir -p "$here/expected/$g"
    for f in $g/logs/*.gz; do
        n=$(basename "$f" .gz)
        gzip -cd "$f" | grep -vx '\[proboj\] error while reading stderr: read |0: file already closed' | sed "s|$work|{start}|g" > "$here/expected/$g/$n.txt" || true
    done
    gzip -cd $g/observer.gz > "$here/expected/$g/observer"
    cp $g/score.json "$here/expected/$g/score.json"
done
rm -rf "$work"
