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
 * The packaged server ({@code modelkeeper.jar serve}) on free loopback ports, driven by the real
 * {@code tritonclient} over HTTP (binary tensors, its default, and JSON) and gRPC: health,
 * metadata, inference on {@code iris} and on the every-datatype model {@code types}, the outputs
 * filter, classification, the repository index, load and unload, and errors as the client's own
 * exceptions (see {@code src/test/python/test_tritonclient.py}). The clients live in a venv with
 * pinned versions.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class TritonClientTest {

  private static final String TOKEN = "interop-secret";

  /** The server's bound on mapped shared memory, small enough to pass in a test. */
  private static final long MAX_SHARED_MEMORY = 8L << 20;

  @TempDir static Path cache;

  private static ServerProcess server;

  @BeforeAll
  static void startServer() throws Exception {
    server =
        ServerProcess.builder()
            .cacheDir(cache)
            .args(
                "--auth-token",
                TOKEN,
                "--max-shared-memory-bytes",
                Long.toString(MAX_SHARED_MEMORY))
            .start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void tritonclient_overHttpBinaryHttpJsonAndGrpc_passesEveryCase() throws Exception {
    Processes.Outcome run = Pytest.run(server, "test_tritonclient.py", Map.of("MK_TOKEN", TOKEN));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    // every protocol ran: a skipped or deselected protocol would leave its cases out
    assertThat(run.output())
        .contains("test_infer_every_datatype[http-binary] PASSED")
        .contains("test_infer_every_datatype[http-json] PASSED")
        .contains("test_infer_every_datatype[grpc] PASSED")
        .doesNotContain("SKIPPED");
  }

  /**
   * System shared memory over HTTP and gRPC, gRPC streaming, and compression in both protocols,
   * with the same server (see {@code src/test/python/test_fast_paths.py}).
   */
  @Test
  void tritonclient_sharedMemoryStreamingAndCompression_passEveryCase() throws Exception {
    Processes.Outcome run =
        Pytest.run(
            server,
            "test_fast_paths.py",
            Map.of(
                "MK_TOKEN",
                TOKEN,
                "MK_PID",
                Long.toString(server.pid()),
                "MK_MAX_SHM",
                Long.toString(MAX_SHARED_MEMORY)));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    assertThat(run.output())
        .contains("test_shm_fp32_and_bytes_inputs_and_outputs_at_offsets[http] PASSED")
        .contains("test_shm_fp32_and_bytes_inputs_and_outputs_at_offsets[grpc] PASSED")
        .contains("test_stream_answers_1000_requests_in_order PASSED")
        .contains("test_http_decompression_bomb_is_refused_within_the_bound[gzip] PASSED")
        .doesNotContain("SKIPPED");
  }
}
