package dev.modelkeeper.benchmarks.memory;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The memory benchmark (workloads 11 and 6 of the design's BENCHMARKS.md): drives packaged server
 * jars as child processes over loopback, samples their RSS from /proc, and writes {@code
 * docs/bench/memory.md}, {@code docs/bench/memory-rss.png} and the {@code ## Memory} section of
 * {@code docs/BENCHMARKS.md}. One scenario per subcommand: {@code acceptance}, {@code churn},
 * {@code per-model}, {@code cycles}. Not thread-safe; it is a program's entry point.
 *
 * <p>{@code java -cp modelkeeper-benchmarks/target/benchmarks.jar
 * dev.modelkeeper.benchmarks.memory.MemoryBench churn --baseline-jar /tmp/before.jar --seconds 20
 * --docs /tmp/out}
 */
@Command(
    name = "memory-bench",
    mixinStandardHelpOptions = true,
    description =
        "Server memory under load: the server jars run as child processes on loopback, their RSS"
            + " sampled from /proc every 100 ms.",
    subcommands = {
      AcceptanceScenario.class,
      ChurnScenario.class,
      PerModelScenario.class,
      CyclesScenario.class
    })
public final class MemoryBench implements Runnable {

  private MemoryBench() {}

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        new CommandLine(this), "name a scenario: acceptance, churn, per-model or cycles");
  }

  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    // scripts/bench-memory.sh passes --jar and --command first; a user's own value comes later and
    // wins
    CommandLine cli = new CommandLine(new MemoryBench()).setOverwrittenOptionsAllowed(true);
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof IllegalArgumentException) {
            commandLine.getErr().println("memory-bench: " + e.getMessage());
            return 2;
          }
          throw e;
        });
    System.exit(cli.execute(args));
  }
}
