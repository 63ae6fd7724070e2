#!/usr/bin/env bash
# Issue 25 §4 benchmark: how long a SIGKILLed worker's match waits before it is published again.
# A 48-match cluster run (two bots sleeping 25 ms a turn, matches of several seconds) on two
# 1-slot workers; the victim is killed once it has listed a job for 3 s; prints the seconds from
# the kill to the coordinator's republish line and the results logged by then.
# Usage: tools/bench-lost-worker.sh [farm binary] (needs RabbitMQ and Redis on localhost).
set -euo pipefail
FARM=${1:-target/debug/farm}
DB=${FARM_BENCH_DB:-9}
W=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
export FARM_KEY=bench-lost-worker-key-0123456789 FARM_TURN_MS=1000
B=amqp://guest:guest@127.0.0.1:5672/%2f R=redis://127.0.0.1:6379/$DB
redis-cli -n "$DB" flushdb >/dev/null
sed 's/argc > 1 ? std::atoi(argv\[1\]) : 500/25/' bots/test/slow.cpp > "$W/slow25.cpp"
for id in steady victim; do
  "$FARM" worker --broker $B --redis $R --slots 1 --id bench-$id --scratch "$W/s-$id" >"$W/$id.log" 2>&1 &
  echo $! > "$W/$id.pid"
done
"$FARM" run --bots "S1=$W/slow25.cpp" "S2=$W/slow25.cpp" --anchor S1 --sizes 2 --seeds 24 --seed 7 \
  --workers 2 --broker $B --redis $R --output "$W/out" >/dev/null 2>"$W/coord.err" &
COORD=$!
held="" since=0
while :; do
  now=$(redis-cli -n "$DB" get farm:worker:bench-victim | python3 -c 'import sys,json; t=sys.stdin.read().strip(); c=json.loads(t)["current"] if t else []; print(c[0] if c else "")')
  if [ -n "$now" ] && [ "$now" = "$held" ]; then
    [ $(( $(date +%s%N) - since )) -ge 3000000000 ] && break
  else held=$now since=$(date +%s%N); fi
  sleep 0.1
done
kill -9 "$(cat "$W/victim.pid")"; killed=$(date +%s%N)
rows() { cat "$W/out/results.jsonl" 2>/dev/null | wc -l; }
echo "killed the victim holding ${held##*#} with $(rows)/48 results logged"
until grep -q "published again\|publishing it again" "$W/coord.err"; do sleep 0.1; done
echo "republished after $(( ($(date +%s%N) - killed) / 1000000 )) ms with $(rows)/48 results logged: $(grep -m1 'publishing it again' "$W/coord.err" | sed 's/.*WARN //')"
wait $COORD; echo "run exit $? with $(rows)/48 results"
