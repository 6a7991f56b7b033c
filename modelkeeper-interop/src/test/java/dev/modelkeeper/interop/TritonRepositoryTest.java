package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A repository in Triton's layout ({@link TritonRepository}) served by the packaged jar and driven
 * by the real {@code tritonclient} over HTTP and gRPC: readiness on a fresh server, inference with
 * and without a batch dimension, {@code get_model_config}, version policies, classification with
 * labels, a broken {@code config.pbtxt} that leaves its model UNAVAILABLE with the parse error
 * while the rest serves, the refusals of what is not served (an ensemble, sequence batching, a
 * backend ModelKeeper lacks, a decoupled model), Triton's wording of errors, raw outputs for typed
 * contents, and model control: loads with a config override (applied, malformed, contradicting) and
 * with file overrides (see {@code src/test/python/test_triton_repository.py}).
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class TritonRepositoryTest {

  private static final String TOKEN = "interop-secret";

  @TempDir static Path dir;

  private static ServerProcess server;
  private static Path repository;

  @BeforeAll
  static void startServer() throws Exception {
    repository =
        TritonRepository.write(Files.createDirectories(dir.resolve("models"))).toRealPath();
    server =
        ServerProcess.builder()
            .cacheDir(Files.createDirectories(dir.resolve("cache")))
            .args("--repository", repository.toString(), "--auth-token", TOKEN)
            .start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void tritonclient_servesTheTritonLayoutUnchanged() throws Exception {
    Processes.Outcome run =
        Pytest.run(
            server,
            "test_triton_repository.py",
            Map.of("MK_TOKEN", TOKEN, "MK_REPOSITORY", repository.toString()));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    assertThat(run.output())
        .contains("test_addsub_infers[http] PASSED")
        .contains("test_addsub_infers[grpc] PASSED")
        .contains("test_every_servable_model_is_ready_on_a_fresh_server[http] PASSED")
        .contains("test_load_with_a_file_override_serves_the_files_sent[grpc] PASSED")
        .contains("test_unservable_models_are_listed_and_refused[grpc-sequence] PASSED")
        .contains("test_statistics_count_known_requests_exactly[http] PASSED")
        .contains("test_statistics_count_known_requests_exactly[grpc] PASSED")
        .doesNotContain("SKIPPED");
  }

  /**
   * NVIDIA's perf_analyzer, run by {@code scripts/bench-perf-analyzer.sh} for a short window over
   * HTTP and gRPC on {@code addsub} (Triton's {@code simple}), prints its server-side section: the
   * statistics extension answered it.
   */
  @Test
  void perfAnalyzer_printsItsServerSideSection_overHttpAndGrpc() throws Exception {
    Path root =
        Path.of(System.getProperty("interop.python.dir")).resolve("../../../..").normalize();
    Path out = dir.resolve("perf-analyzer");
    Processes.Outcome run =
        Processes.run(
            List.of(
                "bash",
                root.resolve("scripts/bench-perf-analyzer.sh").toString(),
                "--server",
                server.httpAddress() + "," + server.grpcAddress(),
                "--models",
                "addsub",
                "--concurrency",
                "2",
                "--seconds",
                "1",
                "--max-trials",
                "3",
                "--stability",
                "1000",
                "--out",
                out.toString()),
            Duration.ofMinutes(10));
    assertThat(run.exitCode()).as("the script's output:%n%s", run.output()).isZero();
    for (String protocol : List.of("http", "grpc")) {
      String report = Files.readString(out.resolve("logs/" + protocol + "-addsub-c2.log"));
      assertThat(report)
          .as("perf_analyzer's report over %s", protocol)
          .containsPattern("Server: *\\n +Inference count: [1-9]\\d*\\n +Execution count: [1-9]")
          .containsPattern(
              "Avg request latency: \\d+ usec \\(overhead \\d+ usec \\+ queue \\d+ usec \\+ compute"
                  + " input \\d+ usec \\+ compute infer [1-9]\\d* usec \\+ compute output \\d+ usec\\)");
    }
    List<String> csv = Files.readAllLines(out.resolve("perf_analyzer.csv"));
    assertThat(csv).hasSize(3);
    assertThat(csv.get(0)).startsWith("Protocol,Model,Concurrency,").contains("Server Queue");
    assertThat(Files.readString(out.resolve("perf_analyzer.json")))
        .contains("\"Model\": \"addsub\"");
  }

  @Test
  void startup_flagsTheBrokenConfig_withItsLine_andNoStackTrace() {
    assertThat(server.output())
        .anySatisfy(
            line ->
                assertThat(line)
                    .contains("broken/config.pbtxt")
                    .contains("line 4, column 1")
                    .contains("WARN"))
        .anySatisfy(line -> assertThat(line.trim()).startsWith("broken:").contains("broken/1"))
        .noneSatisfy(line -> assertThat(line).startsWith("\tat "))
        .noneSatisfy(line -> assertThat(line).contains("Exception"));
  }
}
