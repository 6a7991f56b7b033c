package dev.modelkeeper.cli;

import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.server.config.ServerConfig;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The {@code modelkeeper} command line: {@code modelkeeper serve [options]}. Every option of a
 * subcommand can also be set with an environment variable {@code MODELKEEPER_<NAME>} (for {@code
 * --max-bytes}: {@code MODELKEEPER_MAX_BYTES}); a flag wins over the variable. An option that is a
 * {@link ServerConfig} setting (its getter named like the option: {@code --max-bytes} is {@code
 * maxBytes()}) takes its default from {@code ServerConfig}, so the help, the server and the
 * README's table (checked by a test) say the same. Not thread-safe: one instance parses one command
 * line.
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
   * The default of {@code argSpec} when it is a {@link ServerConfig} setting, written as the option
   * takes it ({@code 60s}, {@code 32MiB}, {@code 8}); null when it is not a setting (or not a plain
   * value: a string, number, boolean, duration or list) or has no default (null, an empty list).
   */
  static String serverDefault(ArgSpec argSpec) {
    if (!(argSpec instanceof OptionSpec)) {
      return null;
    }
    OptionSpec option = (OptionSpec) argSpec;
    String[] words = option.longestName().replaceFirst("^-+", "").split("-");
    StringBuilder getter = new StringBuilder(words[0]);
    for (int i = 1; i < words.length; i++) {
      getter.append(Character.toUpperCase(words[i].charAt(0))).append(words[i].substring(1));
    }
    Method method;
    try {
      method = ServerConfig.class.getMethod(getter.toString());
    } catch (NoSuchMethodException e) {
      return null;
    }
    Object value;
    try {
      value = method.invoke(DefaultConfig.INSTANCE);
    } catch (IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException("cannot read ServerConfig." + getter + "()", e);
    }
    if (value == null || (value instanceof Collection && ((Collection<?>) value).isEmpty())) {
      return null;
    }
    if (!(value instanceof String
        || value instanceof Number
        || value instanceof Boolean
        || value instanceof Duration
        || value instanceof Collection)) {
      return null; // not a setting a flag can write, e.g. the repository
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

  /** The defaults of {@link ServerConfig}: a config built from nothing but a placeholder. */
  private static final class DefaultConfig {
    static final ServerConfig INSTANCE = ServerConfig.builder(new NoRepository()).build();
  }

  /** Stands in for the repository in {@link DefaultConfig}; never asked for models. */
  private static final class NoRepository implements ModelRepository {
    @Override
    public List<RepositoryEntry> list() {
      return List.of();
    }

    @Override
    public RepositoryEntry locate(ModelId id) {
      throw new UnsupportedOperationException("placeholder repository");
    }

    @Override
    public ModelArtifact fetch(ModelId id) {
      throw new UnsupportedOperationException("placeholder repository");
    }

    @Override
    public String location() {
      return "(none)";
    }
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
