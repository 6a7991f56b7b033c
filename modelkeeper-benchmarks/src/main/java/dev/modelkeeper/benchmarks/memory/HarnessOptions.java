package dev.modelkeeper.benchmarks.memory;

import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options every harness that starts server jars shares, with the same defaults (a picocli
 * mixin): how long a server may take to get ready, and the command the report shows. The memory
 * scenarios get it through {@link Setup}, the jar comparison directly. Filled by picocli, then read
 * on the harness thread; not thread-safe.
 */
public final class HarnessOptions {

  @Option(
      names = "--ready-timeout",
      paramLabel = "SECONDS",
      defaultValue = "120",
      description = "How long a server may take to print Ready. (default: ${DEFAULT-VALUE}).")
  int readySeconds;

  @Option(
      names = "--command",
      paramLabel = "TEXT",
      description = "The command written into the report (default: this harness's arguments).")
  String command;

  /** {@code --ready-timeout} in seconds. */
  public int readySeconds() {
    return readySeconds;
  }

  /** {@code --ready-timeout}. */
  public Duration ready() {
    return Duration.ofSeconds(readySeconds);
  }

  /**
   * The command for the report: {@code --command}, else {@code java -cp} the benchmarks jar, {@code
   * mainClass} and {@code args}.
   */
  public String command(String mainClass, List<String> args) {
    return command != null
        ? command
        : "java -cp modelkeeper-benchmarks/target/benchmarks.jar "
            + mainClass
            + " "
            + String.join(" ", args);
  }
}
