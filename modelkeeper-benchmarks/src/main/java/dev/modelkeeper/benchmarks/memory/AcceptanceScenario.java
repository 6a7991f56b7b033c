package dev.modelkeeper.benchmarks.memory;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The memory cap's acceptance run: the server under test with {@code --max-memory} and several
 * copies of convnet, a few closed-loop clients rotating over them at batch 32. Fails (exit status
 * 1) when the server logs an {@code OutOfMemoryError} or exits. Not thread-safe; picocli calls it
 * once.
 */
@Command(
    name = "acceptance",
    mixinStandardHelpOptions = true,
    description =
        "Copies of convnet under the memory cap, closed-loop clients at their largest batch;"
            + " fails if the server logs OutOfMemoryError.")
final class AcceptanceScenario implements Callable<Integer> {

  @Mixin Setup setup;

  @Option(
      names = "--seconds",
      defaultValue = "180",
      description = "How long the clients run (default: ${DEFAULT-VALUE}).")
  int seconds;

  @Option(
      names = "--copies",
      defaultValue = "6",
      description = "Copies of convnet in the repository (default: ${DEFAULT-VALUE}).")
  int copies;

  @Option(
      names = "--clients",
      defaultValue = "3",
      description = "Closed-loop clients (default: ${DEFAULT-VALUE}).")
  int clients;

  @Override
  public Integer call() throws Exception {
    Instant started = Instant.now();
    String loadBefore = MemoryReport.loadAverage();
    List<String> flags = setup.capFlags();
    Path work = setup.work();
    Path repository =
        BenchRepository.build(setup.demo(), work.resolve("acceptance-repository"), copies, false);
    LoadRun.Result r =
        LoadRun.run(
            "under test",
            setup.jar,
            setup.heap,
            repository,
            flags,
            clients,
            Duration.ofSeconds(seconds),
            setup.rows,
            work.resolve("acceptance-logs"),
            setup.timeouts());
    boolean failed = !r.outOfMemory().isEmpty() || r.died();
    StringBuilder sb = new StringBuilder("### Acceptance: copies of convnet under the cap\n\n");
    sb.append(MemoryReport.preamble(started, loadBefore, setup.heap, setup.command())).append('\n');
    sb.append(copies)
        .append(" copies of `convnet` (")
        .append(MemoryReport.mib(BenchRepository.models(repository).get(0).fileBytes()))
        .append(" MiB each on disk), ")
        .append(clients)
        .append(" closed-loop clients each rotating over them with batch-")
        .append(BenchRepository.models(repository).get(0).rows(setup.rows))
        .append(" binary requests for ")
        .append(seconds)
        .append(" s; server `")
        .append(setup.capFlag)
        .append(' ')
        .append(setup.cap)
        .append("`. ")
        .append(backoffNote())
        .append("\n\n");
    sb.append(LoadRunTable.table(List.of(r)));
    sb.append(LoadRunTable.details(List.of(r)));
    sb.append("\nVerdict: ")
        .append(
            failed
                ? "**FAILED**: the server logged OutOfMemoryError or exited"
                : "no OutOfMemoryError logged")
        .append("; max RSS / limit ")
        .append(MemoryReport.ratio(r.maxRss(), r.limitBytes()))
        .append(r.maxRss() <= r.limitBytes() ? " (≤ 1.0, met).\n" : " (target ≤ 1.0).\n");
    String text = MemoryReport.save(setup.docs, sb.toString());
    System.out.println(sb);
    LoadRun.log(
        "wrote %s (%d characters)",
        setup.docs.resolve("bench").resolve(MemoryReport.FILE), text.length());
    return failed ? 1 : 0;
  }

  /** How the clients treat refusals, for every report of a closed-loop run. */
  static String backoffNote() {
    return "Clients do not retry: after a 503 or 429 a client waits what `Retry-After` says (at"
        + " most "
        + ClosedLoop.MAX_BACKOFF.toMillis()
        + " ms, "
        + ClosedLoop.DEFAULT_BACKOFF.toMillis()
        + " ms without one), then sends its next request to the next model. Latencies are of 200"
        + " answers.";
  }
}
