#!/bin/sh
# Records expected/<gamefolder>/ (logs, observer stream, score.json) with the official proboj runner (Go, trojsten/ksp-proboj runner/ v23.1004),
# built by hand: ./record.sh /path/to/runner. Runs in a copy of this folder; the environment
# is the one the conformance test gives farm (less its FARM_* probe).
set -e
runner=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cp -a "$here"/. "$work"/
cd "$work"
rm -rf expected hra hra2
mkdir bin
ln -s /usr/bin/python3 bin/python
env -i PATH="$work/bin:/usr/local/bin:/usr/bin:/bin:/opt/probe" LANG=C.UTF-8 "$runner" config.json games.json
# The official runner sometimes adds `error while reading stderr: read |0: file already
# closed` to a log (a race in its stderr copy); that line is not kept.
for g in hra hra2; do
    mkdir -p "$here/expected/$g"
    for f in $g/logs/*.gz; do
        n=$(basename "$f" .gz)
        gzip -cd "$f" | grep -vx '\[proboj\] error while reading stderr: read |0: file already closed' > "$here/expected/$g/$n.txt" || true
    done
    gzip -cd $g/observer.gz > "$here/expected/$g/observer"
    cp $g/score.json "$here/expected/$g/score.json"
done
rm -rf "$work"
