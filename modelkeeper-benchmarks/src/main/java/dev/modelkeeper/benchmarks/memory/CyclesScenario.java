package dev.modelkeeper.benchmarks.memory;

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
 * Workload 6, memory return: load, one inference and unload of one model, many times over, through
 * the repository extension; RSS after the first unload and after the last (each after a quiet
 * pause, for the allocator's trims) and the drift between them. Not thread-safe; picocli calls it
 * once.
 */
@Command(
    name = "cycles",
    mixinStandardHelpOptions = true,
    description =
        "Load / infer / unload cycles of one model: RSS after the first and the last unload.")
final class CyclesScenario implements Callable<Integer> {

  @Mixin Setup setup;

  @Option(
      names = "--cycles",
      defaultValue = "1000",
      description = "Load/unload cycles (default: ${DEFAULT-VALUE}).")
  int cycles;

  @Option(
      names = "--model",
      defaultValue = "convnet",
      description = "The demo model cycled (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(
      names = "--cycle-rows",
      defaultValue = "1",
      description = "Rows of the inference in each cycle (default: ${DEFAULT-VALUE}).")
  int cycleRows;

  @Option(
      names = "--quiet-seconds",
      defaultValue = "3",
      description =
          "Pause after the first and the last unload before reading RSS (default: ${DEFAULT-VALUE}).")
  int quietSeconds;

  @Override
  public Integer call() throws Exception {
    if (cycles < 1) {
      throw new IllegalArgumentException("--cycles must be at least 1, was " + cycles);
    }
    Instant started = Instant.now();
    String loadBefore = MemoryReport.loadAverage();
    List<String> flags = setup.capFlags();
    Path demo = setup.demo();
    BenchRepository.Model m =
        BenchRepository.models(demo).stream()
            .filter(x -> x.name().equals(model))
            .reduce((a, b) -> b) // the latest version, the one the repository extension loads
            .orElseThrow(() -> new IllegalArgumentException("no model '" + model + "' in " + demo));
    Path logs = setup.work().resolve("cycles-logs");
    Map<String, Long> statuses = new TreeMap<>();
    List<long[]> checkpoints = new ArrayList<>(); // {cycle, RSS right after its unload}
    long ready;
    long first;
    long last;
    double seconds;
    boolean failed;
    List<String> command;
    double loads;
    try (ServerProcess server =
            ServerProcess.start(
                setup.jar, setup.heap, demo, flags, logs, setup.timeouts().ready());
        RssSampler sampler = new RssSampler(server.pid());
        ServerApi api = new ServerApi(server.port(), setup.timeouts().request())) {
      command = server.commandLine();
      TimeUnit.SECONDS.sleep(quietSeconds);
      ready = sampler.now();
      InferRequest request =
          InferRequest.of(m.name(), m.version(), api.inputs(m.name(), m.version()), cycleRows);
      count(statuses, "unload", api.unload(m.name()));
      double loadsBefore = ServerApi.sum(api.metrics(), "modelkeeper_model_loads_total");
      long start = System.nanoTime();
      first = -1;
      int every = Math.max(1, cycles / 10);
      for (int i = 1; i <= cycles; i++) {
        count(statuses, "load", api.load(m.name()));
        count(statuses, "infer", api.infer(request).status());
        count(statuses, "unload", api.unload(m.name()));
        if (i == 1) {
          TimeUnit.SECONDS.sleep(quietSeconds);
          first = sampler.now();
          LoadRun.log(
              "cycle 1: RSS %s MiB after the unload and %d s",
              MemoryReport.mib(first), quietSeconds);
        }
        if (i > 1 && (i % every == 0 || i == cycles)) {
          checkpoints.add(new long[] {i, sampler.now()});
          LoadRun.log(
              "cycle %d: RSS %s MiB right after the unload", i, MemoryReport.mib(sampler.now()));
        }
      }
      seconds = (System.nanoTime() - start) / 1e9;
      TimeUnit.SECONDS.sleep(quietSeconds);
      last = sampler.now();
      loads = ServerApi.sum(api.metrics(), "modelkeeper_model_loads_total") - loadsBefore;
      failed = !server.outOfMemoryLines().isEmpty() || !server.isAlive();
    }
    double drift = (last - first) / (1024.0 * 1024.0);
    StringBuilder sb = new StringBuilder("### Load/unload cycles (memory return)\n\n");
    sb.append(MemoryReport.preamble(started, loadBefore, setup.heap, setup.command())).append('\n');
    sb.append(
        String.format(
            Locale.ROOT,
            "%d cycles of `%s` (%s MiB on disk) on one server (`%s`): `POST"
                + " /v2/repository/models/%s/load`, one binary inference of %d row(s), `.../unload`;"
                + " %.1f s, %.0f ms per cycle, %.0f loads counted by the server. Requests by"
                + " step and status: %s.\n\n",
            cycles,
            m.id(),
            MemoryReport.mib(m.fileBytes()),
            String.join(" ", command),
            m.name(),
            cycleRows,
            seconds,
            seconds * 1000 / cycles,
            loads,
            statuses));
    sb.append("| reading | RSS MiB |\n|---|---:|\n");
    sb.append("| ready, before any load (")
        .append(quietSeconds)
        .append(" s after `Ready.`) | ")
        .append(MemoryReport.mib(ready))
        .append(" |\n");
    sb.append("| after the first unload (+")
        .append(quietSeconds)
        .append(" s) | ")
        .append(MemoryReport.mib(first))
        .append(" |\n");
    for (long[] c : checkpoints) {
      sb.append("| right after unload ")
          .append(c[0])
          .append(" | ")
          .append(MemoryReport.mib(c[1]))
          .append(" |\n");
    }
    sb.append("| after the last unload (+")
        .append(quietSeconds)
        .append(" s) | ")
        .append(MemoryReport.mib(last))
        .append(" |\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "\nDrift, last minus first unload: %+.1f MiB over %d cycles (%+.1f KiB per cycle).\n",
            drift,
            cycles,
            cycles > 1 ? drift * 1024 / (cycles - 1) : 0.0));
    if (failed) {
      sb.append("\n**The server logged OutOfMemoryError or exited; see ")
          .append(logs)
          .append(".**\n");
    }
    MemoryReport.save(setup.docs, sb.toString());
    System.out.println(sb);
    return failed ? 1 : 0;
  }

  private static void count(Map<String, Long> statuses, String step, int status) {
    statuses.merge(step + " " + status, 1L, Long::sum);
  }
}
