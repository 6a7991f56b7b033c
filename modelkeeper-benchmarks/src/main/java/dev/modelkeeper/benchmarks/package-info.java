/**
 * What only in-process code can measure: the JMH benchmarks of the lifecycle core and the inference
 * floor with their baselines (Caffeine, a one-lock LRU), and the in-process workloads (stampede,
 * parallel loads, churn, cold loads) that write CSV for {@code scripts/bench/render.py}. Load over
 * the network is the scripts' (wrk, h2load, ghz, perf_analyzer); this package opens no socket.
 */
package dev.modelkeeper.benchmarks;
