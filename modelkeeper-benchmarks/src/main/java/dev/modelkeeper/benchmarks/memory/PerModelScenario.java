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
import picocli.CommandLine.Option;

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

  private static final int ALONE_COPIES_OF_SMALL_MODELS = 400;

  @Mixin Setup setup;

  @Option(
      names = "--requests",
      defaultValue = "20",
      description = "Requests at the largest batch per model (default: ${DEFAULT-VALUE}).")
  int requests;

  @Option(
      names = "--learning-cycles",
      defaultValue = "5",
      description =
          "Unmeasured load, requests and unload cycles before the measured load; the server charges"
              + " the median of a model's latest load readings (default: ${DEFAULT-VALUE}).")
  int learningCycles;

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
      Map<Integer, Long> statuses,
      Alone alone) {}

  /** The model alone in a process of its own ({@link ModelAlone}), RSS in bytes. */
  private record Alone(long before, long loadPeak, long idle, long runPeak, long afterClose) {}

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
        rows.add(measure(demo, m, server, sampler, api));
        failed |= !server.outOfMemoryLines().isEmpty() || !server.isAlive();
      }
    }
    StringBuilder sb = new StringBuilder("### Per model, alone and quiet\n\n");
    sb.append(MemoryReport.preamble(started, loadBefore, setup.heap, setup.command())).append('\n');
    sb.append("A fresh server (`")
        .append(setup.capFlag)
        .append(' ')
        .append(setup.cap)
        .append("`) per model, which first loads it, serves it ")
        .append(requests)
        .append(" requests and unloads it, unmeasured, ")
        .append(learningCycles)
        .append(" times (so that the JVM's first use of the code is behind the measured cycle")
        .append(" and the server has readings of the model). Before: ")
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
    sb.append(aloneTable(rows));
    MemoryReport.save(setup.docs, sb.toString());
    System.out.println(sb);
    return failed ? 1 : 0;
  }

  private Row measure(
      Path demoRoot,
      BenchRepository.Model m,
      ServerProcess server,
      RssSampler sampler,
      ServerApi api)
      throws Exception {
    warmUp(m, api);
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
            statuses,
            alone(demoRoot, m, request.rows()));
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

  /**
   * Unmeasured cycles of {@code m} on the server (load, requests at its largest batch, unload), so
   * that the JVM's first use of the code is behind the measured cycle, as in a server that has
   * served other models, and the server has readings of the model to take the median of; the server
   * measures the model again on the next load.
   */
  private void warmUp(BenchRepository.Model m, ServerApi api) throws Exception {
    for (int c = 0; c < Math.max(1, learningCycles); c++) {
      List<ServerApi.Input> inputs = api.inputs(m.name(), m.version());
      InferRequest request = InferRequest.of(m.name(), m.version(), inputs, m.rows(setup.rows));
      for (int i = 0; i < requests; i++) {
        api.infer(request);
      }
      api.unload(m.name());
    }
  }

  /**
   * Copies of {@code m} loaded at once when it runs alone: enough for a model under 1 MiB to move
   * RSS well past what the JVM's own activity does (400 copies of the tiny demo models add about 40
   * MB); one of a larger model.
   */
  private static int aloneCopies(BenchRepository.Model m) {
    return m.fileBytes() < (1 << 20) ? ALONE_COPIES_OF_SMALL_MODELS : 1;
  }

  /**
   * Runs {@link ModelAlone} on {@code m} in a JVM of its own with a fixed, pre-touched heap, and
   * reads its five RSS figures; null when it failed.
   */
  private Alone alone(Path demoRoot, BenchRepository.Model m, int rows) throws Exception {
    Path jar =
        Path.of(ModelAlone.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms256m",
                "-Xmx256m",
                "-XX:+AlwaysPreTouch",
                "-cp",
                jar.toString(),
                ModelAlone.class.getName(),
                demoRoot.toString(),
                m.id(),
                Integer.toString(rows),
                Integer.toString(requests),
                Integer.toString(aloneCopies(m)))
            .redirectErrorStream(true)
            .start();
    String out =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return null;
    }
    String[] last = out.strip().lines().reduce((a, b) -> b).orElse("").split(" ");
    if (p.exitValue() != 0 || last.length != 5) {
      LoadRun.log("%s alone failed (exit %d): %s", m.id(), p.exitValue(), out);
      return null;
    }
    long[] v = java.util.Arrays.stream(last).mapToLong(Long::parseLong).toArray();
    return new Alone(v[0], v[1], v[2], v[3], v[4]);
  }

  /** The server's measured figures beside the model alone in its own process. */
  private static String aloneTable(List<Row> rows) {
    StringBuilder sb =
        new StringBuilder(
            "\n#### Measured cost vs the model alone\n\nThe server's figures (registry"
                + " `measured_load_peak_bytes`, `measured_bytes`, `measured_working_bytes`"
                + " scaled to the batch) beside the same model loaded and run alone by `ModelAlone`"
                + " in a JVM of its own (heap fixed and touched up front, `-Xms256m -Xmx256m"
                + " -XX:+AlwaysPreTouch`, so only the model moves RSS; sampled every 200 µs),"
                + " same allocator settings, same batch. A model under 1 MiB is loaded there "
                + ALONE_COPIES_OF_SMALL_MODELS
                + " times over and its figures are per copy, since one copy moves RSS less than"
                + " the JVM does on its own. The server's figures are the median of its latest"
                + " load readings (it learned over the unmeasured cycles and the measured load);"
                + " its working figure is the most a run rose above the RSS just before it, the"
                + " median for a model under 1 MiB, and `ModelAlone` reads runs alike (0 B where"
                + " most runs of the copies moved RSS by less than a page). Amounts above the RSS"
                + " before"
                + " the load; working is the run peak minus idle. Target: each ratio within"
                + " 0.85-1.15.\n\n");
    sb.append(
        "| model | rows | load peak: server / alone | ratio | idle: server / alone | ratio |"
            + " working: server / alone | ratio | alone after close |\n");
    sb.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      Alone a = r.alone();
      ServerApi.Charge c = r.charge();
      if (a == null || c == null) {
        sb.append("| ").append(r.model().id()).append(" | n/a |||||||\n");
        continue;
      }
      long working =
          c.measuredWorkingBytes() < 0 || c.measuredWorkingRows() <= 0
              ? -1
              : (long)
                  Math.ceil(
                      (double) c.measuredWorkingBytes()
                          * Math.max(r.rows(), c.measuredWorkingRows())
                          / c.measuredWorkingRows());
      long aPeak = a.loadPeak() - a.before();
      long aIdle = a.idle() - a.before();
      long aWork = a.runPeak() - a.idle();
      sb.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %s / %s | %s | %s / %s | %s | %s / %s | %s | %s |\n",
              r.model().id(),
              r.rows(),
              amount(c.measuredLoadPeakBytes()),
              amount(aPeak),
              MemoryReport.ratio(c.measuredLoadPeakBytes(), aPeak),
              amount(c.measuredBytes()),
              amount(aIdle),
              MemoryReport.ratio(c.measuredBytes(), aIdle),
              amount(working),
              amount(aWork),
              MemoryReport.ratio(working, aWork),
              amount(a.afterClose() - a.before())));
    }
    return sb.toString();
  }

  /** A figure in the unit that reads best; n/a when unknown or negative. */
  private static String amount(long bytes) {
    return bytes >= 0 ? MemoryReport.size(bytes) : "n/a";
  }

  private static String statuses(Map<Integer, Long> statuses) {
    StringBuilder sb = new StringBuilder();
    statuses.forEach(
        (s, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(n).append("× ").append(s));
    return sb.toString();
  }
}
