package dev.modelkeeper.benchmarks.memory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Workload 11's memory churn: the same closed-loop workload (convnet copies and the small models at
 * their largest batch) on the server under test with its memory cap and on the baseline jar with
 * its file-size budget, back to back (under test first) on a fresh copy of the repository each.
 * Draws both runs' RSS over time with the limits into {@code memory-rss.png}. Not thread-safe;
 * picocli calls it once.
 */
@Command(
    name = "churn",
    mixinStandardHelpOptions = true,
    description =
        "The memory cap (jar under test) vs the file-size budget (baseline jar) on one workload,"
            + " back to back.")
final class ChurnScenario implements Callable<Integer> {

  @Mixin Setup setup;

  @Option(
      names = "--baseline-jar",
      paramLabel = "PATH",
      required = true,
      description = "The released jar, which has only the file-size budget.")
  Path baselineJar;

  @Option(
      names = "--budget",
      paramLabel = "SIZE",
      defaultValue = "300MB",
      description =
          "The baseline's file-size budget; the default fits 4 convnets by file size"
              + " (default: ${DEFAULT-VALUE}).")
  String budget;

  @Option(
      names = "--budget-flag",
      paramLabel = "FLAG",
      defaultValue = "--max-bytes",
      description = "The baseline option that takes --budget (default: ${DEFAULT-VALUE}).")
  String budgetFlag;

  @Option(
      names = "--baseline-flag",
      paramLabel = "FLAG",
      description = "An extra option for the baseline server; repeatable.")
  List<String> baselineFlags = new ArrayList<>();

  @Option(
      names = "--seconds",
      defaultValue = "600",
      description = "How long the clients run against each server (default: ${DEFAULT-VALUE}).")
  int seconds;

  @Option(
      names = "--copies",
      defaultValue = "4",
      description = "Copies of convnet beside the small models (default: ${DEFAULT-VALUE}).")
  int copies;

  @Option(
      names = "--clients",
      defaultValue = "3",
      description = "Closed-loop clients, 2 to 4 in the design (default: ${DEFAULT-VALUE}).")
  int clients;

  @Override
  public Integer call() throws Exception {
    Instant started = Instant.now();
    String loadBefore = MemoryReport.loadAverage();
    List<String> testFlags = setup.capFlags();
    Setup.requireFlag(baselineJar, budgetFlag, "--budget-flag=<an option it has>");
    List<String> baseFlags = new ArrayList<>(List.of(budgetFlag, budget));
    baseFlags.addAll(baselineFlags);
    Path work = setup.work();
    Path demo = setup.demo();
    Duration length = Duration.ofSeconds(seconds);
    LoadRun.Result test =
        LoadRun.run(
            "under test (" + setup.capFlag + " " + setup.cap + ")",
            setup.jar,
            setup.heap,
            BenchRepository.build(demo, work.resolve("churn-repository-test"), copies, true),
            testFlags,
            clients,
            length,
            setup.rows,
            work.resolve("churn-logs-test"),
            setup.timeouts());
    LoadRun.Result base =
        LoadRun.run(
            "baseline (" + budgetFlag + " " + budget + ")",
            baselineJar,
            setup.heap,
            BenchRepository.build(demo, work.resolve("churn-repository-baseline"), copies, true),
            baseFlags,
            clients,
            length,
            setup.rows,
            work.resolve("churn-logs-baseline"),
            setup.timeouts());
    List<LoadRun.Result> runs = List.of(test, base);
    Path chart = Files.createDirectories(setup.docs.resolve("bench")).resolve(MemoryReport.CHART);
    RssChart.write(
        chart,
        String.format(
            Locale.ROOT,
            "Memory churn: server RSS, %d convnet copies + small models, %d clients, -Xmx%s",
            copies,
            clients,
            setup.heap),
        List.of(
            new RssChart.Line(test.label(), test.millis(), test.rss()),
            new RssChart.Line(base.label(), base.millis(), base.rss())),
        List.of(
            new RssChart.Limit(
                "limit of the run under test: " + setup.capFlag + " " + setup.cap,
                test.limitBytes(),
                0),
            new RssChart.Limit(
                "limit of the baseline: " + budgetFlag + " " + budget, base.limitBytes(), 1)));

    StringBuilder sb = new StringBuilder("### Churn: memory cap vs file-size budget\n\n");
    sb.append(MemoryReport.preamble(started, loadBefore, setup.heap, setup.command())).append('\n');
    sb.append(copies)
        .append(" copies of `convnet` and the demo's small models, ")
        .append(clients)
        .append(
            " closed-loop clients rotating over all of them, each request at the model's largest")
        .append(" batch (its `max_batch_size`, else ")
        .append(setup.rows)
        .append(" rows), binary tensors in and out, ")
        .append(seconds)
        .append(" s per server. The two servers ran back to back, the one under test first, each")
        .append(" alone on the machine with a fresh copy of the repository. ")
        .append(AcceptanceScenario.backoffNote())
        .append(" The limit is the server's own figure for it.\n\n");
    sb.append(LoadRunTable.table(runs));
    sb.append(LoadRunTable.details(runs));
    sb.append("\n![RSS over time](").append(MemoryReport.CHART).append(")\n\n");
    double throughput =
        (test.load().ok() / test.load().seconds()) / (base.load().ok() / base.load().seconds());
    sb.append("Verdicts against the design's targets:\n\n");
    sb.append("- max RSS / cap ≤ 1.0 under the churn: ")
        .append(MemoryReport.ratio(test.maxRss(), test.limitBytes()))
        .append(test.maxRss() <= test.limitBytes() ? ", met.\n" : ", MISSED.\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "- throughput (200 answers/s) within 10%% of the file-size budget's run: %.2fx, %s.\n",
            throughput,
            throughput >= 0.9 ? "met" : "MISSED"));
    sb.append("- the baseline's max RSS / its budget: ")
        .append(MemoryReport.ratio(base.maxRss(), base.limitBytes()))
        .append(" (what charging file sizes lets the process grow to).\n");
    MemoryReport.save(setup.docs, sb.toString());
    System.out.println(sb);
    LoadRun.log("wrote %s and %s", setup.docs.resolve("bench").resolve(MemoryReport.FILE), chart);
    return test.outOfMemory().isEmpty() && !test.died() ? 0 : 1;
  }
}
