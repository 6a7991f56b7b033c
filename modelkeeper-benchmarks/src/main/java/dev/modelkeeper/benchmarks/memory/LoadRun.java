package dev.modelkeeper.benchmarks.memory;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One closed-loop run against one server child: start it, read every model's inputs from its
 * metadata (which loads each model once), then {@code clients} clients rotate over the models at
 * their largest batch for the run's length while its RSS is sampled; read its metrics and registry,
 * stop it. Not thread-safe; the harness thread runs it.
 */
final class LoadRun {

  /**
   * What a run measured.
   *
   * @param label the run's name in the report
   * @param command the server's command line
   * @param limitBytes the server's own figure for its limit: {@code modelkeeper_memory_cap_bytes},
   *     else the registry's {@code max_bytes}; NaN when it reports neither
   * @param limitSource where {@code limitBytes} came from
   * @param millis RSS sample times, ms since the server was ready
   * @param rss RSS samples, bytes
   * @param load what the clients saw
   * @param loads model loads during the clients' run ({@code modelkeeper_model_loads_total})
   * @param evictions evictions during the clients' run by reason (labels as the server writes them)
   * @param charges resident models at the end: {@code model_id size charged measured} lines
   * @param memoryMetrics the end's value of the new memory metrics present, by name
   * @param outOfMemory log lines of the server that mention {@code OutOfMemoryError}
   * @param died whether the server exited during the run
   */
  record Result(
      String label,
      List<String> command,
      double limitBytes,
      String limitSource,
      long[] millis,
      long[] rss,
      ClosedLoop.Result load,
      double loads,
      Map<String, Double> evictions,
      List<String> charges,
      Map<String, Double> memoryMetrics,
      List<String> outOfMemory,
      boolean died) {

    long maxRss() {
      long max = -1;
      for (long r : rss) {
        max = Math.max(max, r);
      }
      return max;
    }

    /** Share of RSS samples above the limit; NaN when there is no limit. */
    double shareAboveLimit() {
      if (!(limitBytes > 0) || rss.length == 0) {
        return Double.NaN;
      }
      int above = 0;
      for (long r : rss) {
        if (r > limitBytes) {
          above++;
        }
      }
      return (double) above / rss.length;
    }

    double evictionsTotal() {
      return evictions.values().stream().mapToDouble(Double::doubleValue).sum();
    }
  }

  private LoadRun() {}

  /**
   * Runs {@code clients} clients for {@code duration} against a server of {@code jar} serving
   * {@code repository}, started with {@code flags}; {@code rows} rows per request for models that
   * set no {@code max_batch_size}. Logs go under {@code logs}.
   */
  static Result run(
      String label,
      Path jar,
      String heap,
      Path repository,
      List<String> flags,
      int clients,
      Duration duration,
      int rows,
      Path logs,
      Timeouts timeouts)
      throws IOException, InterruptedException {
    List<BenchRepository.Model> models = BenchRepository.models(repository);
    try (ServerProcess server =
            ServerProcess.start(jar, heap, repository, flags, logs, timeouts.ready());
        RssSampler sampler = new RssSampler(server.pid());
        ServerApi api = new ServerApi(server.port(), timeouts.request())) {
      log(
          "%s: server pid %d on port %d: %s",
          label, server.pid(), server.port(), String.join(" ", server.commandLine()));
      List<InferRequest> targets = new ArrayList<>();
      for (BenchRepository.Model m : models) {
        targets.add(
            InferRequest.of(
                m.name(), m.version(), api.inputs(m.name(), m.version()), m.rows(rows)));
      }
      log(
          "%s: %d models, %d clients for %d s",
          label, targets.size(), clients, duration.toSeconds());
      Map<String, Double> before = api.metrics();
      ClosedLoop.Result load =
          ClosedLoop.run(server.port(), targets, clients, duration, timeouts.request());
      boolean died = !server.isAlive();
      Map<String, Double> after = died ? before : api.metrics();
      List<String> charges = new ArrayList<>();
      double limit = ServerApi.sum(after, "modelkeeper_memory_cap_bytes");
      String source = "`modelkeeper_memory_cap_bytes`";
      if (!died) {
        JsonNode registry = api.registry();
        for (JsonNode m : registry.path("models")) {
          charges.add(
              String.format(
                  Locale.ROOT,
                  "%s %s: file %s, charged %s MiB, measured %s MiB",
                  m.path("model_id").asText(),
                  m.path("state").asText(),
                  MemoryReport.size(m.path("size_bytes").asLong(-1)),
                  m.has("charged_bytes")
                      ? MemoryReport.mib(m.path("charged_bytes").asDouble(-1))
                      : "n/a",
                  m.has("measured_bytes") && !m.get("measured_bytes").isNull()
                      ? MemoryReport.mib(m.path("measured_bytes").asDouble(-1))
                      : "n/a"));
        }
        if (!(limit > 0) && registry.path("max_bytes").asLong(0) > 0) {
          limit = registry.path("max_bytes").asLong();
          source = "the registry's `max_bytes`";
        }
      }
      if (!(limit > 0)) {
        limit = Double.NaN;
        source = "none reported";
      }
      Map<String, Double> memory = new java.util.LinkedHashMap<>();
      for (String name :
          List.of("modelkeeper_process_resident_bytes", "modelkeeper_memory_cap_bytes")) {
        double v = ServerApi.sum(after, name);
        if (!Double.isNaN(v)) {
          memory.put(name, v);
        }
      }
      Map<String, Double> evictions = ServerApi.series(after, "modelkeeper_model_evictions_total");
      evictions.replaceAll(
          (k, v) ->
              v
                  - ServerApi.series(before, "modelkeeper_model_evictions_total")
                      .getOrDefault(k, 0.0));
      double loads =
          ServerApi.sum(after, "modelkeeper_model_loads_total")
              - ServerApi.sum(before, "modelkeeper_model_loads_total");
      long[][] samples = sampler.since(0);
      Result r =
          new Result(
              label,
              server.commandLine(),
              limit,
              source,
              samples[0],
              samples[1],
              load,
              loads,
              evictions,
              charges,
              memory,
              server.outOfMemoryLines(),
              died);
      log(
          "%s: max RSS %s MiB (limit %s MiB), %s, p50 %.1f ms, p99 %.1f ms, loads %.0f,"
              + " evictions %s%s",
          label,
          MemoryReport.mib(r.maxRss()),
          MemoryReport.mib(limit),
          load.statuses(),
          load.percentileMillis(50),
          load.percentileMillis(99),
          loads,
          LoadRunTable.reasons(evictions),
          r.outOfMemory().isEmpty() ? "" : ", OutOfMemoryError logged");
      charges.forEach(c -> log("%s:   %s", label, c));
      return r;
    }
  }

  static void log(String format, Object... args) {
    System.out.println(String.format(Locale.ROOT, format, args));
  }

  /**
   * The harness's bounds on waiting for a server.
   *
   * @param ready for {@code Ready.} after a start
   * @param request for one HTTP answer
   */
  record Timeouts(Duration ready, Duration request) {}
}
