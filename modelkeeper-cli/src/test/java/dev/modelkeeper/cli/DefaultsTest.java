package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The defaults of {@code modelkeeper serve} say the same in its three places: {@link ServerConfig},
 * the command's help and the configuration table of docs/CONFIGURATION.md. Every option is checked
 * the same way, so a new flag is covered as soon as it exists.
 */
class DefaultsTest {

  private static final Path TABLE = Path.of("..", "docs", "CONFIGURATION.md");

  @TempDir Path tmp;

  private static CommandLine cli() {
    return ModelKeeperCli.commandLine(
        Map.of(), new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()));
  }

  /** The serve options by longest name, without --help and --version. */
  private static Map<String, OptionSpec> options() {
    Map<String, OptionSpec> options = new TreeMap<>();
    for (OptionSpec o : cli().getSubcommands().get("serve").getCommandSpec().options()) {
      if (!o.usageHelp() && !o.versionHelp()) {
        options.put(o.longestName(), o);
      }
    }
    return options;
  }

  /** Table rows: flag to {environment variable, default cell}. */
  private static Map<String, List<String>> readmeTable() throws Exception {
    Map<String, List<String>> rows = new LinkedHashMap<>();
    for (String line : Files.readAllLines(TABLE, StandardCharsets.UTF_8)) {
      if (line.startsWith("| `--")) {
        String[] cells = line.split("\\|");
        String flag = cells[1].trim().replace("`", "");
        rows.put(flag, List.of(cells[2].trim().replace("`", ""), cells[3].trim()));
      }
    }
    return rows;
  }

  @Test
  void readmeTable_listsEveryOptionWithItsVariableAndTheDefaultOfTheHelp() throws Exception {
    Map<String, OptionSpec> options = options();
    Map<String, List<String>> table = readmeTable();
    assertThat(table.keySet())
        .as("flags in the table of docs/CONFIGURATION.md")
        .isEqualTo(options.keySet());
    List<String> problems = new ArrayList<>();
    for (OptionSpec option : options.values()) {
      String flag = option.longestName();
      String variable = table.get(flag).get(0);
      String cell = table.get(flag).get(1);
      if (!variable.equals(ModelKeeperCli.variable(flag))) {
        problems.add(flag + ": table variable " + variable);
      }
      String fromConfig = ModelKeeperCli.serverDefault(option);
      String help = fromConfig != null ? fromConfig : option.defaultValue();
      if (help == null ? cell.startsWith("`") : !cell.startsWith("`" + help + "`")) {
        problems.add(flag + ": help default " + help + ", table default cell '" + cell + "'");
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void help_showsEveryServerConfigDefault() {
    String help = cli().getSubcommands().get("serve").getUsageMessage().replaceAll("\\s+", " ");
    for (OptionSpec option : options().values()) {
      String value = ModelKeeperCli.serverDefault(option);
      if (value != null) {
        assertThat(option.defaultValueString()).as(option.longestName()).isEqualTo(value);
        assertThat(help).contains("default: " + value + ")");
      }
    }
    assertThat(ModelKeeperCli.serverDefault(options().get("--max-request-bytes")))
        .isEqualTo("32MiB");
    assertThat(ModelKeeperCli.serverDefault(options().get("--lifecycle-timeout"))).isEqualTo("60s");
  }

  @Test
  void serveWithoutFlags_runsWithServerConfigDefaults() throws Exception {
    Path repo = Files.createDirectories(tmp.resolve("repo"));
    CommandLine cl = cli();
    ServeCommand serve =
        (ServeCommand)
            cl.parseArgs(
                    "serve",
                    "--repository",
                    repo.toString(),
                    "--cache-dir",
                    tmp.toString(),
                    "--port",
                    "0",
                    "--grpc-port",
                    "0",
                    "--metrics-port",
                    "0",
                    "--host",
                    "127.0.0.1")
                .subcommand()
                .commandSpec()
                .userObject();
    ServerConfig defaults = ServerConfig.of(new LocalModelRepository(repo));
    try (ModelKeeperServer server = serve.start()) {
      ServerConfig fromCli = server.config();
      List<String> differences = new ArrayList<>();
      compare("", fromCli, defaults, differences);
      assertThat(differences).isEmpty();
    }
  }

  /**
   * Adds to {@code differences} every setting of {@code cli} that is not the default's, going into
   * the settings groups; the repository, the memory-cost file, the folder of pre-optimized forms
   * and the listening address come from the flags the test gives.
   */
  private static void compare(String prefix, Record cli, Record defaults, List<String> differences)
      throws Exception {
    for (RecordComponent component : cli.getClass().getRecordComponents()) {
      String name = component.getName();
      if (Set.of(
              "host",
              "port",
              "grpcPort",
              "metricsPort",
              "repository",
              "registry",
              "memoryCostsFile",
              "formsDir",
              "tracer")
          .contains(name)) {
        continue;
      }
      Object cliValue = component.getAccessor().invoke(cli);
      Object defaultValue = component.getAccessor().invoke(defaults);
      if (cliValue instanceof Record) {
        compare(prefix + name + ".", (Record) cliValue, (Record) defaultValue, differences);
      } else if (!Objects.equals(cliValue, defaultValue)) {
        differences.add(prefix + name + ": cli " + cliValue + ", ServerConfig " + defaultValue);
      }
    }
  }
}
