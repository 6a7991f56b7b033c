package dev.modelkeeper.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiFunction;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The benchmark command: {@code java -jar benchmarks.jar
 * [all|quick|hotpath|stampede|parallel|churn|diagnose] [--docs DIR] [--command TEXT] [--since
 * EPOCH_SECONDS]}. {@code all} runs everything with the published settings and rewrites {@code
 * DIR/BENCHMARKS.md} and its charts; {@code quick} runs everything briefly into {@code
 * target/bench-quick}; the others run one part and print it. Not thread-safe; it is the program's
 * entry point.
 */
public final class BenchMain {

  /**
   * The whole command, build included, should end within 15 minutes on a 2-core machine; the hot
   * path starts no round that would end after this much time since the command started.
   */
  static final Duration TIME_BOUND = Duration.ofMinutes(14);

  private BenchMain() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    Args a = Args.parse(args);
    String what = a.what;
    Path docs = a.docs;
    String command = a.command;
    Instant since = a.since != null ? Instant.ofEpochSecond(a.since) : Instant.now();
    Settings settings = what.equals("quick") ? Settings.QUICK : Settings.FULL;
    Path target = jarDirectory();
    Path out =
        what.equals("quick") ? target.resolve("bench-quick") : what.equals("all") ? docs : null;
    Path logs = target.resolve("bench-logs");
    Files.createDirectories(logs);
    System.out.println(
        "modelkeeper benchmarks ("
            + what
            + ", "
            + settings.name()
            + " settings) on "
            + Machine.summary());

    if (what.equals("diagnose")) {
      Diagnose.run(logs);
      return;
    }
    boolean every = what.equals("all") || what.equals("quick");
    List<HotPath.Figure> hot = new ArrayList<>();
    List<ColdLoads.Round> stampede = new ArrayList<>();
    List<ColdLoads.Round> parallel = new ArrayList<>();
    List<Churn.Result> churn = new ArrayList<>();
    Map<String, Double> background = new LinkedHashMap<>();
    if (every || what.equals("stampede")) {
      CpuSample before = CpuSample.now();
      stampede(settings, stampede);
      background.put("stampede", CpuSample.now().othersShareSince(before));
    }
    if (every || what.equals("parallel")) {
      CpuSample before = CpuSample.now();
      parallel(settings, parallel);
      background.put("parallel loads", CpuSample.now().othersShareSince(before));
    }
    if (every || what.equals("churn")) {
      CpuSample before = CpuSample.now();
      churn(settings, churn);
      background.put("churn", CpuSample.now().othersShareSince(before));
    }
    if (every || what.equals("hotpath")) {
      CpuSample before = CpuSample.now();
      hot.addAll(
          HotPath.run(
              settings.plan(),
              settings.hotThreads(),
              HotPath.IMPLS,
              logs.resolve("jmh"),
              since.plus(TIME_BOUND)));
      background.put("hot path", CpuSample.now().othersShareSince(before));
    }
    Results results = new Results(hot, stampede, parallel, churn, settings, background);
    String runtime = minutes(Duration.between(since, Instant.now()));
    Report.Context context =
        new Report.Context(
            DateTimeFormatter.ISO_INSTANT.format(
                Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)),
            command,
            runtime + (what.equals("all") ? "" : " (" + what + ")"),
            Machine.describe());
    String markdown = Report.markdown(results, context);
    if (out == null) {
      System.out.println(markdown);
      return;
    }
    Files.createDirectories(out);
    Files.writeString(
        out.resolve("BENCHMARKS.md"),
        Report.withSections(markdown, out.resolve("bench")),
        StandardCharsets.UTF_8);
    if (!hot.isEmpty()) {
      Charts.hotPath(results, out.resolve(Charts.HOT_PATH_PNG));
    }
    if (!churn.isEmpty()) {
      Charts.churn(results, out.resolve(Charts.CHURN_PNG));
    }
    System.out.println("\n== Targets ==");
    for (Report.Check c : Report.checks(results)) {
      System.out.println(c.verdict() + "\t" + c.target() + "\t" + c.measured());
    }
    System.out.println("\nwrote " + out.resolve("BENCHMARKS.md") + " and its charts in " + runtime);
  }

  private static void stampede(Settings s, List<ColdLoads.Round> out) throws InterruptedException {
    List<BiFunction<FakeWorld, Integer, Design>> designs = new ArrayList<>(designs());
    designs.add(Design::floor);
    for (BiFunction<FakeWorld, Integer, Design> d : designs) {
      for (int round = 0; round <= s.rounds(); round++) {
        ColdLoads.Round r = ColdLoads.stampede(s.stampedeThreads(), s.coldLoadMillis(), d);
        if (round > 0) {
          out.add(r); // round 0 warms the JIT up and is not reported
        }
        System.out.printf(
            Locale.ROOT,
            "stampede  %-26s round %d: %d constructor call(s), wall %.1f ms for a %.1f ms load, %d failed%n",
            r.design(),
            round + 1,
            r.constructorCalls(),
            r.wallNanos() / 1e6,
            r.loadNanos() / 1e6,
            r.failures());
      }
    }
  }

  private static void parallel(Settings s, List<ColdLoads.Round> out) throws InterruptedException {
    for (BiFunction<FakeWorld, Integer, Design> d : designs()) {
      for (int round = 0; round <= s.rounds(); round++) {
        ColdLoads.Round r = ColdLoads.parallel(s.parallelModels(), s.coldLoadMillis(), d);
        if (round > 0) {
          out.add(r); // round 0 warms the JIT up and is not reported
        }
        System.out.printf(
            Locale.ROOT,
            "parallel  %-26s round %d: %d constructor call(s), wall %.1f ms = %.2fx one load, %d failed%n",
            r.design(),
            round + 1,
            r.constructorCalls(),
            r.wallNanos() / 1e6,
            r.wallOverLoad(),
            r.failures());
      }
    }
  }

  private static void churn(Settings s, List<Churn.Result> out) throws InterruptedException {
    for (int threads : s.churnThreads()) {
      for (BiFunction<FakeWorld, Integer, Design> d : designs()) {
        Churn.Result r = Churn.run(s.churn(), threads, d);
        out.add(r);
        System.out.printf(
            Locale.ROOT,
            "churn     %-26s %d threads: %.0f good req/s, p99 %.2f ms, failed %d, cleared in use %d, loads %d, evictions %d, dup %d, live peak %d mean %.2f%n",
            r.design(),
            threads,
            r.throughput(),
            r.p99() / 1e6,
            r.failed(),
            r.clearedInUse(),
            r.loads(),
            r.evictions(),
            r.duplicateConstructors(),
            r.maxLive(),
            r.meanLive());
      }
    }
  }

  private static List<BiFunction<FakeWorld, Integer, Design>> designs() {
    return List.of(Design::modelKeeper, Design::caffeine, Design::oneLock);
  }

  /** The command line, parsed with picocli. */
  @Command(name = "java -jar benchmarks.jar", sortOptions = false)
  static final class Args {
    @Parameters(
        index = "0",
        arity = "0..1",
        paramLabel = "PART",
        description =
            "all (the published settings; rewrites DIR/BENCHMARKS.md and its charts), quick"
                + " (everything briefly, into target/bench-quick), or one part: hotpath,"
                + " stampede, parallel, churn, diagnose (default: ${DEFAULT-VALUE}).")
    String what = "all";

    @Option(
        names = "--docs",
        paramLabel = "DIR",
        description = "Where 'all' writes (default: ${DEFAULT-VALUE}).")
    Path docs = Path.of("docs");

    @Option(
        names = "--command",
        paramLabel = "TEXT",
        description = "The command the report says produced it.")
    String command = "java -jar modelkeeper-benchmarks/target/benchmarks.jar all";

    @Option(
        names = "--since",
        paramLabel = "EPOCH_SECONDS",
        description = "When the command started (its build included); default: now.")
    Long since;

    @Option(
        names = {"-h", "--help"},
        usageHelp = true,
        description = "Show this help and exit.")
    boolean help;

    private static final List<String> PARTS =
        List.of("all", "quick", "hotpath", "stampede", "parallel", "churn", "diagnose");

    /** Parses {@code args}; prints the usage and exits when asked to or when they are wrong. */
    static Args parse(String[] args) {
      Args a = new Args();
      CommandLine cli = new CommandLine(a);
      RunOptions.parseOrExit(
          cli,
          args,
          () -> {
            if (!PARTS.contains(a.what)) {
              throw new CommandLine.ParameterException(
                  cli, "unknown part '" + a.what + "'; one of " + String.join(", ", PARTS));
            }
          });
      return a;
    }
  }

  private static String minutes(Duration d) {
    return String.format(Locale.ROOT, "%d min %02d s", d.toMinutes(), d.toSecondsPart());
  }

  /**
   * The folder of the running jar (its {@code target/}), or the working directory when run from
   * classes.
   */
  private static Path jarDirectory() throws IOException {
    try {
      Path p = Path.of(BenchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return p.getParent();
    } catch (java.net.URISyntaxException | SecurityException e) {
      return Path.of(".").toAbsolutePath();
    }
  }
}
