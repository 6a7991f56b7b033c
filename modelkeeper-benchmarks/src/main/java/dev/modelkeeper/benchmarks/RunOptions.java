package dev.modelkeeper.benchmarks;

import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The options the report-writing harnesses share (where the report goes, how many interleaved
 * rounds, how long each cell loads, the command the report names), parsed with picocli. {@code
 * --help} prints the usage; a bad option prints why and the usage and exits with status 2. Not
 * thread-safe; parsed once at startup.
 */
@Command(sortOptions = false)
final class RunOptions {

  @Option(
      names = "--docs",
      paramLabel = "DIR",
      description = "Where the report is written (default: ${DEFAULT-VALUE}).")
  Path docs = Path.of("docs");

  @Option(
      names = "--rounds",
      paramLabel = "N",
      description = "Interleaved rounds (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Option(
      names = "--seconds",
      paramLabel = "S",
      description = "Seconds of load per measured cell (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Option(
      names = "--command",
      paramLabel = "TEXT",
      description = "The command the report says produced it (default: ${DEFAULT-VALUE}).")
  String command;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  /**
   * The options of program {@code name} in {@code args}, with {@code rounds}, {@code seconds} and
   * {@code command} as defaults; exits after printing the usage when asked for it or when {@code
   * args} are wrong.
   */
  static RunOptions parse(String name, String[] args, int rounds, double seconds, String command) {
    RunOptions o = new RunOptions();
    o.rounds = rounds;
    o.seconds = seconds;
    o.command = command;
    CommandLine cli = new CommandLine(o).setCommandName(name);
    parseOrExit(
        cli,
        args,
        () -> {
          if (o.rounds < 1) {
            throw new CommandLine.ParameterException(cli, "--rounds must be at least 1");
          }
          if (!(o.seconds > 0)) {
            throw new CommandLine.ParameterException(cli, "--seconds must be more than 0");
          }
        });
    return o;
  }

  /**
   * Parses {@code args} into {@code cli}'s command, then runs {@code check}. Prints the usage and
   * exits with 0 when asked for it; prints why and the usage and exits with 2 when {@code args} are
   * wrong or {@code check} throws a {@link CommandLine.ParameterException}.
   */
  static void parseOrExit(CommandLine cli, String[] args, Runnable check) {
    try {
      cli.parseArgs(args);
      if (cli.isUsageHelpRequested()) {
        cli.usage(System.out);
        System.exit(0);
      }
      check.run();
    } catch (CommandLine.ParameterException e) {
      System.err.println(e.getMessage());
      cli.usage(System.err);
      System.exit(2);
    }
  }
}
