package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server ({@code modelkeeper.jar serve}) on free loopback ports, driven by the real
 * {@code tritonclient} over HTTP (binary tensors, its default, and JSON) and gRPC: health,
 * metadata, inference on {@code iris} and on the every-datatype model {@code types}, the outputs
 * filter, the repository index, load and unload, and errors as the client's own exceptions (see
 * {@code src/test/python/test_tritonclient.py}). The clients live in a venv with pinned versions.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class TritonClientTest {

  private static final Pattern HTTP = Pattern.compile("ModelKeeper is serving http://(\\S+)");
  private static final Pattern GRPC = Pattern.compile("gRPC:\\s+(\\S+)");
  private static final String TOKEN = "interop-secret";

  @TempDir static Path cache;

  private static Process server;
  private static String httpAddress;
  private static String grpcAddress;
  private static final List<String> serverLog = new ArrayList<>();

  @BeforeAll
  static void startServer() throws Exception {
    Path jar = Path.of(System.getProperty("modelkeeper.jar"));
    assertThat(jar).as("the packaged server jar (built by modelkeeper-cli)").isRegularFile();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    server =
        new ProcessBuilder(
                java,
                "-Xmx1g",
                "-jar",
                jar.toString(),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--grpc-port",
                "0",
                "--cache-dir",
                cache.toString(),
                "--auth-token",
                TOKEN,
                "--shutdown-timeout",
                "5s")
            .redirectErrorStream(true)
            .start();
    CountDownLatch ready = new CountDownLatch(1);
    Thread drain =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  System.out.println("[server] " + line);
                  synchronized (serverLog) {
                    serverLog.add(line);
                    Matcher h = HTTP.matcher(line);
                    if (h.find()) {
                      httpAddress = h.group(1);
                    }
                    Matcher g = GRPC.matcher(line);
                    if (g.find()) {
                      grpcAddress = g.group(1);
                    }
                  }
                  if (line.startsWith("Ready.")) {
                    ready.countDown();
                  }
                }
              } catch (IOException ignored) {
                // the server ended
              }
            },
            "server-log");
    drain.setDaemon(true);
    drain.start();
    assertThat(ready.await(2, TimeUnit.MINUTES)).as("server printed Ready.").isTrue();
    synchronized (serverLog) {
      assertThat(httpAddress).as("printed HTTP address").isNotNull();
      assertThat(grpcAddress).as("printed gRPC address").isNotNull();
    }
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.toHandle().destroy();
      if (!server.waitFor(60, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void tritonclient_overHttpBinaryHttpJsonAndGrpc_passesEveryCase() throws Exception {
    Path tests = Path.of(System.getProperty("interop.python.dir"));
    PythonEnv env = PythonEnv.forRequirements(tests.resolve("requirements.txt"));
    Path report = Path.of(System.getProperty("interop.build.dir"), "interop-pytest.xml");
    Files.createDirectories(report.getParent());
    Processes.Outcome run =
        Processes.run(
            List.of(
                env.python().toString(),
                "-m",
                "pytest",
                "-v",
                "-p",
                "no:cacheprovider",
                "--junitxml=" + report,
                tests.resolve("test_tritonclient.py").toString()),
            Map.of(
                "MK_HTTP",
                httpAddress,
                "MK_GRPC",
                grpcAddress,
                "MK_TOKEN",
                TOKEN,
                "PYTHONDONTWRITEBYTECODE",
                "1"),
            Duration.ofMinutes(5));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    // every protocol ran: a skipped or deselected protocol would leave its cases out
    assertThat(run.output())
        .contains("test_infer_every_datatype[http-binary] PASSED")
        .contains("test_infer_every_datatype[http-json] PASSED")
        .contains("test_infer_every_datatype[grpc] PASSED")
        .doesNotContain("SKIPPED");
  }
}
