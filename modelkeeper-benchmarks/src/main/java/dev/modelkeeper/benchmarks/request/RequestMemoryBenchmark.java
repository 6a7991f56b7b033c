package dev.modelkeeper.benchmarks.request;

import com.sun.management.ThreadMXBean;
import dev.modelkeeper.server.admission.RequestBytes;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.RequestBody;
import dev.modelkeeper.server.oip.InferRequestDecoder;
import dev.modelkeeper.server.request.InferRequest;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Heap cost of decoding one JSON inference request, before (the tree decoder the server had: {@link
 * JsonTreeDecoderBaseline}) and after (the streaming {@link InferRequestDecoder}), measured side by
 * side in one JVM: bytes allocated by the decoding thread per decoded tensor byte (from {@link
 * ThreadMXBean#getThreadAllocatedBytes}), and the heap retained at the decoder's peak (heap in use
 * after a full collection, with everything the decoder holds at that moment still reachable). Both
 * include the copy of the body out of the connection, which the server makes in both designs. Run
 * on demand:
 *
 * <pre>
 * java -Xmx3g -cp modelkeeper-benchmarks/target/benchmarks.jar \
 *     dev.modelkeeper.benchmarks.request.RequestMemoryBenchmark docs/bench/request-memory.md
 * </pre>
 *
 * Not thread-safe; one run at a time.
 */
public final class RequestMemoryBenchmark {

  private static final int ROUNDS = 5;
  private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  private RequestMemoryBenchmark() {}

  /** One measured configuration. */
  private record Row(
      String size,
      String decoder,
      long body,
      long tensor,
      long allocated,
      long retained,
      double millis) {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args.length > 0 ? args[0] : "docs/bench/request-memory.md");
    String loadBefore = loadAverage();
    Instant started = Instant.now();
    List<Row> rows = new ArrayList<>();
    for (int mib : new int[] {1, 29}) {
      byte[] body = request(mib << 20);
      long tensorBytes = 4L * elements(body);
      for (int warm = 0; warm < 3; warm++) {
        decodeBefore(body);
        decodeAfter(body);
      }
      long[] allocBefore = new long[ROUNDS];
      long[] allocAfter = new long[ROUNDS];
      double[] msBefore = new double[ROUNDS];
      double[] msAfter = new double[ROUNDS];
      for (int r = 0; r < ROUNDS; r++) { // interleaved, so both see the same machine
        long t = System.nanoTime();
        allocBefore[r] = allocated(() -> decodeBefore(body));
        msBefore[r] = (System.nanoTime() - t) / 1e6;
        t = System.nanoTime();
        allocAfter[r] = allocated(() -> decodeAfter(body));
        msAfter[r] = (System.nanoTime() - t) / 1e6;
      }
      String size = mib + " MiB";
      rows.add(
          new Row(
              size,
              "before: JSON tree",
              body.length,
              tensorBytes,
              median(allocBefore),
              retainedBefore(body),
              median(msBefore)));
      rows.add(
          new Row(
              size,
              "after: streaming",
              body.length,
              tensorBytes,
              median(allocAfter),
              retainedAfter(body),
              median(msAfter)));
    }
    String markdown =
        report(rows, started, Duration.between(started, Instant.now()), loadBefore, loadAverage());
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, markdown, StandardCharsets.UTF_8);
    System.out.println(markdown);
  }

  // ------------------------------------------------------------------------ the two decoders

  private static Object decodeBefore(byte[] body) throws IOException {
    byte[] copy = Arrays.copyOf(body, body.length); // the body as the route read it
    return JsonTreeDecoderBaseline.decode(copy);
  }

  private static Object decodeAfter(byte[] body) {
    RequestBody received = new RequestBody(RequestBytes.untracked(), body.length);
    received.append(ByteBuffer.wrap(body)); // the body as the intake received it
    return new InferRequestDecoder(new Json())
        .decode(received.stream(), received.length(), received.bytes());
  }

  // ------------------------------------------------------------------------ measuring

  @FunctionalInterface
  private interface Work {
    Object run() throws Exception;
  }

  private static long allocated(Work work) throws Exception {
    long id = Thread.currentThread().getId();
    long before = THREADS.getThreadAllocatedBytes(id);
    Object result = work.run();
    long after = THREADS.getThreadAllocatedBytes(id);
    java.lang.ref.Reference.reachabilityFence(result);
    return after - before;
  }

  /** Heap held when the tree decoder has filled its arrays: body, tree and tensors. */
  private static long retainedBefore(byte[] body) throws IOException {
    long base = usedAfterGc();
    byte[] copy = Arrays.copyOf(body, body.length);
    com.fasterxml.jackson.databind.JsonNode tree =
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(copy);
    InferRequest request = JsonTreeDecoderBaseline.parseInfer(tree);
    long peak = usedAfterGc();
    java.lang.ref.Reference.reachabilityFence(copy);
    java.lang.ref.Reference.reachabilityFence(tree);
    java.lang.ref.Reference.reachabilityFence(request);
    return peak - base;
  }

  /** Heap held when the streaming decoder is done: body and tensors. */
  private static long retainedAfter(byte[] body) {
    long base = usedAfterGc();
    RequestBody received = new RequestBody(RequestBytes.untracked(), body.length);
    received.append(ByteBuffer.wrap(body));
    InferRequest request =
        new InferRequestDecoder(new Json())
            .decode(received.stream(), received.length(), received.bytes());
    long peak = usedAfterGc();
    java.lang.ref.Reference.reachabilityFence(received);
    java.lang.ref.Reference.reachabilityFence(request);
    return peak - base;
  }

  private static long usedAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return MEMORY.getHeapMemoryUsage().getUsed();
  }

  // ------------------------------------------------------------------------ requests

  /** An FP32 request of about {@code bytes} bytes: one flat tensor of random values in [0, 1). */
  static byte[] request(int bytes) {
    SplittableRandom random = new SplittableRandom(42);
    StringBuilder b =
        new StringBuilder(bytes + 64)
            .append("{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [");
    int shapeAt = b.length();
    b.append("], \"data\": [");
    int n = 0;
    String tail = "]}]}";
    while (b.length() < bytes - tail.length() - 20) {
      if (n > 0) {
        b.append(',');
      }
      b.append(random.nextInt(1_000_000) / 1e6f);
      n++;
    }
    b.append(tail);
    b.insert(shapeAt, n);
    return b.toString().getBytes(StandardCharsets.US_ASCII);
  }

  private static long elements(byte[] body) {
    String s = new String(body, 0, 120, StandardCharsets.US_ASCII);
    int at = s.indexOf("\"shape\": [") + 10;
    return Long.parseLong(s.substring(at, s.indexOf(']', at)));
  }

  private static long median(long[] v) {
    long[] c = v.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  private static double median(double[] v) {
    double[] c = v.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "unknown";
    }
  }

  // ------------------------------------------------------------------------ report

  private static String report(
      List<Row> rows, Instant started, Duration took, String loadBefore, String loadAfter) {
    StringBuilder md = new StringBuilder();
    md.append("## Request memory\n\n");
    md.append("Heap cost of decoding one JSON inference request (one flat FP32 tensor of random")
        .append(" values such as `0.123456`), before (the JSON-tree decoder the server had) and")
        .append(" after (the streaming decoder), measured side by side in one JVM, ")
        .append(ROUNDS)
        .append(" interleaved rounds after 3 warm-up rounds, medians.")
        .append(" *Allocated* is what the decoding thread allocated (ThreadMXBean), including the")
        .append(" copy of the body out of the connection that both designs make. *Peak held* is")
        .append(" the heap still reachable when decoding ends (heap in use after a full")
        .append(" collection), i.e. what one request costs while it waits to run.\n\n");
    md.append(
        String.format(
            Locale.ROOT,
            "- Run: %s, %d s; %d cores, %s %s, Java %s, `-Xmx%dm`.%n",
            started,
            took.toSeconds(),
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("os.name"),
            System.getProperty("os.arch"),
            System.getProperty("java.version"),
            Runtime.getRuntime().maxMemory() >> 20));
    md.append("- Command: `./mvnw -B -q -pl modelkeeper-benchmarks -am package -DskipTests && java")
        .append(" -Xmx3g -cp modelkeeper-benchmarks/target/benchmarks.jar")
        .append(
            " dev.modelkeeper.benchmarks.request.RequestMemoryBenchmark docs/bench/request-memory.md`.\n");
    md.append("- Load average (1, 5, 15 min) before: ")
        .append(loadBefore)
        .append("; after: ")
        .append(loadAfter)
        .append(". The machine was shared with other builds during the run;")
        .append(" allocation and retained bytes do not depend on CPU load, times do.\n\n");
    md.append("| Body | Decoder | Body bytes | Tensor bytes | Allocated | Allocated per tensor")
        .append(" byte | Peak held | Peak held ÷ (body + tensor) | Decode ms |\n");
    md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (Row r : rows) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %,d | %,d | %,d | %.2f | %,d | %.2f | %.0f |%n",
              r.size(),
              r.decoder(),
              r.body(),
              r.tensor(),
              r.allocated(),
              (double) r.allocated() / r.tensor(),
              r.retained(),
              (double) r.retained() / (r.body() + r.tensor()),
              r.millis()));
    }
    md.append("\nRatios (after ÷ before, same run):\n\n");
    for (int i = 0; i + 1 < rows.size(); i += 2) {
      Row before = rows.get(i);
      Row after = rows.get(i + 1);
      md.append(
          String.format(
              Locale.ROOT,
              "- %s: allocated %.3fx, peak held %.3fx, decode time %.2fx.%n",
              before.size(),
              (double) after.allocated() / before.allocated(),
              (double) after.retained() / before.retained(),
              after.millis() / before.millis()));
    }
    md.append("\nVerdict against the issue (decode straight into typed buffers, no tree of the")
        .append(" data; state peak heap per request against its body and tensors): ");
    Row big = rows.get(rows.size() - 1);
    double peakRatio = (double) big.retained() / (big.body() + big.tensor());
    md.append(
        String.format(
            Locale.ROOT,
            "%s. At 29 MiB the streaming decoder holds %.2fx (body + tensors) at its peak and"
                + " allocates %.2f bytes per decoded tensor byte; the in-flight budget"
                + " (`--max-inflight-bytes`) reserves exactly body + tensors for each request, so it"
                + " accounts for what a request holds.%n",
            peakRatio <= 1.2 ? "met" : "not met",
            peakRatio,
            (double) big.allocated() / big.tensor()));
    return md.toString();
  }
}
