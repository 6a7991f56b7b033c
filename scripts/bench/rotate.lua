-- wrk script of scripts/bench/memory.py, after a line `targets = {{path, body file, header length}, ...}`:
-- each thread sends binary-tensor requests rotating over the targets; after a 503 or 429 its next
-- request waits what Retry-After says (at most 1 s, 100 ms without one); done() prints one JSON
-- line of wrk's figures and the statuses seen.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  requests, statuses, wait, next = {}, {}, 0, 0
  for i, t in ipairs(targets) do
    local f = assert(io.open(t[2], "rb"))
    requests[i] = wrk.format("POST", t[1], {["Content-Type"] = "application/octet-stream",
      ["Inference-Header-Content-Length"] = tostring(t[3])}, f:read("*a"))
    f:close()
  end
end

function request()
  next = next % #requests + 1
  return requests[next]
end

function delay()
  local w = wait
  wait = 0
  return w
end

function response(status, headers, body)
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
  if status == 503 or status == 429 then
    local after = tonumber(headers["Retry-After"] or headers["retry-after"] or "")
    wait = after and math.min(1000, after * 1000) or 100
  end
end

function done(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do all[k] = (all[k] or 0) + v end
  end
  local parts = {}
  for k, v in pairs(all) do table.insert(parts, string.format('"%s":%d', k, v)) end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"rps":%.1f,"p50_us":%d,"p99_us":%d,"non2xx":%d,"errors":%d,"statuses":{%s}}\n',
    summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(50),
    latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout,
    table.concat(parts, ",")))
end
