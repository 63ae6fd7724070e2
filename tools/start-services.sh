#!/usr/bin/env bash
# Start RabbitMQ (127.0.0.1:5672), Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432, for
# the ladder tests) if they are not answering, and wait until all do. Idempotent; used by .ci/run and by developers before the cluster tests.
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! port_open 6379; then
  echo "starting redis-server" >&2
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
fi
if ! port_open 5672; then
  echo "starting rabbitmq-server" >&2
  rabbitmq-server -detached >/dev/null 2>&1 || true
fi
if ! port_open 5432; then
  echo "starting postgresql" >&2
  if command -v pg_ctlcluster >/dev/null && [ -n "$(pg_lsclusters -h 2>/dev/null)" ]; then
    read -r ver name _ < <(pg_lsclusters -h | head -n1)
    pg_ctlcluster "$ver" "$name" start || true
  else
    service postgresql start >/dev/null 2>&1 || true
  fi
fi
for _ in $(seq 1 120); do
  if port_open 6379 && port_open 5672 && port_open 5432; then exit 0; fi
  sleep 1
done
echo "RabbitMQ, Redis or PostgreSQL did not come up within 120 s" >&2
exit 1
