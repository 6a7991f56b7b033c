package dev.modelkeeper.benchmarks.memory;

import dev.modelkeeper.benchmarks.BlockingHttpClient;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Each demo model alone and quiet, on a fresh server under test: RSS before its load, the peak
 * while it loads, idle after it, the peak over a few requests at its largest batch, and after its
 * unload, beside what the server charged and measured for it. Not thread-safe; picocli calls it
 * once.
 */
@Command(
    name = "per-model",
    mixinStandardHelpOptions = true,
    description = "Every demo model alone on a fresh server: RSS at each step vs its charge.")
final class PerModelScenario implements Callable<Integer> {

  @Mixin Setup setup;

  @Spec CommandSpec spec;

  @Option(
      names = "--requests",
      defaultValue = "20",
      description = "Requests at the largest batch per model (default: ${DEFAULT-VALUE}).")
  int requests;

  @Option(
      names = "--settle-seconds",
      defaultValue = "2",
      description =
          "Quiet time before the first reading and after the load (default: ${DEFAULT-VALUE}).")
  int settleSeconds;

  @Option(
      names = "--unload-seconds",
      defaultValue = "3",
      description = "Quiet time after the unload before its reading (default: ${DEFAULT-VALUE}).")
  int unloadSeconds;

  /** One model's readings, bytes; -1 where unknown. */
  private record Row(
      BenchRepository.Model model,
      int rows,
      long before,
      long loadPeak,
      double loadSeconds,
      long idle,
      long batchPeak,
      long afterUnload,
      ServerApi.Charge charge,
      Map<Integer, Long> statuses) {}

  @Override
  public Integer call() throws Exception {
    Instant started = Instant.now();
    String loadBefore = MemoryReport.loadAverage();
    List<String> flags = setup.capFlags();
    Path demo = setup.demo();
    Path work = setup.work();
    List<Row> rows = new ArrayList<>();
    boolean failed = false;
    for (BenchRepository.Model m : BenchRepository.models(demo)) {
      Path logs = work.resolve("per-model-logs").resolve(m.name() + "-" + m.version());
      try (ServerProcess server =
              ServerProcess.start(
                  setup.jar, setup.heap, demo, flags, logs, setup.timeouts().ready());
          RssSampler sampler = new RssSampler(server.pid());
          ServerApi api = new ServerApi(server.port(), setup.timeouts().request())) {
        rows.add(measure(m, server, sampler, api));
        failed |= !server.outOfMemoryLines().isEmpty() || !server.isAlive();
      }
    }
    StringBuilder sb = new StringBuilder("### Per model, alone and quiet\n\n");
    sb.append(
            MemoryReport.preamble(
                started,
                loadBefore,
                setup.heap,
                setup.command(spec.root().commandLine().getParseResult().originalArgs())))
        .append('\n');
    sb.append("A fresh server (`")
        .append(setup.capFlag)
        .append(' ')
        .append(setup.cap)
        .append("`) per model. Before: ")
        .append(settleSeconds)
        .append(
            " s after `Ready.`; load peak: the largest sample while `GET /v2/models/<name>/versions/<v>`")
        .append(" loads it; idle: ")
        .append(settleSeconds)
        .append(" s later; at max batch: the largest sample over ")
        .append(requests)
        .append(" sequential binary requests at its largest batch; after unload: ")
        .append(unloadSeconds)
        .append(" s after `POST /v2/repository/models/<name>/unload`. Charged and measured are the")
        .append(" registry's `charged_bytes` and `measured_bytes` while it was resident; Δ is RSS")
        .append(
            " minus the reading before the load (n/a when negative). All MiB but the file.\n\n");
    sb.append(
        "| model | file | rows | before | load peak | idle | at max batch | after unload | charged"
            + " | measured | Δ idle | Δ max batch | measured / charged | Δ idle / charged"
            + " | Δ max batch / charged | measured / Δ idle | load s | requests |\n");
    sb.append(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (Row r : rows) {
      long charged = r.charge() == null ? -1 : r.charge().chargedBytes();
      long measured = r.charge() == null ? -1 : r.charge().measuredBytes();
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f"
                  + " | %s |\n",
              r.model().id(),
              MemoryReport.size(r.model().fileBytes()),
              r.rows(),
              MemoryReport.mib(r.before()),
              MemoryReport.mib(r.loadPeak()),
              MemoryReport.mib(r.idle()),
              MemoryReport.mib(r.batchPeak()),
              MemoryReport.mib(r.afterUnload()),
              MemoryReport.mib(charged),
              MemoryReport.mib(measured),
              MemoryReport.mib(r.idle() - r.before()),
              MemoryReport.mib(r.batchPeak() - r.before()),
              MemoryReport.ratio(measured, charged),
              MemoryReport.ratio(r.idle() - r.before(), charged),
              MemoryReport.ratio(r.batchPeak() - r.before(), charged),
              MemoryReport.ratio(measured, r.idle() - r.before()),
              r.loadSeconds(),
              statuses(r.statuses())));
    }
    sb.append(
        "\nTarget: measured cost within 15% of RSS alone (`measured / Δ idle` between 0.85 and"
            + " 1.15); `n/a` where the server reports no `charged_bytes` or `measured_bytes` (a jar"
            + " without the memory cap). Small models' deltas are within the noise of a JVM's"
            + " own RSS (JIT, GC) and read better in absolute terms.\n");
    if (failed) {
      sb.append("\n**A server logged OutOfMemoryError or exited; see its logs under ")
          .append(work)
          .append(".**\n");
    }
    MemoryReport.save(setup.docs, sb.toString());
    System.out.println(sb);
    return failed ? 1 : 0;
  }

  private Row measure(
      BenchRepository.Model m, ServerProcess server, RssSampler sampler, ServerApi api)
      throws Exception {
    TimeUnit.SECONDS.sleep(settleSeconds);
    long before = sampler.now();
    int mark = sampler.mark();
    long start = System.nanoTime();
    List<ServerApi.Input> inputs = api.inputs(m.name(), m.version()); // loads it
    double loadSeconds = (System.nanoTime() - start) / 1e9;
    long loadPeak = sampler.maxSince(mark);
    TimeUnit.SECONDS.sleep(settleSeconds);
    long idle = sampler.now();
    InferRequest request = InferRequest.of(m.name(), m.version(), inputs, m.rows(setup.rows));
    Map<Integer, Long> statuses = new TreeMap<>();
    mark = sampler.mark();
    for (int i = 0; i < requests; i++) {
      BlockingHttpClient.Response r = api.infer(request);
      statuses.merge(r.status(), 1L, Long::sum);
    }
    long batchPeak = sampler.maxSince(mark);
    ServerApi.Charge charge = api.charge(m.id());
    int unload = api.unload(m.name());
    TimeUnit.SECONDS.sleep(unloadSeconds);
    long afterUnload = sampler.now();
    Row row =
        new Row(
            m,
            request.rows(),
            before,
            loadPeak,
            loadSeconds,
            idle,
            batchPeak,
            afterUnload,
            charge,
            statuses);
    LoadRun.log(
        "%s (pid %d): before %s, load peak %s, idle %s, max batch %s, after unload %s MiB"
            + " (unload answered %d); charged %s, measured %s MiB; requests %s",
        m.id(),
        server.pid(),
        MemoryReport.mib(before),
        MemoryReport.mib(loadPeak),
        MemoryReport.mib(idle),
        MemoryReport.mib(batchPeak),
        MemoryReport.mib(afterUnload),
        unload,
        MemoryReport.mib(charge == null ? -1 : charge.chargedBytes()),
        MemoryReport.mib(charge == null ? -1 : charge.measuredBytes()),
        statuses(statuses));
    return row;
  }

  private static String statuses(Map<Integer, Long> statuses) {
    StringBuilder sb = new StringBuilder();
    statuses.forEach(
        (s, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(n).append("× ").append(s));
    return sb.toString();
  }
}
