package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server ({@code modelkeeper.jar serve}) against its own OpenAPI document at {@code
 * /v2/openapi.json}: the document validates, and a bounded schemathesis run over every operation
 * finds no server error and nothing the document does not describe, and 405 with {@code Allow} for
 * methods a path does not accept (see {@code src/test/python/test_openapi.py}). Schemathesis lives
 * in the interop venv with pinned versions.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class OpenApiTest {

  @TempDir static Path cache;

  private static ServerProcess server;

  @BeforeAll
  static void startServer() throws Exception {
    server = ServerProcess.builder().cacheDir(cache).start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void schemathesis_againstThePackagedJar_findsNothingUndocumented() throws Exception {
    Processes.Outcome run = Pytest.run(server, "test_openapi.py", Map.of());
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    assertThat(run.output())
        .contains("test_document_is_valid_openapi PASSED")
        .contains("test_every_phase_sent_requests PASSED")
        .doesNotContain("SKIPPED");
  }
}
