#!/bin/bash
# Runs a command and then prints how busy the whole machine was while it ran: busy and idle
# core-seconds from /proc/stat before and after (user, system and idle jiffies of every CPU).
# A sandboxed bot's CPU reaches the command's own rusage (`/usr/bin/time`) only in part: this is
# how BENCHMARKS.md tells the farm's cost from idle cores. The line goes to standard error,
# after everything the command printed; exits with the command's status.
#
#   tools/machine-busy.sh /usr/bin/time -v farm run --formal --output out 2> out.time
set -u
read -r _ u n s i w q sq st _ < /proc/stat
t0=$(date +%s.%N)
"$@"
rc=$?
read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
t1=$(date +%s.%N)
python3 - "$(getconf CLK_TCK)" "$t0" "$t1" "$u $n $s $i $w $q $sq $st" "$u2 $n2 $s2 $i2 $w2 $q2 $sq2 $st2" <<'PY' >&2
import sys
hz = int(sys.argv[1])
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
a = [int(x) for x in sys.argv[4].split()]
b = [int(x) for x in sys.argv[5].split()]
d = [y - x for x, y in zip(a, b)]
user, nice, system, idle, iowait, irq, softirq, steal = d
busy = (user + nice + system + irq + softirq + steal) / hz
print(f"machine: wall {t1 - t0:.1f} s, busy {busy:.1f} core-s (user {(user + nice) / hz:.1f}, "
      f"system {(system + irq + softirq) / hz:.1f}), idle {(idle + iowait) / hz:.1f} core-s")
PY
exit $rc
