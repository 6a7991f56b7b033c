package dev.modelkeeper.interop;

import dev.modelkeeper.testkit.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Runs a pytest file of {@code src/test/python} against a running server. Stateless. */
final class Pytest {

  private Pytest() {}

  /**
   * Runs {@code test} with pytest from the pinned venv, the server's addresses in {@code MK_HTTP}
   * and {@code MK_GRPC} and {@code env} in its environment; at most 5 minutes. Its JUnit report
   * goes to the build folder.
   */
  static Processes.Outcome run(ServerProcess server, String test, Map<String, String> env)
      throws Exception {
    Path tests = Path.of(System.getProperty("interop.python.dir"));
    PythonEnv venv = PythonEnv.forRequirements(tests.resolve("requirements.txt"));
    Path report =
        Path.of(System.getProperty("interop.build.dir"), test.replace(".py", "") + "-pytest.xml");
    Files.createDirectories(report.getParent());
    Map<String, String> all = new HashMap<>(env);
    all.put("MK_HTTP", server.httpAddress());
    all.put("MK_GRPC", server.grpcAddress());
    all.put("PYTHONDONTWRITEBYTECODE", "1");
    return Processes.run(
        List.of(
            venv.python().toString(),
            "-m",
            "pytest",
            "-v",
            "-p",
            "no:cacheprovider",
            "--junitxml=" + report,
            tests.resolve(test).toString()),
        all,
        Duration.ofMinutes(5));
  }
}
