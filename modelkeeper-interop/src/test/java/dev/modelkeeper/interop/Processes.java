package dev.modelkeeper.interop;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a process to its end within a timeout, echoing its output to the test log. Stateless. */
final class Processes {

  /**
   * How a process ended.
   *
   * @param exitCode its exit code
   * @param output its stdout and stderr, interleaved
   */
  record Outcome(int exitCode, String output) {}

  private Processes() {}

  static Outcome run(List<String> command, Duration timeout)
      throws IOException, InterruptedException {
    return run(command, Map.of(), timeout);
  }

  /**
   * Runs {@code command} with extra {@code env}; kills it and fails when it outlives {@code
   * timeout}.
   *
   * @throws IOException when the program cannot be started (e.g. it is not installed)
   */
  static Outcome run(List<String> command, Map<String, String> env, Duration timeout)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    StringBuilder output = new StringBuilder();
    Thread drain =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  System.out.println("[" + command.get(0) + "] " + line);
                  synchronized (output) {
                    output.append(line).append('\n');
                  }
                }
              } catch (IOException ignored) {
                // the process ended
              }
            },
            "drain-" + command.get(0));
    drain.setDaemon(true);
    drain.start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new IllegalStateException(
          String.join(" ", command) + " did not finish within " + timeout);
    }
    drain.join(TimeUnit.SECONDS.toMillis(10));
    synchronized (output) {
      return new Outcome(p.exitValue(), output.toString());
    }
  }
}
