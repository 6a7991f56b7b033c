package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * Python backend, a decoupled model), Triton's wording of errors, raw outputs for typed contents,
 * and model control: loads with a config override (applied, malformed, contradicting) and with file
 * overrides (see {@code src/test/python/test_triton_repository.py}).
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
        .doesNotContain("SKIPPED");
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
