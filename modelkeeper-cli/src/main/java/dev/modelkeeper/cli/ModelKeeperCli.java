package dev.modelkeeper.cli;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The {@code modelkeeper} command line: {@code modelkeeper serve [options]}. Every option of a
 * subcommand can also be set with an environment variable {@code MODELKEEPER_<NAME>} (for {@code
 * --max-bytes}: {@code MODELKEEPER_MAX_BYTES}); a flag wins over the variable. The options of a
 * server setting start at the settings records' defaults, so the help, the server and
 * docs/CONFIGURATION.md's table (checked by a test) say the same. Not thread-safe: one instance
 * parses one command line.
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

  /**
   * A command line reading defaults from {@code env} and printing to {@code out} and {@code err}.
   */
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
    Converters.register(cl);
    cl.setParameterExceptionHandler(badValues(env, err, cl.getParameterExceptionHandler()));
    cl.setDefaultValueProvider(
        argSpec -> {
          String fromEnv = fromEnvironment(env, argSpec);
          return fromEnv != null ? fromEnv : serverDefault(argSpec);
        });
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

  /**
   * The default of {@code argSpec} when it is a server setting, written as the option takes it
   * ({@code 60s}, {@code 32MiB}, {@code 8}): its field's initial value, which the options take from
   * the settings records' defaults. Null when it has none (null, an empty list).
   */
  static String serverDefault(ArgSpec argSpec) {
    if (!(argSpec instanceof OptionSpec)) {
      return null;
    }
    OptionSpec option = (OptionSpec) argSpec;
    Object value = option.initialValue();
    if (value == null || value instanceof Collection && ((Collection<?>) value).isEmpty()) {
      return null;
    }
    if (value instanceof Duration) {
      Duration d = (Duration) value;
      return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
    if (value instanceof Collection) {
      return String.join(",", ((Collection<?>) value).stream().map(String::valueOf).toList());
    }
    if (value instanceof Long && "SIZE".equals(option.paramLabel())) {
      return sizeText((Long) value);
    }
    return String.valueOf(value);
  }

  /** {@code bytes} in the largest binary unit that divides it: {@code 32MiB}, {@code 1000}. */
  private static String sizeText(long bytes) {
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    String text = Long.toString(bytes);
    long unit = 1024;
    for (String name : units) {
      if (bytes == 0 || bytes % unit != 0) {
        break;
      }
      text = bytes / unit + name;
      unit *= 1024;
    }
    return text;
  }

  /**
   * A value an option cannot take, said the way a bad setting is: {@code invalid --max-bytes:
   * 'lots' is not a size ...}, naming the environment variable when the value came from there.
   * Other command-line mistakes go to picocli's own handler (the message and the usage).
   */
  private static CommandLine.IParameterExceptionHandler badValues(
      Map<String, String> env, PrintWriter err, CommandLine.IParameterExceptionHandler others) {
    return (e, args) -> {
      if (!(e.getCause() instanceof CommandLine.TypeConversionException)
          || !(e.getArgSpec() instanceof OptionSpec)) {
        return others.handleParseException(e, args);
      }
      String flag = ((OptionSpec) e.getArgSpec()).longestName();
      String variable = variable(flag);
      boolean fromEnv =
          env.containsKey(variable)
              && Arrays.stream(args).noneMatch(a -> a.equals(flag) || a.startsWith(flag + "="));
      err.println(
          "modelkeeper "
              + e.getCommandLine().getCommandName()
              + ": invalid "
              + (fromEnv ? variable + " (" + flag + ")" : flag)
              + ": "
              + e.getCause().getMessage());
      return BAD_CONFIG;
    };
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
