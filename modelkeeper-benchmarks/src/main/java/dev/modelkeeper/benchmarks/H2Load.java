package dev.modelkeeper.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * nghttp2's {@code h2load}, one load generator for HTTP/1.1 and HTTP/2 alike, run as its own
 * process: closed-loop connections that each send one prepared body at a time, on one thread. Every
 * request must succeed with a 2xx status, else {@link #run} throws; gRPC's status travels in
 * trailers h2load does not read, so callers check the server's count of failed calls themselves.
 */
final class H2Load {

  /** What one run measured: requests answered, over how long, each one's latency, and CPU. */
  record Result(long requests, double seconds, long[] latencyNanos, long cpuNanos) {}

  private static final Pattern DONE =
      Pattern.compile(
          "requests: \\d+ total, \\d+ started, \\d+ done, (\\d+) succeeded, (\\d+) failed,"
              + " (\\d+) errored, (\\d+) timeout");
  private static final Pattern CODES = Pattern.compile("status codes: (\\d+) 2xx");
  private static final Pattern FINISHED = Pattern.compile("finished in ([0-9.]+)(m?s),");

  /** bash's {@code times}: the shell's user and system time, then its children's. */
  private static final Pattern TIMES = Pattern.compile("(\\d+)m([0-9.]+)s (\\d+)m([0-9.]+)s\\s*$");

  private final Path work;

  /**
   * @throws IllegalStateException when h2load is not installed
   */
  H2Load(Path work) throws IOException, InterruptedException {
    this.work = work;
    Process p = new ProcessBuilder("h2load", "--version").redirectErrorStream(true).start();
    boolean ended = p.waitFor(30, TimeUnit.SECONDS);
    if (!ended || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException(
          "h2load is needed (Debian: apt-get install -y nghttp2-client; scripts/bench-protocols.sh"
              + " installs it)");
    }
  }

  /**
   * {@code clients} connections to {@code url} sending {@code requests} in all, each POSTing {@code
   * body} one request at a time, over HTTP/2 with prior knowledge or, if {@code http1}, HTTP/1.1
   * keep-alive; ended as failed after {@code timeout}. (A count, not h2load's duration option,
   * which now and then never ended here with 64 connections.)
   */
  Result run(
      String url,
      boolean http1,
      Map<String, String> headers,
      byte[] body,
      int clients,
      long requests,
      Duration timeout)
      throws IOException, InterruptedException {
    Path bodyFile = Files.createTempFile(work, "body", ".bin");
    Path log = Files.createTempFile(work, "requests", ".log");
    Path output = Files.createTempFile(work, "h2load", ".out");
    Files.write(bodyFile, body);
    List<String> args = new ArrayList<>(List.of("h2load"));
    if (http1) {
      args.add("--h1");
    }
    args.addAll(
        List.of(
            "-c",
            Integer.toString(clients),
            "-t",
            "1",
            "-m",
            "1",
            "-n",
            Long.toString(requests),
            "-d",
            bodyFile.toString(),
            "--log-file=" + log));
    headers.forEach(
        (k, v) -> {
          args.add("-H");
          args.add(k + ": " + v);
        });
    args.add(url);
    StringBuilder script = new StringBuilder();
    for (String a : args) {
      script.append('\'').append(a.replace("'", "'\\''")).append("' ");
    }
    // bash reports its children's CPU time once h2load has exited
    script.append("; rc=$?; times; exit $rc");
    Process p =
        new ProcessBuilder("bash", "-c", script.toString())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .start();
    boolean ended = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (!ended) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    String out = Files.readString(output);
    Files.delete(output);
    if (!ended) {
      throw new IllegalStateException("h2load did not end within " + timeout + ":\n" + out);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException("h2load failed (exit " + p.exitValue() + "):\n" + out);
    }
    Matcher done = find(DONE, out);
    long succeeded = Long.parseLong(done.group(1));
    long failed = Long.parseLong(done.group(2));
    long errored = Long.parseLong(done.group(3));
    long timedOut = Long.parseLong(done.group(4));
    long ok = Long.parseLong(find(CODES, out).group(1));
    if (failed + errored + timedOut > 0 || ok != succeeded || succeeded == 0) {
      throw new IllegalStateException("h2load saw failed requests against " + url + ":\n" + out);
    }
    Matcher finished = find(FINISHED, out);
    double took =
        Double.parseDouble(finished.group(1)) / (finished.group(2).equals("ms") ? 1e3 : 1);
    Matcher times = find(TIMES, out.strip());
    long cpuNanos =
        (long)
            ((Long.parseLong(times.group(1)) * 60 + Double.parseDouble(times.group(2))) * 1e9
                + (Long.parseLong(times.group(3)) * 60 + Double.parseDouble(times.group(4))) * 1e9);
    List<String> lines = Files.readAllLines(log);
    long[] latencies = new long[lines.size()];
    int n = 0;
    for (String line : lines) {
      String[] f = line.split("\t");
      if (f.length >= 3) {
        latencies[n++] = Long.parseLong(f[2].strip()) * 1000;
      }
    }
    Files.delete(bodyFile);
    Files.delete(log);
    return new Result(succeeded, took, java.util.Arrays.copyOf(latencies, n), cpuNanos);
  }

  private static Matcher find(Pattern p, String out) {
    Matcher m = p.matcher(out);
    if (!m.find()) {
      throw new IllegalStateException("unexpected h2load output (no " + p + "):\n" + out);
    }
    return m;
  }
}
