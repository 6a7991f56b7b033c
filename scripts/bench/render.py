#!/usr/bin/env python3
"""Markdown from the results that scripts/bench-*.sh leave (CSV and JSON; the tools computed the
percentiles, this only takes medians over rounds and ratios). Prints to stdout.

    render.py KIND DIR       KIND: jars, protocols, batching, payload, heap, bench, memory, scaleout

Standard library only; charts are drawn by plot.py (matplotlib).
"""
import collections
import csv
import glob
import json
import math
import os
import statistics
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    return float(v) if v not in (None, "", "nan") else math.nan


def med(values):
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def fmt(v, digits=0):
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    return f"{v:,.{digits}f}"


def table(header, body):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out) + "\n"


def machine(d):
    p = os.path.join(d, "machine.json")
    if not os.path.exists(p):
        return ""
    m = json.load(open(p))
    return (f"Measured {m['date']} on {m['cpu']} ({m['cpus']} CPUs), {m['java']}, load average "
            f"before {' '.join(m['loadavg'])}. Command: `{m['command']}`.\n\n")


def by(data, *keys):
    groups = collections.defaultdict(list)
    for r in data:
        groups[tuple(r[k] for k in keys)].append(r)
    return groups


def order(data, key):
    return list(dict.fromkeys(r[key] for r in data))


def compare(d, file, label, cells, side, sides=None, note=True):
    """Tables of several setups (side) over rounds: median req/s and p99 per cell, ratio to the
    first setup (median of the per-round ratios, each round's in brackets)."""
    data = rows(os.path.join(d, file))
    sides = sides or order(data, side)
    g = by(data, side, *cells)
    body = []
    for cell in dict.fromkeys(tuple(r[k] for k in cells) for r in data):
        line = list(cell)
        for s in sides:
            v = g[(s, *cell)]
            line.append(f"{fmt(med(num(r['rps']) for r in v))} ({fmt(med(num(r['p99_ms']) for r in v), 2)})")
        base = {r["round"]: r for r in g[(sides[0], *cell)]}
        for s in sides[1:]:
            mine = [r for r in g[(s, *cell)] if r["round"] in base]
            ratios = [num(r["rps"]) / num(base[r["round"]]["rps"]) for r in mine if num(base[r["round"]]["rps"])]
            p99 = [num(r["p99_ms"]) / num(base[r["round"]]["p99_ms"]) for r in mine if num(base[r["round"]]["p99_ms"])]
            line.append(f"**{fmt(med(ratios), 2)}** ({', '.join(fmt(x, 2) for x in ratios)})")
            line.append(fmt(med(p99), 2))
        line.append(sum(int(r["non2xx"]) + int(r["errors"]) for s in sides for r in g[(s, *cell)]))
        body.append(line)
    header = list(cells) + [f"{s} req/s (p99 ms)" for s in sides]
    for s in sides[1:]:
        header += [f"req/s {s} / {sides[0]} (per round)", f"p99 {s} / {sides[0]}"]
    header.append("failed")
    return f"{label}\n\n{machine(d) if note else ''}" + table(header, body)


def jars(d):
    return compare(d, "jars.csv", "Requests/s, medians over the rounds (p99 ms in brackets); "
                   "ratios of requests/s to the first jar.", ["workload", "clients"], "name")


PROTOCOLS = ["JSON REST", "binary REST", "gRPC"]


def floor(d):
    p = os.path.join(d, "floor.json")
    if not os.path.exists(p):
        return ""
    return ("\nIn-process floor (JMH, `OnnxModel.infer` on one thread, no server):\n\n"
            + table(["model:rows", "µs per run (± error)"],
                    [[b["params"]["cell"], f"{b['primaryMetric']['score']:.1f} ± "
                      f"{b['primaryMetric']['scoreError']:.1f}"] for b in json.load(open(p))]))


def protocols(d):
    text = compare(d, "protocols.csv", "Requests/s by protocol, medians over the rounds (p99 ms "
                   "in brackets); `none` is the round trip without a model (GET /v2/health/live, gRPC "
                   "ServerLive).", ["model", "rows", "clients"], "protocol", PROTOCOLS)
    data = rows(os.path.join(d, "protocols.csv"))
    if data and "server_cpu_us" in data[0]:
        g = by(data, "model", "rows", "clients", "protocol")
        protos = PROTOCOLS
        cells = list(dict.fromkeys((r["model"], r["rows"], r["clients"]) for r in data))
        text += ("\nServer CPU per request, µs (from /proc/<pid>/stat; the load tools run in their "
                 "own processes), medians:\n\n" + table(
                     ["model", "rows", "clients"] + protos,
                     [list(c) + [fmt(med(num(r["server_cpu_us"]) for r in g.get((*c, p), [])))
                                 for p in protos] for c in cells]))
    text += floor(d)
    pa = os.path.join(d, "perf_analyzer.csv")
    if os.path.exists(pa):
        text += "\nCross-check with NVIDIA's perf_analyzer (its own CSV, every form through one tool):\n\n"
        text += table(["form", "concurrency", "inferences/s", "p50 µs", "p99 µs"],
                      [[r["form"], r["Concurrency"], r["Inferences/Second"], r["p50 latency"],
                        r["p99 latency"]] for r in rows(pa)])
    return text


def batching(d):
    text = compare(d, "batching.csv", "convnet over binary REST, batching off vs on (medians over "
                   "the rounds, p99 ms in brackets).", ["clients"], "setting")
    iso = os.path.join(d, "isolation.csv")
    if os.path.exists(iso):
        text += "\n" + compare(d, "isolation.csv", "iris from one client, idle, beside a spinning "
                               "core and beside a saturated convnet:", ["clients"], "window", note=False)
    return text + floor(d)


def payload(d):
    return compare(d, "payload.csv", "One client, iris with an input of each size: requests/s "
                   "(p99 ms) JSON vs binary tensors.", ["bytes"], "form")


def heap(d):
    data = rows(os.path.join(d, "heap.csv"))
    body = [[r["form"], f"{r['model']} ({r['rows']} rows)", r["body_bytes"], r["tensor_bytes"], fmt(num(r["allocated_per_request"])),
             fmt(num(r["allocated_per_request"]) / num(r["tensor_bytes"]), 2)] for r in data]
    return ("Heap the server allocated per request (sum over its threads of JFR's "
            "`jdk.ThreadAllocationStatistics`, between two recordings around the requests):\n\n"
            + machine(d) + table(["form", "input", "body bytes", "tensor bytes", "allocated per request",
                                  "per tensor byte"], body))


def hot_path(d):
    """JMH JSON of every round: median of all measured iterations per configuration, with a
    distribution-free 99% interval from order statistics."""
    scores = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(d, "hotpath", "*.json"))):
        for b in json.load(open(path)):
            key = (b["benchmark"].rsplit(".", 1)[1], b["params"]["keys"], b["threads"])
            scores[key] += [x for fork in b["primaryMetric"]["rawData"] for x in fork]
    if not scores:
        return ""

    def interval(v):
        v, n, k, cum = sorted(v), len(v), 0, 0.0
        for j in range(n):
            cum += math.comb(n, j) / 2 ** n
            if cum > 0.005:
                break
            k = j + 1
        return (v[k - 1], v[n - k]) if k else (v[0], v[-1])

    impls = list(dict.fromkeys(k[0] for k in sorted(scores)))
    body = []
    for keys, threads in sorted({(k[1], k[2]) for k in scores}):
        line = [keys, threads]
        for i in impls:
            v = scores.get((i, keys, threads), [])
            lo, hi = interval(v) if v else (math.nan, math.nan)
            line.append(f"{med(v):.1f} [{lo:.1f}–{hi:.1f}]" if v else "n/a")
        mk, caf, lru = (med(scores.get((i, keys, threads), [])) for i in ("modelKeeper", "caffeine", "oneLockLru"))
        line += [fmt(mk / caf, 2), fmt(mk / lru, 2)]
        body.append(line)
    return ("### Hot path (JMH, M ops/s: median of every measured iteration [99% interval])\n\n"
            + table(["keys", "threads"] + impls + ["modelKeeper ÷ caffeine", "modelKeeper ÷ oneLockLru"], body))


def bench(d):
    out = [machine(d), hot_path(d)]
    for name, title in (("stampede", "Stampede"), ("parallel", "Parallel loads")):
        p = os.path.join(d, name + ".csv")
        if os.path.exists(p):
            body = []
            for (design,), v in by(rows(p), "design").items():
                load, wall = med(num(r["load_ms"]) for r in v), med(num(r["wall_ms"]) for r in v)
                body.append([design, ", ".join(r["constructor_calls"] for r in v), fmt(load, 1),
                             fmt(wall, 1), f"{wall / load:.2f}x", sum(int(r["failures"]) for r in v)])
            out.append(f"### {title} (medians over the rounds)\n\n" + table(
                ["design", "constructor calls per round", "load ms", "wall ms", "wall ÷ load", "failed"], body))
    p = os.path.join(d, "churn.csv")
    if os.path.exists(p):
        cols = ["design", "threads", "good", "failed", "cleared_in_use", "loads", "evictions",
                "duplicate_constructors", "max_live", "mean_live", "p50_ms", "p95_ms", "p99_ms"]
        body = [[r["design"], r["threads"], fmt(num(r["good"]) / num(r["seconds"]))]
                + [r[c] for c in cols[3:]] for r in rows(p)]
        out.append("### Churn (p50/p95/p99 from HdrHistogram)\n\n"
                   + table(["design", "threads", "good req/s"] + cols[3:], body))
    return "\n".join(x for x in out if x)


def memory(d):
    out, body = [machine(d)], []
    mib = lambda v: fmt(v / 2**20) if v else "n/a"
    for p in sorted(glob.glob(os.path.join(d, "*summary.json"))):
        s = json.load(open(p))
        if s["scenario"] == "cycles":
            out.append(f"{s['label']}: RSS after the first {mib(s['rss_after_first_bytes'])} MiB, after the "
                       f"last {mib(s['rss_after_last_bytes'])} MiB ({s['growth_per_cycle_bytes']:,} bytes per "
                       f"cycle), {s['failed_inferences']} failed inferences, OutOfMemoryError logged: "
                       f"{bool(s['out_of_memory'])}.\n")
            continue
        body.append([s["label"], s["models"], s["clients"], s["seconds"], mib(s["max_rss_bytes"]),
                     mib(s["cap_bytes"]), s["max_rss_over_cap"], f"{s['samples_above_cap']} of {s['samples']}",
                     s["requests"], fmt(s["rps"], 1), fmt(s["p50_us"] / 1e3, 1), fmt(s["p99_us"] / 1e3, 1),
                     " ".join(f"{k}: {v}" for k, v in sorted(s["statuses"].items())), fmt(s["loads"]),
                     fmt(s["evictions"]), "yes" if s["out_of_memory"] or s["died"] else "no"])
        if s["scenario"] == "python":
            out.append(f"{s['label']}: at the end {s['resident_models_at_end']} Python models resident and "
                       f"{s['processes_at_end']} processes under the server (one per resident model "
                       f"instance: the evicted models' processes are gone).\n")
    if body:
        out.append("RSS (the server's and its child processes') sampled every 100 ms from /proc/<pid>/status; latencies and statuses from wrk; loads "
                   "and evictions from the server's /metrics; the cap from `modelkeeper_memory_cap_bytes` "
                   "(the file-size budget's run: the registry's `max_bytes`).\n\n" + table(
                       ["run", "models", "clients", "s", "max RSS MiB", "cap MiB", "max RSS / cap",
                        "samples above cap", "requests", "req/s", "p50 ms", "p99 ms", "statuses", "loads",
                        "evictions", "OOM or died"], body))
    p = os.path.join(d, "per-model.csv")
    if os.path.exists(p):
        data = rows(p)
        out.append("Per model, alone and quiet (MiB; charged and measured from the registry; alone: "
                   "`ModelAlone` in a JVM of its own):\n\n"
                   + table(list(data[0].keys()), [list(r.values()) for r in data]))
    return "\n".join(out)


def scaleout(d):
    data = rows(os.path.join(d, "scaleout.csv"))
    body = []
    for (budget, routing), v in by(data, "budget", "routing").items():
        loads = [int(r["loads"]) / max(1, int(r["requests"])) for r in v]
        body.append([budget, routing, sum(int(r["requests"]) for r in v),
                     sum(int(r["non2xx"]) + int(r["errors"]) for r in v), fmt(med(loads), 3),
                     fmt(med(num(r["resident"]) for r in v), 1), fmt(med(num(r["distinct"]) for r in v), 1),
                     fmt(med(num(r["on_several"]) for r in v), 1), fmt(med(num(r["rps"]) for r in v)),
                     fmt(med(num(r["p99_ms"]) for r in v), 1)])
    return ("Medians over the rounds; loads from the replicas' /metrics, resident models from their "
            "registries at the end of each measurement.\n\n" + machine(d)
            + table(["budget", "routing", "requests", "failed", "loads per request", "resident (3 replicas)",
                     "distinct models resident", "models on several replicas", "req/s", "p99 ms"], body))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in globals():
        sys.exit(__doc__)
    print(globals()[sys.argv[1]](sys.argv[2]))
