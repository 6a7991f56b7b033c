package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.cli.readme.CurlCommand;
import dev.modelkeeper.cli.readme.LooseMatch;
import dev.modelkeeper.cli.readme.ReadmeExamples;
import dev.modelkeeper.cli.readme.ReadmeExamples.Block;
import dev.modelkeeper.cli.readme.ReadmeExamples.Example;
import dev.modelkeeper.testkit.ServerProcess;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the README: its quick-start command's {@code java -jar ... serve} on the packaged jar (a
 * separate JVM, the bundled demo repository, a fresh cache folder), then every curl example of the
 * HTTP API section of {@code docs/PROTOCOL.md} in order against it, comparing each answer with the
 * one shown. Runs after {@code package}, in {@code mvn verify}.
 */
class ReadmeExamplesIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final String QUICK_START =
      "./mvnw -B -q install -DskipTests && java -jar modelkeeper-cli/target/modelkeeper.jar serve";

  @TempDir Path cache;

  @Test
  void readme_quickStartCommands_areBuildAndServeThenVerify() throws Exception {
    ReadmeExamples readme = ReadmeExamples.read(ROOT.resolve("README.md"));
    List<Block> quickStart = readme.blocks("Quick start");
    assertThat(quickStart)
        .extracting(Block::text)
        .containsExactly(QUICK_START + "\n", "./mvnw -B verify\n");
    assertThat(Files.readString(ROOT.resolve(".ci/run"))).contains("./mvnw -B verify");
  }

  @Test
  void readme_curlExamples_answerWhatTheReadmeShows() throws Exception {
    ReadmeExamples readme = ReadmeExamples.read(ROOT.resolve("docs/PROTOCOL.md"));
    List<Example> examples = readme.examples("HTTP API");
    assertThat(examples).hasSizeGreaterThanOrEqualTo(10);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String[] serve = QUICK_START.substring(QUICK_START.indexOf("java -jar")).split(" ");
    List<String> command = new ArrayList<>(List.of(serve));
    command.set(0, java);
    command.addAll(List.of("--port", "0", "--grpc-port", "0", "--cache-dir", cache.toString()));
    List<String> out;
    try (ServerProcess server =
        ServerProcess.builder()
            .command(command)
            .directory(ROOT)
            .readyTimeout(Duration.ofSeconds(180))
            .start()) {
      out = server.output();
      String host = server.httpAddress();
      assertThat(String.join("\n", out)).contains("bundled demo repository").contains("budget:");

      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      List<String> problems = new ArrayList<>();
      for (Example e : examples) {
        String actual = CurlCommand.parse(e.command(), host).run(client);
        for (String d : LooseMatch.differences(e.language(), e.expected(), actual)) {
          problems.add(e.command().lines().findFirst().orElse("") + " -> " + d);
        }
      }
      assertThat(problems).as("docs/PROTOCOL.md examples that answer differently").isEmpty();
      server.stop(Duration.ofMinutes(1)); // SIGTERM: stopped within the minute, else it fails
      out = server.output();
    }
    assertThat(out).as("graceful shutdown").contains("Stopped.");
  }
}
