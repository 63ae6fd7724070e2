#!/usr/bin/env python3
"""Where a run waits: off-CPU time from a system-wide scheduler trace (issue 26).

Two tables from `perf sched record -a -g` of a command:

- blocked: the farm's own threads (command names starting with `farm` or `tokio`), the time
  each spent off its CPU while not runnable, summed by the stack it switched out with (kernel
  frames, then the farm's own); the total, the count and the mean per wait;
- idle: every stretch a CPU spent idle, summed by the task that switched out into it (its
  command, the state it left in, its stack): what a core was left waiting on.

    perf sched record -a -g -o sched.data -- farm run --formal --output /tmp/out
    perf script -i sched.data -F comm,tid,cpu,time,event,trace,ip,sym | tools/offcpu.py

Reads the `perf script` text on stdin; `--top N` rows per table (20), `--frames N` stack
frames shown (12).
"""

import argparse
import collections
import re
import sys

HEADER = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
SWITCH = re.compile(
    r"prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
NOISE = {"__schedule", "schedule", "__traceiter_sched_switch", "[unknown]"}
SHORT = {"entry_SYSCALL_64_after_hwframe": "E", "do_syscall_64": None}


def is_farm(comm):
    return comm.startswith(("farm", "tokio"))


def events(lines):
    """(cpu, time, switch fields, stack) of every sched_switch with its callchain."""
    cur, stack = None, []
    for line in lines:
        if not line.strip():
            continue
        m = HEADER.match(line)
        if m:
            if cur:
                yield (*cur, stack)
            cur, stack = None, []
            _comm, _tid, cpu, t, ev, trace = m.groups()
            s = SWITCH.search(trace) if ev == "sched:sched_switch" else None
            if s:
                cur = (int(cpu), float(t), s.groups())
            continue
        if cur:
            parts = line.split()
            if len(parts) >= 2:
                stack.append(parts[1].split("+")[0])
    if cur:
        yield (*cur, stack)


def short(stack, frames):
    out = []
    for f in stack:
        if f in NOISE:
            continue
        f = SHORT.get(f, f)
        if f:
            out.append(f)
    return " < ".join(out[:frames])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--frames", type=int, default=12)
    a = ap.parse_args()
    blocked, blocked_n = collections.Counter(), collections.Counter()
    idle, idle_n = collections.Counter(), collections.Counter()
    out_since, idle_since = {}, {}
    total_idle = 0.0
    for cpu, t, (prev, ppid, state, _nxt, npid), stack in events(sys.stdin):
        if is_farm(prev) and not state.startswith("R"):
            out_since[ppid] = (t, (state, short(stack, a.frames)))
        if npid in out_since:
            t0, key = out_since.pop(npid)
            blocked[key] += t - t0
            blocked_n[key] += 1
        if npid == "0":
            who = "farm" if is_farm(prev) else prev.split("/")[0]
            idle_since[cpu] = (t, (who, state, short(stack, 5)))
        elif ppid == "0" and cpu in idle_since:
            t0, key = idle_since.pop(cpu)
            idle[key] += t - t0
            idle_n[key] += 1
            total_idle += t - t0
    print("the farm's threads, off their CPU and not runnable, by stack:")
    print(f"{'total s':>9} {'waits':>7} {'mean us':>9}  state stack")
    for (state, st), v in blocked.most_common(a.top):
        n = blocked_n[(state, st)]
        print(f"{v:9.3f} {n:7d} {v / n * 1e6:9.0f}  {state:<5} {st}")
    print(f"\nidle CPU time: {total_idle:.2f} core-s, by the task that left the CPU idle:")
    print(f"{'total s':>9} {'times':>7}  task state stack")
    for (who, state, st), v in idle.most_common(a.top):
        print(f"{v:9.3f} {idle_n[(who, state, st)]:7d}  {who[:16]:<16} {state:<3} {st}")


if __name__ == "__main__":
    main()
