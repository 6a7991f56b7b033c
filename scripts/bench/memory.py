#!/usr/bin/env python3
"""The memory benchmark's scenarios (workloads 11 and 6 of the design's BENCHMARKS.md), driven by
scripts/bench-memory.sh. Server jars run as child processes on loopback; their RSS is read from
/proc/<pid>/status every 100 ms by a thread here; load comes from wrk (binary tensors at each
model's largest batch, every client rotating over the models; after a 503 or 429 a client waits
what Retry-After says, at most 1 s, 100 ms without one); the server's own counters come from
/metrics and /model/registry.

    memory.py acceptance|churn|per-model|cycles --jar JAR --out DIR [options]

Leaves DIR/<run>-rss.csv (seconds, rss_bytes), DIR/<run>-summary.json and, for per-model,
DIR/per-model.csv. Exit status 1 when a server logged OutOfMemoryError or died.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bodies  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 2**20


def log(msg):
    print(time.strftime("[%H:%M:%S] ") + msg, file=sys.stderr, flush=True)


def own_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def descendants(pid):
    """The pids of pid's children, their children, ... (Python models' processes)."""
    parents = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    parents.setdefault(int(f.read().rsplit(")", 1)[1].split()[1]), []).append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def rss(pid):
    """The resident memory of pid and every process under it."""
    total = own_rss(pid)
    for child in descendants(pid):
        try:
            total += own_rss(child)
        except OSError:
            pass  # exited meanwhile
    return total


class Server:
    """One `java -jar JAR serve` child on a free port, its RSS sampled every 100 ms."""

    def __init__(self, jar, repository, flags, logs, heap, name):
        os.makedirs(logs, exist_ok=True)
        self.out = os.path.join(logs, name + ".out")
        with socket.socket() as s:  # a free port, for the server to take
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        self.command = ["java", f"-Xmx{heap}", "-jar", jar, "serve", "--host", "127.0.0.1",
                        "--port", port, "--grpc-port", "-1", "--repository", repository,
                        "--cache-dir", os.path.join(logs, "cache")] + flags
        # Triton's metrics port off: a variable, which jars without that flag ignore
        env = dict(os.environ, MODELKEEPER_METRICS_PORT="-1")
        self.process = subprocess.Popen(self.command, stdout=open(self.out, "w"),
                                        stderr=subprocess.STDOUT, env=env)
        self.url = f"http://127.0.0.1:{port}"
        for _ in range(480):
            if self.process.poll() is not None:
                sys.exit(f"{name} exited before Ready.; see {self.out}")
            if any(l.startswith("Ready.") for l in open(self.out, errors="replace")):
                break
            time.sleep(0.25)
        else:
            self.process.kill()
            sys.exit(f"{name} not ready after 120 s; see {self.out}")
        self.samples, self.t0, self.stopped = [], time.monotonic(), False
        threading.Thread(target=self._sample, daemon=True).start()
        log(f"{name}: pid {self.process.pid}: {' '.join(self.command)}")

    def _sample(self):
        while not self.stopped and self.process.poll() is None:
            try:
                self.samples.append((time.monotonic() - self.t0, rss(self.process.pid)))
            except OSError:
                break
            time.sleep(0.1)

    def now(self):
        return rss(self.process.pid)

    def peak_since(self, t):
        return max((r for s, r in self.samples if s >= t - self.t0), default=self.now())

    def call(self, path, body=None, headers=None, method=None):
        request = urllib.request.Request(self.url + path, data=body, headers=headers or {},
                                         method=method or ("POST" if body is not None else "GET"))
        try:
            with urllib.request.urlopen(request, timeout=120) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def metrics(self):
        sums = {}
        for line in self.call("/metrics")[1].decode().splitlines():
            m = re.match(r"^([a-z_]+)(\{[^}]*\})? ([-0-9.eE+NaInf]+)$", line)
            if m:
                sums[m.group(1)] = sums.get(m.group(1), 0.0) + float(m.group(3))
        return sums

    def registry(self):
        return json.loads(self.call("/model/registry")[1])

    def out_of_memory(self):
        return [l.strip() for l in open(self.out, errors="replace") if "OutOfMemoryError" in l]

    def stop(self, out_dir, label):
        self.stopped = True
        self.process.terminate()
        self.process.wait(60)
        with open(os.path.join(out_dir, label + "-rss.csv"), "w") as f:
            f.write("seconds,rss_bytes\n")
            f.writelines(f"{s:.2f},{r}\n" for s, r in self.samples)


def models(root):
    """(name, version, rows at its largest batch) of every model version under root."""
    out = []
    for name in sorted(os.listdir(root)):
        for version in sorted(os.listdir(os.path.join(root, name)) if os.path.isdir(os.path.join(root, name)) else []):
            folder = os.path.join(root, name, version)
            if os.path.isfile(os.path.join(folder, "model.py")):
                out.append((name, version, None))
            elif os.path.isfile(os.path.join(folder, "model.onnx")):
                config = os.path.join(folder, "config.json")
                batch = json.load(open(config)).get("max_batch_size", -1) if os.path.exists(config) else -1
                out.append((name, version, batch if batch and batch > 0 else None))
    return out


def repository(demo, root, copies, small):
    """copies of the demo's convnet (real copies: distinct models share no page cache) as
    convnet-a, convnet-b, ..., and with small, every other demo model (hard links)."""
    shutil.rmtree(root, ignore_errors=True)
    for i in range(copies):
        shutil.copytree(os.path.join(demo, "convnet"), os.path.join(root, "convnet-" + chr(97 + i)))
    if small:
        for name, _, _ in models(demo):
            if name != "convnet" and not os.path.exists(os.path.join(root, name)):
                shutil.copytree(os.path.join(demo, name), os.path.join(root, name), copy_function=os.link)
    return root


def load_run(a, label, jar, repo, flags, budget=False):
    """Closed-loop wrk clients over every model of repo for a.seconds; its summary. The limit is
    the server's memory cap (modelkeeper_memory_cap_bytes), or with budget its byte budget (the
    registry's max_bytes)."""
    server = Server(jar, repo, flags, os.path.join(a.work, label), a.heap, label)
    lua = os.path.join(a.work, label + ".lua")
    entries = []
    for name, version, batch in models(repo):
        stem, hlen = bodies.main(server.url, f"{name}/{version}", batch or a.rows, a.work)
        entries.append(f'{{"/v2/models/{name}/versions/{version}/infer", "{stem}.bin", {hlen}}}')
    with open(lua, "w") as f:
        f.write("targets = {" + ", ".join(entries) + "}\n" + open(os.path.join(HERE, "rotate.lua")).read())
    before = server.metrics()
    started = time.time()
    wrk = subprocess.Popen(["wrk", f"-t{min(a.clients, 2)}", f"-c{a.clients}", f"-d{a.seconds}s",
                            "--timeout", "120s", "-s", lua, server.url],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    learned = {}  # model id -> seconds into the run at which the registry first showed its measured cost
    while wrk.poll() is None:
        try:
            for m in server.registry().get("models", []):
                if m.get("measured_bytes") and m["model_id"] not in learned:
                    learned[m["model_id"]] = round(time.time() - started, 1)
        except OSError:
            pass
        time.sleep(2)
    figures = json.loads([l for l in wrk.stdout.read().splitlines() if l.startswith("{")][-1])
    died = server.process.poll() is not None
    after = before if died else server.metrics()
    charges = [] if died else [
        {k: m.get(k) for k in ("model_id", "state", "size_bytes", "charged_bytes", "measured_bytes")}
        for m in server.registry().get("models", [])]
    children = [] if died else descendants(server.process.pid)
    cap = None if budget else after.get("modelkeeper_memory_cap_bytes")
    cap = cap or (None if died else server.registry().get("max_bytes"))
    max_rss = max((r for _, r in server.samples), default=0)
    summary = {
        "scenario": a.scenario, "label": label, "server": " ".join(server.command),
        "allocator": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_") or k in ("GLIBC_TUNABLES", "LD_PRELOAD")}
        or "glibc malloc with its defaults",
        "seconds": round(time.time() - started, 1), "clients": a.clients,
        "models": len(entries), "max_rss_bytes": max_rss, "cap_bytes": cap,
        "max_rss_over_cap": round(max_rss / cap, 3) if cap else None,
        "samples_above_cap": sum(1 for _, r in server.samples if cap and r > cap),
        "samples": len(server.samples),
        "loads": after.get("modelkeeper_model_loads_total", 0) - before.get("modelkeeper_model_loads_total", 0),
        "evictions": after.get("modelkeeper_model_evictions_total", 0) - before.get("modelkeeper_model_evictions_total", 0),
        "processes_at_end": len(children),
        "resident_models_at_end": sum(1 for m in charges if m.get("state") == "READY"),
        **figures, "measured_after_seconds": learned, "resident_at_end": charges, "out_of_memory": server.out_of_memory(), "died": died,
    }
    server.stop(a.out, label)
    with open(os.path.join(a.out, label + "-summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"{label}: max RSS {max_rss / MIB:.0f} MiB, cap {cap and cap / MIB:.0f} MiB, "
        f"{figures['requests']} requests ({figures.get('statuses')}), p99 {figures['p99_us'] / 1e3:.1f} ms, "
        f"loads {summary['loads']:.0f}, evictions {summary['evictions']:.0f}")
    return not summary["out_of_memory"] and not died


def acceptance(a):
    repo = repository(a.demo, os.path.join(a.work, "acceptance-repository"), a.copies, False)
    return load_run(a, "acceptance", a.jar, repo, [a.cap_flag, a.cap] + a.server_flag)


PYTHON_MODEL = """import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        self.weights = np.ones(%d // 8)  # touched: resident, as a loaded model's data is

    def execute(self, requests):
        return [pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
            "OUT", pb_utils.get_input_tensor_by_name(r, "IN").as_numpy() * self.weights[0])])
            for r in requests]
"""


def python(a):
    """copies of a Python model holding a.python_mb of numpy data, JVM and children under the cap."""
    root = os.path.join(a.work, "python-repository")
    for i in range(a.copies):
        folder = os.path.join(root, "holds-%s" % chr(ord("a") + i), "1")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "model.py"), "w") as f:
            f.write(PYTHON_MODEL % (a.python_mb * 1000 * 1000))
        with open(os.path.join(folder, "..", "config.pbtxt"), "w") as f:
            f.write('backend: "python"\ninput [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
                    'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n')
    flags = [a.cap_flag, a.cap] + (["--python", a.python] if a.python else []) + a.server_flag
    return load_run(a, "python", a.jar, root, flags)


def churn(a):
    if not a.baseline_jar:
        sys.exit("churn needs --baseline-jar")
    ok = load_run(a, "cap", a.jar, repository(a.demo, os.path.join(a.work, "churn-cap"), a.copies, True),
                  [a.cap_flag, a.cap] + a.server_flag)
    return ok & load_run(a, "budget", a.baseline_jar,
                         repository(a.demo, os.path.join(a.work, "churn-budget"), a.copies, True),
                         ["--max-bytes", a.budget] + a.baseline_flag, budget=True)


def per_model(a):
    """Each demo model alone on a fresh server, beside ModelAlone (the model alone in a JVM of its
    own: the in-process probe of the benchmarks jar)."""
    rows, ok = [], True
    for name, version, batch in models(a.demo):
        server = Server(a.jar, a.demo, [a.cap_flag, a.cap] + a.server_flag,
                        os.path.join(a.work, "per-model"), a.heap, f"{name}-{version}")
        model_path = f"/v2/models/{name}/versions/{version}"
        n = batch or a.rows
        bodies_of = {}
        for k in (1, n):  # the metadata read of the first loads it once
            stem, hlen = bodies.main(server.url, f"{name}/{version}", k, a.work)
            bodies_of[k] = (open(stem + ".bin", "rb").read(),
                            {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(hlen)})
        infer = lambda k: server.call(model_path + "/infer", *bodies_of[k])[0]
        unload = lambda: server.call(f"/v2/repository/models/{name}/unload", b"")
        for _ in range(a.learning_cycles):  # unmeasured: the server learns the model's cost
            infer(1)  # loads it (a metadata read after an unload answers from the server's cache)
            statuses = [infer(n) for _ in range(a.requests)]
            unload()
        time.sleep(a.settle_seconds)
        before, mark, t = server.now(), time.monotonic(), time.time()
        first = infer(1)  # loads it, then runs one row
        load_seconds, load_peak = time.time() - t, server.peak_since(mark)
        time.sleep(a.settle_seconds)
        idle, mark = server.now(), time.monotonic()
        statuses = [first] + [infer(n) for _ in range(a.requests)]
        batch_peak = server.peak_since(mark)
        charge = next((m for m in server.registry().get("models", []) if m.get("model_id") == f"{name}/{version}"), {})
        unload()
        time.sleep(a.unload_seconds)
        after = server.now()
        ok &= not server.out_of_memory() and server.process.poll() is None
        server.stop(a.work, f"{name}-{version}")
        alone = subprocess.run(["java", "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "-cp", a.benchmarks_jar,
                                "dev.modelkeeper.benchmarks.memory.ModelAlone", a.demo, f"{name}/{version}",
                                str(n), str(a.requests), str(400 if os.path.getsize(
                                    os.path.join(a.demo, name, version, "model.onnx")) < MIB else 1)],
                               capture_output=True, text=True, timeout=300).stdout.split()[-5:]
        alone = [int(x) for x in alone] if len(alone) == 5 else [None] * 5
        mib = lambda v: round(v / MIB, 1) if isinstance(v, (int, float)) and v >= 0 else "n/a"
        rows.append({"model": f"{name}/{version}", "rows": n, "before": mib(before), "load_peak": mib(load_peak),
                     "idle": mib(idle), "at_max_batch": mib(batch_peak), "after_unload": mib(after),
                     "charged": mib(charge.get("charged_bytes")), "measured": mib(charge.get("measured_bytes")),
                     "delta_idle": mib(idle - before), "load_s": round(load_seconds, 2),
                     "statuses": " ".join(sorted(set(map(str, statuses)))),
                     "alone_load_peak": mib(alone[1] - alone[0]) if alone[0] else "n/a",
                     "alone_idle": mib(alone[2] - alone[0]) if alone[0] else "n/a",
                     "alone_working": mib(alone[3] - alone[2]) if alone[0] else "n/a"})
        log(f"{name}/{version}: {rows[-1]}")
    with open(os.path.join(a.out, "per-model.csv"), "w") as f:
        f.write(",".join(rows[0]) + "\n")
        f.writelines(",".join(str(v) for v in r.values()) + "\n" for r in rows)
    return ok


def cycles(a):
    """RSS before and after a.cycles load/unload cycles of one model, each with one inference."""
    server = Server(a.jar, a.demo, [a.cap_flag, a.cap] + a.server_flag, os.path.join(a.work, "cycles"), a.heap, "cycles")
    stem, hlen = bodies.main(server.url, a.model, 1, a.work)
    body = open(stem + ".bin", "rb").read()
    headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(hlen)}

    def cycle():
        server.call(f"/v2/repository/models/{a.model}/load", b"")
        status = server.call(f"/v2/models/{a.model}/infer", body, headers)[0]
        server.call(f"/v2/repository/models/{a.model}/unload", b"")
        return status

    cycle()
    time.sleep(a.quiet_seconds)
    first = server.now()
    failed = sum(cycle() != 200 for _ in range(a.cycles))
    time.sleep(a.quiet_seconds)
    last = server.now()
    summary = {"scenario": "cycles", "label": f"{a.cycles} load/unload cycles of {a.model}",
               "rss_after_first_bytes": first, "rss_after_last_bytes": last,
               "growth_per_cycle_bytes": round((last - first) / max(1, a.cycles)), "failed_inferences": failed,
               "out_of_memory": server.out_of_memory()}
    ok = not summary["out_of_memory"] and server.process.poll() is None
    server.stop(a.out, "cycles")
    json.dump(summary, open(os.path.join(a.out, "cycles-summary.json"), "w"), indent=1)
    log(json.dumps(summary))
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", choices=["acceptance", "churn", "per-model", "cycles", "python"])
    p.add_argument("--jar", required=True, help="the server jar under test")
    p.add_argument("--benchmarks-jar", default="modelkeeper-benchmarks/target/benchmarks.jar")
    p.add_argument("--baseline-jar", help="churn: the jar run with the file-size budget")
    p.add_argument("--out", required=True)
    p.add_argument("--work", help="repositories and server logs (default: OUT/work)")
    p.add_argument("--demo", default=os.path.expanduser("~/.cache/modelkeeper/demo-repository"))
    p.add_argument("--heap", default="256m", help="the servers' -Xmx (default: %(default)s)")
    p.add_argument("--cap", default="768MiB", help="the cap of the jar under test (default: %(default)s)")
    p.add_argument("--cap-flag", default="--max-memory", help="the option that takes --cap (default: %(default)s)")
    p.add_argument("--budget", default="300MB", help="churn: the baseline's --max-bytes (default: %(default)s)")
    p.add_argument("--server-flag", action="append", default=[], help="an extra option of the server under test; repeatable")
    p.add_argument("--baseline-flag", action="append", default=[], help="churn: an extra option of the baseline; repeatable")
    p.add_argument("--seconds", type=int, help="load per run (default: acceptance 180, churn 600)")
    p.add_argument("--copies", type=int, help="copies of convnet (default: acceptance 6, churn 4)")
    p.add_argument("--clients", type=int, default=3)
    p.add_argument("--python", help="python: the interpreter of the Python models (needs numpy)")
    p.add_argument("--python-mb", type=int, default=150, help="python: MB of numpy data each model holds")
    p.add_argument("--rows", type=int, default=32, help="rows for models without max_batch_size")
    p.add_argument("--requests", type=int, default=20, help="per-model: requests at the largest batch")
    p.add_argument("--learning-cycles", type=int, default=5, help="per-model: unmeasured load, requests, unload cycles first")
    p.add_argument("--settle-seconds", type=float, default=2)
    p.add_argument("--unload-seconds", type=float, default=3)
    p.add_argument("--cycles", type=int, default=1000)
    p.add_argument("--model", default="convnet", help="cycles: the model cycled")
    p.add_argument("--quiet-seconds", type=float, default=3)
    a = p.parse_args()
    a.seconds = a.seconds or (600 if a.scenario == "churn" else 180)
    a.copies = a.copies if a.copies is not None else (4 if a.scenario == "churn" else 6)
    a.work = a.work or os.path.join(a.out, "work")
    os.makedirs(a.work, exist_ok=True)
    ok = {"acceptance": acceptance, "churn": churn, "per-model": per_model, "cycles": cycles,
          "python": python}[a.scenario](a)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
