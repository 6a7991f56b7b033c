package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Triton Python-backend models ({@code src/test/python/python_models}: {@code model.py} files as
 * Triton's docs write them) served by the packaged jar with the pinned venv's interpreter as {@code
 * --python}, driven by the real {@code tritonclient} over HTTP and gRPC: add/sub with two instances
 * (two processes), a batching model with BYTES, {@code auto_complete_config}, and models that raise
 * in {@code initialize} or {@code execute}, exit mid-request or hang, each answered clearly with
 * the server unharmed and the fixed file served at the next request; unloading ends the processes
 * (see {@code src/test/python/test_python_backend.py}).
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class PythonBackendTest {

  private static final String TOKEN = "python-secret";

  @TempDir static Path dir;

  private static ServerProcess server;
  private static Path repository;

  @BeforeAll
  static void startServer() throws Exception {
    Path tests = Path.of(System.getProperty("interop.python.dir"));
    repository = copy(tests.resolve("python_models"), dir.resolve("models")).toRealPath();
    // the ONNX model the BLS model calls: Triton's simple add/sub without a batch dimension
    TritonRepository.addSub("onnx_addsub", 0)
        .writeTo(
            Files.createDirectories(repository.resolve("onnx_addsub/1")).resolve("model.onnx"));
    PythonEnv venv = PythonEnv.forRequirements(tests.resolve("requirements.txt"));
    // a model with an interpreter of its own: a wrapper of the venv's that marks its children
    Path own = dir.resolve("own-python");
    Files.writeString(
        own, "#!/bin/sh\nMODELKEEPER_OWN_INTERPRETER=1 exec " + venv.python() + " \"$@\"\n");
    own.toFile().setExecutable(true);
    Files.writeString(
        repository.resolve("own_interpreter/config.pbtxt"),
        "backend: \"python\"\n"
            + "input [ { name: \"IN\" data_type: TYPE_FP32 dims: [ 4 ] } ]\n"
            + "output [ { name: \"OUT\" data_type: TYPE_FP32 dims: [ 4 ] } ]\n"
            + "parameters { key: \"python_interpreter\" value: { string_value: \""
            + own
            + "\" } }\n");
    server =
        ServerProcess.builder()
            .cacheDir(Files.createDirectories(dir.resolve("cache")))
            .args(
                "--repository",
                repository.toString(),
                "--auth-token",
                TOKEN,
                "--python",
                venv.python().toString())
            .start();
  }

  private static Path copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    return to;
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void tritonclient_servesPythonModels_andSurvivesTheirFailures() throws Exception {
    Processes.Outcome run =
        Pytest.run(
            server,
            "test_python_backend.py",
            Map.of("MK_TOKEN", TOKEN, "MK_PY_REPO", repository.toString()));
    assertThat(run.exitCode()).as("pytest exit code; its output is above in the log").isZero();
    assertThat(run.output())
        .contains("test_add_sub_as_tritons_docs_write_it[http] PASSED")
        .contains("test_add_sub_as_tritons_docs_write_it[grpc] PASSED")
        .contains("test_a_process_that_exits_fails_its_request_and_starts_again[grpc] PASSED")
        .contains("test_bls_calls_an_onnx_model_and_a_python_model[grpc] PASSED")
        .contains("test_batched_requests_reach_one_execute_call_as_a_list[http] PASSED")
        .contains("test_a_model_may_name_its_own_interpreter[http] PASSED")
        .contains("test_zz_fixed_files_are_served_at_the_next_request PASSED")
        .contains("test_zz_unloading_ends_the_processes PASSED")
        .doesNotContain("SKIPPED");
  }
}
