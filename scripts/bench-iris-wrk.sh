#!/usr/bin/env bash
# iris JSON throughput of several server jars, measured with wrk in one interleaved run: in each
# round every jar in turn (the order rotates per round) serves its bundled demo models with iris
# pinned, gets a warm-up, then wrk loads it at 1, 8 and 64 connections over loopback. Prints a
# Markdown table of medians over the rounds (req/s and p99 ms) and each round's figures.
#   scripts/bench-iris-wrk.sh [--rounds N] [--seconds S] NAME=JAR...
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
rounds=3
seconds=5
jars=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *=*) jars+=("$1"); shift ;;
    *) echo "unknown argument '$1'; usage: $0 [--rounds N] [--seconds S] NAME=JAR..." >&2; exit 2 ;;
  esac
done
[ ${#jars[@]} -ge 1 ] || { echo "name at least one NAME=JAR" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is not installed (Debian: apt-get install wrk)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/iris.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[5.1,3.5,1.4,0.2]}]}'
LUA
echo "load average before: $(cat /proc/loadavg)"
results="$work/results.tsv"
n=${#jars[@]}
for ((round = 1; round <= rounds; round++)); do
  for ((k = 0; k < n; k++)); do
    entry=${jars[$(((k + round - 1) % n))]}
    name=${entry%%=*}
    jar=${entry#*=}
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    java -Xmx1g -jar "$jar" serve --port "$port" --cache-dir "$work/cache-$name" --pin iris \
      > "$work/$name.out" 2> "$work/$name.err" &
    pid=$!
    for ((t = 0; t < 120; t++)); do
      grep -q '^Ready\.' "$work/$name.out" 2>/dev/null && break
      kill -0 $pid 2>/dev/null || { cat "$work/$name.err" >&2; exit 1; }
      sleep 0.5
    done
    grep -q '^Ready\.' "$work/$name.out" || { echo "$name did not get ready" >&2; exit 1; }
    url="http://127.0.0.1:$port/v2/models/iris/infer"
    wrk -t2 -c8 -d3s -s "$work/iris.lua" "$url" > /dev/null
    for c in 1 8 64; do
      threads=$((c < 2 ? 1 : 2))
      out=$(wrk -t$threads -c$c -d${seconds}s --latency -s "$work/iris.lua" "$url")
      rps=$(awk '/^Requests\/sec/ {print $2}' <<< "$out")
      p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' <<< "$out")
      non2xx=$(awk '/Non-2xx/ {print $NF}' <<< "$out")
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$c" "$rps" "$p99" "${non2xx:-0}" | tee -a "$results" >&2
    done
    kill -TERM $pid; wait $pid 2>/dev/null || true
  done
done
echo "load average after: $(cat /proc/loadavg)"
python3 - "$results" "${jars[@]}" <<'PY'
import sys, statistics, collections
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
names = [j.split('=', 1)[0] for j in sys.argv[2:]]
by = collections.defaultdict(list)
for r, name, c, rps, p99, bad in rows:
    by[(name, int(c))].append((int(r), float(rps), float(p99), int(bad)))
print('| Clients | ' + ' | '.join(f'{n} req/s (p99 ms)' for n in names) + ' | per-round req/s |')
print('|---:|' + '---:|' * len(names) + '---|')
for c in (1, 8, 64):
    cells, rounds = [], []
    for n in names:
        v = sorted(by[(n, c)])
        cells.append(f'{statistics.median(x[1] for x in v):,.0f} ({statistics.median(x[2] for x in v):.2f})')
        rounds.append(n + ': ' + ', '.join(f'{x[1]:,.0f}' for x in v))
    print(f'| {c} | ' + ' | '.join(cells) + ' | ' + '; '.join(rounds) + ' |')
bad = sum(int(r[5]) for r in rows)
print(f'\nnon-2xx answers over the whole run: {bad}')
PY
