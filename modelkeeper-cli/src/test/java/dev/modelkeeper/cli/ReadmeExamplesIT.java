package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.cli.readme.CurlCommand;
import dev.modelkeeper.cli.readme.LooseMatch;
import dev.modelkeeper.cli.readme.ReadmeExamples;
import dev.modelkeeper.cli.readme.ReadmeExamples.Block;
import dev.modelkeeper.cli.readme.ReadmeExamples.Example;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the README: its quick-start command's {@code java -jar ... serve} on the packaged jar (a
 * separate JVM, the bundled demo repository, a fresh cache folder), then every curl example of the
 * HTTP API section in order against it, comparing each answer with the one shown. Runs after {@code
 * package}, in {@code mvn verify}.
 */
class ReadmeExamplesIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final String QUICK_START =
      "./mvnw -B -q install -DskipTests && java -jar modelkeeper-cli/target/modelkeeper.jar serve";
  private static final Pattern SERVING = Pattern.compile("ModelKeeper is serving http://(\\S+)");

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
    ReadmeExamples readme = ReadmeExamples.read(ROOT.resolve("README.md"));
    List<Example> examples = readme.examples("HTTP API");
    assertThat(examples).hasSizeGreaterThanOrEqualTo(10);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String[] serve = QUICK_START.substring(QUICK_START.indexOf("java -jar")).split(" ");
    List<String> command = new ArrayList<>(List.of(serve));
    command.set(0, java);
    command.addAll(List.of("--port", "0", "--grpc-port", "0", "--cache-dir", cache.toString()));
    Process process = new ProcessBuilder(command).directory(ROOT.toFile()).start();
    List<String> out = new CopyOnWriteArrayList<>();
    List<String> err = new CopyOnWriteArrayList<>();
    CountDownLatch ready = new CountDownLatch(1);
    Thread stdout = drain(process, true, out, ready);
    Thread stderr = drain(process, false, err, null);
    try {
      assertThat(ready.await(180, TimeUnit.SECONDS))
          .as("server ready; stdout %s stderr %s", out, err)
          .isTrue();
      String host = null;
      for (String line : out) {
        Matcher m = SERVING.matcher(line);
        if (m.find()) {
          host = m.group(1);
        }
      }
      assertThat(host).as("printed URL in %s", out).isNotNull();
      assertThat(String.join("\n", out)).contains("bundled demo repository").contains("budget:");

      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      List<String> problems = new ArrayList<>();
      for (Example e : examples) {
        String actual = CurlCommand.parse(e.command(), host).run(client);
        for (String d : LooseMatch.differences(e.language(), e.expected(), actual)) {
          problems.add(e.command().lines().findFirst().orElse("") + " -> " + d);
        }
      }
      assertThat(problems).as("README examples that answer differently").isEmpty();
    } finally {
      process.toHandle().destroy(); // SIGTERM; Process.destroy() would also close our pipes
      boolean exited = process.waitFor(60, TimeUnit.SECONDS);
      if (!exited) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      stdout.join(10_000);
      stderr.join(10_000);
      assertThat(exited).as("stopped after SIGTERM").isTrue();
    }
    assertThat(out).as("graceful shutdown, stderr %s", err).contains("Stopped.");
  }

  private static Thread drain(Process p, boolean stdout, List<String> lines, CountDownLatch ready) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(
                          stdout ? p.getInputStream() : p.getErrorStream(),
                          StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  lines.add(line);
                  if (ready != null && line.equals("Ready.")) {
                    ready.countDown();
                  }
                }
              } catch (IOException ignored) {
                // the process ended
              }
            },
            stdout ? "serve-stdout" : "serve-stderr");
    t.setDaemon(true);
    t.start();
    return t;
  }
}
