package dev.modelkeeper.cli;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The {@code modelkeeper} command line: {@code modelkeeper serve [options]}. Every option of a
 * subcommand can also be set with an environment variable {@code MODELKEEPER_<NAME>} (for {@code
 * --max-bytes}: {@code MODELKEEPER_MAX_BYTES}); a flag wins over the variable. Not thread-safe: one
 * instance parses one command line.
 */
@Command(
    name = "modelkeeper",
    mixinStandardHelpOptions = true,
    versionProvider = ModelKeeperCli.Version.class,
    description = "Keeps machine-learning models resident and serves them over HTTP.",
    subcommands = {ServeCommand.class, CommandLine.HelpCommand.class})
public final class ModelKeeperCli implements Runnable {

  /** Exit code for a bad command line or configuration. */
  static final int BAD_CONFIG = 2;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Logging.bridgeJavaUtilLogging();
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    int code = commandLine(System.getenv(), out, err).execute(args);
    System.exit(code); // also after a graceful stop: no stray thread keeps the process alive
  }

  /** A command line reading defaults from {@code env} and printing to {@code out} and {@code err}. */
  static CommandLine commandLine(Map<String, String> env, PrintWriter out, PrintWriter err) {
    CommandLine.IFactory defaults = CommandLine.defaultFactory();
    CommandLine cl =
        new CommandLine(
            new ModelKeeperCli(),
            new CommandLine.IFactory() {
              @Override
              public <K> K create(Class<K> type) throws Exception {
                if (type == ServeCommand.class) {
                  return type.cast(new ServeCommand(env, out, err));
                }
                return defaults.create(type);
              }
            });
    cl.setOut(out);
    cl.setErr(err);
    cl.setDefaultValueProvider(argSpec -> fromEnvironment(env, argSpec));
    cl.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof ConfigException) {
            err.println("modelkeeper " + commandLine.getCommandName() + ": " + e.getMessage());
            return BAD_CONFIG;
          }
          throw e;
        });
    return cl;
  }

  /** The environment variable that sets {@code option}, e.g. {@code MODELKEEPER_MAX_BYTES}. */
  static String variable(String option) {
    return "MODELKEEPER_"
        + option.replaceFirst("^-+", "").toUpperCase(Locale.ROOT).replace('-', '_');
  }

  private static String fromEnvironment(Map<String, String> env, ArgSpec argSpec) {
    if (!(argSpec instanceof OptionSpec)) {
      return null;
    }
    OptionSpec option = (OptionSpec) argSpec;
    if (option.usageHelp() || option.versionHelp()) {
      return null;
    }
    String value = env.get(variable(option.longestName()));
    return value == null || value.isBlank() ? null : value;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "name a command, e.g. 'serve'");
  }

  /** The version from the jar's manifest. Stateless and thread-safe. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = ModelKeeperCli.class.getPackage().getImplementationVersion();
      return new String[] {"modelkeeper " + (v != null ? v : "(development build)")};
    }
  }
}
