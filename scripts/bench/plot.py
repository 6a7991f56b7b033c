#!/usr/bin/env python3
"""Charts (PNG, matplotlib) from the results that scripts/bench-*.sh leave.

    plot.py bench DIR      DIR/hotpath.png (JMH medians) and DIR/churn.png
    plot.py memory DIR     DIR/memory-rss.png: RSS over time of each run, its limit (the cap, or
                           the file-size budget) drawn in its colour

Run with the pinned matplotlib of scripts/bench/lib.sh (plot_python).
"""
import csv
import glob
import json
import os
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bench(d):
    scores = defaultdict(list)
    for path in glob.glob(os.path.join(d, "hotpath", "*.json")):
        for b in json.load(open(path)):
            key = (b["benchmark"].rsplit(".", 1)[1], f"{b['params']['keys']}, {b['threads']}t")
            scores[key] += [x for fork in b["primaryMetric"]["rawData"] for x in fork]
    if scores:
        impls = sorted({k[0] for k in scores})
        groups = sorted({k[1] for k in scores})
        fig, ax = plt.subplots(figsize=(9, 4.5))
        width = 0.8 / len(impls)
        for i, impl in enumerate(impls):
            ax.bar([g + i * width for g in range(len(groups))],
                   [statistics.median(scores.get((impl, g), [0])) for g in groups], width, label=impl)
        ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))], groups)
        ax.set_ylabel("million operations/s (JMH median)")
        ax.set_title("Hot path: lease and release vs one lookup")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "hotpath.png"), dpi=100)
    churn = os.path.join(d, "churn.csv")
    if os.path.exists(churn):
        data = list(csv.DictReader(open(churn)))
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
        labels = [f"{r['design']}\n{r['threads']} threads" for r in data]
        a.bar(labels, [float(r["good"]) / float(r["seconds"]) for r in data])
        a.set_ylabel("good requests/s")
        b.bar(labels, [float(r["p99_ms"]) for r in data], color="tab:orange")
        b.set_ylabel("p99 ms")
        for ax in (a, b):
            ax.tick_params(axis="x", labelsize=7, rotation=45)
        fig.suptitle("Churn: 4 models, budget 2")
        fig.tight_layout()
        fig.savefig(os.path.join(d, "churn.png"), dpi=100)


def memory(d):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for path in sorted(glob.glob(os.path.join(d, "*rss.csv"))):
        data = list(csv.DictReader(open(path)))
        label = os.path.basename(path)[: -len("-rss.csv")]
        (line,) = ax.plot([float(r["seconds"]) for r in data], [int(r["rss_bytes"]) / 2**20 for r in data],
                          label=label + " RSS")
        summary = path[: -len("rss.csv")] + "summary.json"
        if os.path.exists(summary):
            cap = json.load(open(summary)).get("cap_bytes")
            if cap:
                ax.axhline(cap / 2**20, linestyle="--", color=line.get_color(), label=label + " limit")
    ax.set_xlabel("seconds since the server was ready")
    ax.set_ylabel("MiB (from /proc/<pid>/status, every 100 ms)")
    ax.set_title("Server RSS under load")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "memory-rss.png"), dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("bench", "memory"):
        sys.exit(__doc__)
    globals()[sys.argv[1]](sys.argv[2])
