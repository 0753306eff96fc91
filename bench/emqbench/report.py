"""The report: every row a scenario adds and every sample it keeps, printed
as one table under the versions and the load it was measured with, and
written as JSON with --json: each row as {scenario (the --only name), row,
figure, unit, against, ceiling, ratio, target, met}, so that a check can
read which targets a run met."""
import json
import os
import shutil
import subprocess
from pathlib import Path

from emqbench import ROOT


class Report:
    def __init__(self):
        self.rows = []
        self.raw = {}  # every sample, by the name of the figure it went into
        self.scenario = None  # the scenario whose rows come next (bench/run sets it)

    def row(self, row, figure, unit, against, ceiling, ratio_kind="higher", target=None, met=None):
        """ratio_kind: higher (figure / ceiling, more is better), lower
        (figure / ceiling, less is better), or none."""
        ratio = None
        if ceiling not in (None, 0) and figure is not None and ratio_kind != "none":
            ratio = figure / ceiling
        self.rows.append(dict(scenario=self.scenario, row=row, figure=figure, unit=unit, against=against,
                              ceiling=ceiling, ratio=ratio, target=target or "", met=met))

    def print_run(self, out, quick, elapsed, info, load_start, load_end):
        mode = "quick" if quick else "full"
        print(file=out)
        print(f"emqd benchmarks ({mode} run, {elapsed:.0f} s of measuring)", file=out)
        print("  " + "; ".join(f"{k} {v}" for k, v in info.items()), file=out)
        print(f"  load average (1/5/15 min) at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}, "
              f"at end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}", file=out)
        print("  ratio = figure / ceiling-or-peer; for latencies lower is better", file=out)
        print(file=out)
        self.print_table(out)
        missed = [r for r in self.rows if r["met"] is False]
        print(file=out)
        print(f"targets: {sum(1 for r in self.rows if r['met'])} met, {len(missed)} missed", file=out)

    def print_table(self, out):
        def fmt(v, unit):
            if v is None:
                return "-"
            if unit in ("jobs/s", "µs/job"):
                return f"{v:,.0f}"
            return f"{v:.2f}" if unit == "MiB" else f"{v:.3f}"

        header = ["scenario", "figure", "unit", "against (same run)", "ceiling/peer", "ratio", "target", "met"]
        body = []
        for r in self.rows:
            met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
            body.append([r["row"], fmt(r["figure"], r["unit"]), r["unit"], r["against"],
                         fmt(r["ceiling"], r["unit"]), "-" if r["ratio"] is None else f"{r['ratio']:.2f}",
                         r["target"], met])
        widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]

        def line(cells):
            return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
        print(line(header), file=out)
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|", file=out)
        for b in body:
            print(line(b), file=out)

    def write_json(self, path, quick, elapsed, info, load_start, load_end):
        Path(path).write_text(json.dumps(dict(info=info, load_start=load_start, load_end=load_end,
                                              elapsed_s=elapsed, quick=quick, rows=self.rows, raw=self.raw),
                                         indent=2))


def versions(peer):
    """What the figures were measured with; peer: the installed peer, or None."""
    def out(argv):
        try:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                  cwd=ROOT).stdout.strip()
        except OSError:
            return "?"
    info = {
        "emqd commit": out(["git", "rev-parse", "--short", "HEAD"]),
        "valkey": out(["valkey-server", "--version"]).split(" sha=")[0],
        "node": out(["node", "--version"]) if shutil.which("node") else "-",
    }
    if peer is not None:
        info["bullmq"] = peer.version()
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    info["machine"] = f"{os.cpu_count()} cpus, {mem_kib / 1024 / 1024:.1f} GiB"
    return info
