-- appended to every wrk script of scripts/bench/lib.sh: one JSON line of wrk's own figures
-- (latency percentiles from its HdrHistogram, in microseconds)
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"rps":%.1f,"p50_us":%d,"p99_us":%d,"non2xx":%d,"errors":%d}\n',
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
end
