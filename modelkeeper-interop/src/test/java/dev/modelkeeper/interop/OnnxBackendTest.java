package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ONNX backend node tests that the {@code onnx} wheel ships, served by the packaged jar from a
 * repository of their models and sent through the real {@code tritonclient} over HTTP binary, HTTP
 * JSON and gRPC: every test that Python ONNX Runtime (the server's version) passes must pass on
 * each protocol, bit-exact for integers, bools and bytes and within the test's tolerance for
 * floats; the documented limits (non-tensor inputs and outputs, input types ONNX Runtime's Java API
 * cannot create) must be refused at load, non-retryably and without a server path (see {@code
 * src/test/python/onnx_backend.py} and {@code test_onnx_backend.py}).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class OnnxBackendTest {

  /** Node tests ONNX Runtime 1.22 passes from onnx 1.17.0's data; fewer means a broken setup. */
  private static final int MIN_PASSING_ON_ORT = 1100;

  @TempDir static Path dir;

  private static Path repository;
  private static Path manifest;
  private static ServerProcess server;

  @BeforeAll
  static void prepareAndStart() throws Exception {
    Path tests = Path.of(System.getProperty("interop.python.dir"));
    PythonEnv venv = PythonEnv.forRequirements(tests.resolve("requirements.txt"));
    repository = Files.createDirectories(dir.resolve("models"));
    manifest = dir.resolve("manifest.json");
    Processes.Outcome prepared =
        Processes.run(
            List.of(
                venv.python().toString(),
                tests.resolve("onnx_backend.py").toString(),
                repository.toString(),
                manifest.toString()),
            Map.of("PYTHONDONTWRITEBYTECODE", "1"),
            Duration.ofMinutes(3));
    assertThat(prepared.exitCode()).as("onnx_backend.py; its output is above").isZero();
    Matcher m = Pattern.compile("(\\d+) pass on Python ONNX Runtime").matcher(prepared.output());
    assertThat(m.find()).as("the reference run's summary").isTrue();
    assertThat(Integer.parseInt(m.group(1))).isGreaterThanOrEqualTo(MIN_PASSING_ON_ORT);
    server =
        ServerProcess.builder()
            .cacheDir(Files.createDirectories(dir.resolve("cache")))
            .args("--repository", repository.toString())
            .start();
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void nodeTests_overHttpBinaryHttpJsonAndGrpc_passWhereOnnxRuntimePasses() throws Exception {
    Processes.Outcome run =
        Pytest.run(
            server,
            "test_onnx_backend.py",
            Map.of(
                "MK_REPO", repository.toRealPath().toString(), "MK_MANIFEST", manifest.toString()));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    assertThat(run.output())
        .contains("test_abs-http-binary] PASSED")
        .contains("test_cast_FLOAT_to_FLOAT16-http-json] PASSED")
        .contains("test_cast_FLOAT16_to_FLOAT-grpc] PASSED")
        .contains("test_identity_sequence-grpc] PASSED") // a documented limit, refused as it should
        .doesNotContain("SKIPPED");
  }
}
