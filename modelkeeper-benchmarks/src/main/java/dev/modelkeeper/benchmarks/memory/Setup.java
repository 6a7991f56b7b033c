package dev.modelkeeper.benchmarks.memory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The options every scenario shares (a picocli mixin): where the jars, the demo models and the
 * reports are, the server's heap and memory cap, and the harness's timeouts ({@link HarnessOptions}
 * holds those the jar comparison shares too). Filled by picocli, then read by one scenario on the
 * harness thread; not thread-safe.
 */
final class Setup {

  @Option(
      names = "--jar",
      paramLabel = "PATH",
      defaultValue = "modelkeeper-cli/target/modelkeeper.jar",
      description =
          "The server jar under test, built from the work tree (default: ${DEFAULT-VALUE}).")
  Path jar;

  @Option(
      names = "--docs",
      paramLabel = "DIR",
      defaultValue = "docs",
      description =
          "Where bench/memory.md, bench/memory-rss.png and BENCHMARKS.md's Memory section are"
              + " written (default: ${DEFAULT-VALUE}).")
  Path docs;

  @Option(
      names = "--demo",
      paramLabel = "DIR",
      defaultValue = "${sys:user.home}/.cache/modelkeeper/demo-repository",
      description =
          "The demo repository, written there first when missing (default: ${DEFAULT-VALUE}).")
  Path demo;

  @Option(
      names = "--work",
      paramLabel = "DIR",
      description =
          "Where benchmark repositories and server logs go (default: a new temporary folder).")
  Path work;

  @Option(
      names = "--heap",
      paramLabel = "SIZE",
      defaultValue = "256m",
      description = "The servers' -Xmx (default: ${DEFAULT-VALUE}).")
  String heap;

  @Option(
      names = "--cap",
      paramLabel = "SIZE",
      defaultValue = "768MiB",
      description = "The memory cap given to the server under test (default: ${DEFAULT-VALUE}).")
  String cap;

  @Option(
      names = "--cap-flag",
      paramLabel = "FLAG",
      defaultValue = "--max-memory",
      description =
          "The server option that takes --cap (default: ${DEFAULT-VALUE}); e.g. --max-bytes to"
              + " drive a jar that has no memory cap.")
  String capFlag;

  @Option(
      names = "--server-flag",
      paramLabel = "FLAG",
      description =
          "An extra option for the server under test, e.g. --server-flag=--max-models=16;"
              + " repeatable.")
  List<String> serverFlags = new ArrayList<>();

  @Option(
      names = "--rows",
      paramLabel = "N",
      defaultValue = "32",
      description =
          "Rows per request for models whose config.json sets no max_batch_size"
              + " (default: ${DEFAULT-VALUE}).")
  int rows;

  @Option(
      names = "--request-timeout",
      paramLabel = "SECONDS",
      defaultValue = "120",
      description = "How long one HTTP answer may take (default: ${DEFAULT-VALUE}).")
  int requestSeconds;

  @Mixin HarnessOptions harness;

  /** The scenario this is mixed into. */
  @Spec(Spec.Target.MIXEE)
  CommandSpec scenario;

  LoadRun.Timeouts timeouts() {
    return new LoadRun.Timeouts(harness.ready(), Duration.ofSeconds(requestSeconds));
  }

  /** The work folder, created when not given. */
  Path work() throws IOException {
    if (work == null) {
      work = Files.createTempDirectory("modelkeeper-memory-bench");
    }
    return Files.createDirectories(work);
  }

  /** The demo repository, materialized when missing. */
  Path demo() {
    return BenchRepository.demo(demo);
  }

  /** The flags of the server under test: the cap, then every {@code --server-flag}. */
  List<String> capFlags() throws IOException, InterruptedException {
    requireFlag(jar, capFlag, "--cap-flag=--max-bytes");
    List<String> flags = new ArrayList<>(List.of(capFlag, cap));
    flags.addAll(serverFlags);
    return flags;
  }

  /**
   * Fails with advice when {@code jar}'s {@code serve --help} does not list {@code flag}.
   *
   * @throws IllegalArgumentException naming the jar, the flag and what to pass instead
   */
  static void requireFlag(Path jar, String flag, String instead)
      throws IOException, InterruptedException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException(
          "no server jar at " + jar.toAbsolutePath() + " (build it: scripts/bench-memory.sh does)");
    }
    if (!ServerProcess.knowsFlag(jar, flag)) {
      throw new IllegalArgumentException(
          jar
              + " does not know "
              + flag
              + " (its `serve --help` does not list it): it predates that option. Pass the jar"
              + " built from the work tree, or run it with "
              + instead
              + " to drive it without "
              + flag
              + ".");
    }
  }

  /** The command for the report: {@code --command}, else the harness's own arguments. */
  String command() {
    return harness.command(
        MemoryBench.class.getName(), scenario.root().commandLine().getParseResult().originalArgs());
  }
}
