#!/usr/bin/env python3
"""bench/exec_timeline.py TRACE: one exec slot's timeline per job, from
`strace -f -tt -o TRACE emqd --config FILE` (all system calls) over a small
run of an exec queue. Prints the median of each step between a job's start
and the next job's, in µs, and the system calls per job of the slot threads
by name. strace stops the process at every call, so the absolute times are
inflated several times over; compare two traces taken the same way, and
trust the call counts, which do not depend on the machine's load.

The same counts for the raw loop: strace -f -o T emq_bench_spawn_loop ...
"""
import collections
import re
import statistics
import sys


def ts(s):
    h, m, r = s.split(":")
    return (int(h) * 3600 + int(m) * 60 + float(r)) * 1e6


def main(path):
    ev = collections.defaultdict(list)
    for line in open(path):
        m = re.match(r"(\d+) +(\S+) (.*)", line)
        if m:
            ev[m.group(1)].append((ts(m.group(2)), m.group(3)))
    # A slot thread is one that spawns: posix_spawn is clone3(CLONE_VM|CLONE_VFORK).
    slots = [t for t, e in ev.items() if sum("CLONE_VFORK" in s for _, s in e) > 10]
    names = ["job start (pipe2) -> posix_spawn called", "posix_spawn -> returned", "spawned -> stdin written",
             "stdin written -> exit seen", "exit seen -> reaped", "reaped -> outcome delivered",
             "delivered -> next job start"]
    keys = ["start", "spawn", "spawned", "stdin", "exit", "reaped", "delivered", "next"]
    steps = collections.defaultdict(list)
    calls = collections.Counter()
    jobs = 0
    for tid in slots:
        e = ev[tid]
        for _, s in e:
            m = re.match(r"(\w+)\(", s)
            if m:
                calls[m.group(1)] += 1
        jobs += sum("CLONE_VFORK" in s for _, s in e)
        starts = [i for i, (_, s) in enumerate(e) if s.startswith("pipe2(") and not e[i - 1][1].startswith("pipe2(")]
        for a, b in zip(starts, starts[1:]):
            mk = {"start": e[a][0], "next": e[b][0]}
            for t, s in e[a:b]:
                if "CLONE_VFORK" in s:
                    mk.setdefault("spawn", t)
                if "spawn" in mk and ("clone3 resumed" in s or ("CLONE_VFORK" in s and "unfinished" not in s)):
                    mk.setdefault("spawned", t)
                if re.match(r'write\(\d+, "x", 1', s):
                    mk.setdefault("stdin", t)
                if "stdin" in mk and re.search(r"fd=\d+, revents=POLLIN\}|si_pid=\d", s):
                    mk["exit"] = t
                if (s.startswith("wait4(") and "WIFEXITED" in s) or "wait4 resumed" in s:
                    mk.setdefault("reaped", t)
                if "reaped" in mk and s.startswith("futex(") and "FUTEX_WAKE" in s:
                    mk.setdefault("delivered", t)
            if all(k in mk for k in keys):
                for n, (k1, k2) in zip(names, zip(keys, keys[1:])):
                    steps[n].append(mk[k2] - mk[k1])
    print(f"{len(slots)} slot threads, {jobs} jobs, {len(steps[names[0]])} with every step seen")
    total = 0.0
    for n in names:
        if steps[n]:
            v = statistics.median(steps[n])
            total += v
            print(f"  {n:42s} {v:8.0f} µs")
    print(f"  {'sum of the medians':42s} {total:8.0f} µs")
    print(f"system calls per job in the slot threads: {sum(calls.values()) / max(jobs, 1):.1f}")
    for n, c in calls.most_common():
        if c / jobs >= 0.05:
            print(f"  {n:16s} {c / jobs:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
