package dev.modelkeeper.benchmarks;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.demo.ConvNet;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.ServerConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The batching benchmark: the demo's convolutional classifier served over loopback with the binary
 * tensor extension of REST, at 1, 8 and 64 closed-loop clients, batching off and on, measured side
 * by side in interleaved rounds; then per-model isolation in as many rounds, the p99 of a light
 * model (iris) idle, beside a core taken by a spinning thread and while the conv model is saturated
 * by 64 clients, in windows of a second that take turns. Writes {@code docs/bench/batching.md},
 * puts the same section into {@code docs/BENCHMARKS.md} (see {@link Report#putSection}) and prints
 * it. A few minutes on two cores. Not thread-safe; it is a program's entry point.
 *
 * <p>{@code java -cp modelkeeper-benchmarks/target/benchmarks.jar
 * dev.modelkeeper.benchmarks.BatchingBench [--docs DIR] [--seconds N] [--rounds N]}
 */
public final class BatchingBench {

  private static final int[] CLIENTS = {1, 8, 64};
  private static final int CONV_BATCH = 32;
  private static final long CONV_DELAY_MICROS = 200;

  /** Length of an isolation window; the kinds of window take turns. */
  private static final long WINDOW_NANOS = 1_000_000_000L;

  /**
   * How long a window settles before its requests count: convnet's queue fills (busy) or drains
   * (idle) meanwhile; several times convnet's p99 at 64 clients here.
   */
  private static final long SETTLE_NANOS = 300_000_000L;

  /** The isolation measurement's kinds of window, in the order they take turns. */
  private static final int IDLE = 0;

  private static final int BUSY = 1;
  private static final int SPIN = 2;
  private static final int KINDS = 3;

  /** Keeps the spinning thread's arithmetic from being optimised away. */
  private static volatile double spinSink;

  private BatchingBench() {}

  /** One measured point. */
  record Point(long requests, long failures, double seconds, long[] sortedNanos) {
    double throughput() {
      return requests / seconds;
    }

    double p50Millis() {
      return Latencies.percentile(sortedNanos, 50) / 1e6;
    }

    double p99Millis() {
      return Latencies.percentile(sortedNanos, 99) / 1e6;
    }
  }

  public static void main(String[] args) throws Exception {
    RunOptions options =
        RunOptions.parse(BatchingBench.class.getName(), args, 2, 6, "scripts/bench-batching.sh");
    Path docs = options.docs;
    int seconds = (int) Math.max(1, Math.round(options.seconds));
    int rounds = options.rounds;
    String command = options.command;
    Instant started = Instant.now();
    CpuSample cpuBefore = CpuSample.now();
    Path work = Files.createTempDirectory("modelkeeper-batching-bench");
    Path off = repository(work.resolve("off"), new ModelConfig.Execution(1, 0, List.of(), 2, 1, 1));
    // each setting at its best concurrency on two cores: a run per core (with batching, two
    // batches at once measured higher than one at a time)
    Path on =
        repository(
            work.resolve("on"),
            new ModelConfig.Execution(CONV_BATCH, CONV_DELAY_MICROS, List.of(), 2, 1, 1));
    // isolation: the saturated convnet capped at one run at a time, one core
    Path capped =
        repository(
            work.resolve("capped"),
            new ModelConfig.Execution(CONV_BATCH, CONV_DELAY_MICROS, List.of(), 1, 1, 1));
    byte[] convBody = convRequest();
    byte[] irisBody = irisRequest();

    double[] floor = inProcessFloor(off);
    log(
        "in-process ONNX Runtime: %.3f ms per single run, %.3f ms per row in runs of %d",
        floor[0], floor[1], CONV_BATCH);

    // ---- batching off vs on, interleaved rounds ----------------------------------------------
    Point[][] offPoints = new Point[CLIENTS.length][rounds];
    Point[][] onPoints = new Point[CLIENTS.length][rounds];
    try (ModelKeeperServer offServer = start(off);
        ModelKeeperServer onServer = start(on)) {
      warm(offServer, "convnet", convBody);
      warm(onServer, "convnet", convBody);
      for (int r = 0; r < rounds; r++) {
        for (int c = 0; c < CLIENTS.length; c++) {
          offPoints[c][r] = load(offServer, "convnet", convBody, CLIENTS[c], seconds);
          log("round %d off %2d clients: %s", r + 1, CLIENTS[c], describe(offPoints[c][r]));
          onPoints[c][r] = load(onServer, "convnet", convBody, CLIENTS[c], seconds);
          log("round %d on  %2d clients: %s", r + 1, CLIENTS[c], describe(onPoints[c][r]));
        }
      }
    }

    // ---- isolation: iris throughout; idle, convnet saturated and a core spinning take turns ----
    Point[] irisIdle = new Point[rounds];
    Point[] irisBusy = new Point[rounds];
    Point[] convBusy = new Point[rounds];
    Point[] irisSpin = new Point[rounds];
    try (ModelKeeperServer server = start(capped)) {
      warm(server, "convnet", convBody);
      warm(server, "iris", irisBody);
      for (int r = 0; r < rounds; r++) {
        Point[] round = isolationRound(server, irisBody, convBody, seconds);
        irisIdle[r] = round[0];
        irisBusy[r] = round[1];
        convBusy[r] = round[2];
        irisSpin[r] = round[3];
        log(
            "round %d iris idle: %s; beside a spinning core: %s; beside a saturated convnet: %s;"
                + " convnet: %s",
            r + 1,
            describe(irisIdle[r]),
            describe(irisSpin[r]),
            describe(irisBusy[r]),
            describe(convBusy[r]));
      }
    }
    double others = CpuSample.now().othersShareSince(cpuBefore);
    String report =
        report(
            started,
            command,
            seconds,
            rounds,
            offPoints,
            onPoints,
            new Point[][] {irisIdle, irisBusy, convBusy, irisSpin},
            others,
            floor);
    Files.createDirectories(docs.resolve("bench"));
    Files.writeString(docs.resolve("bench").resolve("batching.md"), report, StandardCharsets.UTF_8);
    Report.putSection(docs.resolve("BENCHMARKS.md"), report);
    System.out.println(report);
  }

  /**
   * Milliseconds per single-row run and per row of a {@value #CONV_BATCH}-row run of convnet in
   * process, about two seconds each (the same ONNX Runtime session settings as the server's).
   */
  private static double[] inProcessFloor(Path repository) {
    LocalModelRepository repo = new LocalModelRepository(repository);
    dev.modelkeeper.onnx.OnnxModel model =
        dev.modelkeeper.onnx.OnnxModel.load(
            repo.fetch(new dev.modelkeeper.onnx.ModelId("convnet", "1")),
            dev.modelkeeper.onnx.OnnxModelOptions.defaults());
    try {
      double single = perRow(model, 1);
      double batched = perRow(model, CONV_BATCH);
      return new double[] {single, batched};
    } finally {
      try {
        model.clearCache();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static double perRow(dev.modelkeeper.onnx.OnnxModel model, int rows) {
    int n = rows * 3 * ConvNet.SIZE * ConvNet.SIZE;
    float[] x = new float[n];
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < n; i++) {
      x[i] = (float) random.nextDouble();
    }
    java.util.Map<String, dev.modelkeeper.onnx.Tensor> in =
        java.util.Map.of(
            ConvNet.INPUT,
            dev.modelkeeper.onnx.Tensor.ofFloats(
                ConvNet.INPUT, new long[] {rows, 3, ConvNet.SIZE, ConvNet.SIZE}, x));
    for (int i = 0; i < 3; i++) {
      model.infer(in);
    }
    long runs = 0;
    long start = System.nanoTime();
    long end = start + 2_000_000_000L;
    while (System.nanoTime() < end) {
      model.infer(in);
      runs++;
    }
    return (System.nanoTime() - start) / 1e6 / runs / rows;
  }

  /** The demo repository with convnet's execution settings replaced by {@code convnet}. */
  private static Path repository(Path dir, ModelConfig.Execution convnet) throws IOException {
    DemoRepository.materialize(dir);
    Path config = dir.resolve("convnet").resolve("1").resolve(ModelConfig.FILE_NAME);
    ModelConfig old = ModelConfig.parse(Files.readString(config));
    ModelConfig fresh =
        new ModelConfig(old.description(), old.labels(), old.expectedSizeBytes(), convnet);
    Files.writeString(config, fresh.toJson(), StandardCharsets.UTF_8);
    return dir;
  }

  private static ModelKeeperServer start(Path repository) {
    return ModelKeeperServer.start(
        ServerConfig.of(new LocalModelRepository(repository))
            .network(n -> n.withHost("127.0.0.1").withPort(0).withGrpcPort(-1))
            .budgets(m -> m.withMaxModels(4))
            .timeouts(t -> t.withRequest(Duration.ofSeconds(30))));
  }

  private static void warm(ModelKeeperServer server, String model, byte[] body) {
    load(server, model, body, 1, 5); // loads the model (its first request may take seconds)
    Point p = load(server, model, body, 4, 2);
    if (p.failures() > 0 || p.requests() == 0) {
      throw new IllegalStateException("warm-up of " + model + " failed: " + describe(p));
    }
  }

  /** {@code clients} closed-loop clients for {@code seconds}; each request must answer 200. */
  static Point load(ModelKeeperServer server, String model, byte[] body, int clients, int seconds) {
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    return run(
        server,
        model,
        body,
        clients,
        new double[] {seconds},
        (start, answered) -> answered <= end ? 0 : -1,
        () -> System.nanoTime() < end)[0];
  }

  /** Which series a request counts in. */
  @FunctionalInterface
  private interface Series {
    /** The series of a request sent at {@code start} and answered at {@code end}, -1 for none. */
    int of(long start, long end);
  }

  /** Lets a client send its next request. */
  @FunctionalInterface
  private interface Pace {
    /** Waits, if need be, until the next request may be sent; false when the load is over. */
    boolean next() throws InterruptedException;
  }

  /**
   * {@code clients} closed-loop clients of {@code model}, each sending when {@code pace} lets it
   * until it says the load is over; each request must answer 200. Returns one point per entry of
   * {@code seconds} (the time each series was measured), holding the requests {@code series} puts
   * in it; every point carries the failures of the whole load.
   */
  private static Point[] run(
      ModelKeeperServer server,
      String model,
      byte[] body,
      int clients,
      double[] seconds,
      Series series,
      Pace pace) {
    String path = "/v2/models/" + model + "/infer";
    Map<String, String> headers =
        Map.of(
            "Content-Type",
            "application/octet-stream",
            "Inference-Header-Content-Length",
            Integer.toString(headerLength(body)));
    AtomicLong failures = new AtomicLong();
    List<List<Latencies>> parts = new ArrayList<>();
    for (int k = 0; k < seconds.length; k++) {
      parts.add(new ArrayList<>());
    }
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      Latencies[] mine = new Latencies[seconds.length];
      for (int k = 0; k < seconds.length; k++) {
        mine[k] = new Latencies();
        parts.get(k).add(mine[k]);
      }
      Thread t =
          new Thread(
              () -> {
                // one keep-alive connection per client, its I/O done by this thread (see the
                // report's note on the load generator)
                BlockingHttpClient http =
                    new BlockingHttpClient("127.0.0.1", server.port(), Duration.ofSeconds(30));
                try {
                  while (pace.next()) {
                    long s = System.nanoTime();
                    try {
                      BlockingHttpClient.Response r = http.post(path, headers, body);
                      long e = System.nanoTime();
                      int k = series.of(s, e);
                      if (r.status() != 200) {
                        failures.incrementAndGet();
                      } else if (k >= 0) {
                        mine[k].record(e - s);
                      }
                    } catch (IOException e) {
                      failures.incrementAndGet();
                      closeQuietly(http); // the next request opens a fresh connection
                    }
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt(); // the harness gave up waiting: stop
                } finally {
                  closeQuietly(http);
                }
              },
              "client-" + i);
      threads.add(t);
    }
    threads.forEach(Thread::start);
    long joinBy =
        System.nanoTime()
            + Duration.ofSeconds((long) Arrays.stream(seconds).sum() * 3 + 60).toNanos();
    try {
      for (Thread t : threads) {
        t.join(Math.max(1, (joinBy - System.nanoTime()) / 1_000_000));
        if (t.isAlive()) {
          threads.forEach(Thread::interrupt);
          throw new IllegalStateException("a client of " + model + " did not stop in time");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
    Point[] points = new Point[seconds.length];
    for (int k = 0; k < seconds.length; k++) {
      long[] sorted = Latencies.mergeSorted(parts.get(k));
      points[k] = new Point(sorted.length, failures.get(), seconds[k], sorted);
    }
    return points;
  }

  /**
   * One round of the isolation measurement: iris from one client for {@code 3 * seconds} seconds,
   * in windows of {@link #WINDOW_NANOS} that take turns: idle (nothing else runs), busy (64 clients
   * saturate convnet) and spin (one thread of the harness computes without pause, taking a core but
   * doing no server work: what iris sees when a core is gone without the server's own work on it).
   * The kinds alternate second by second, so a change in what else runs on the machine falls on all
   * three. A request counts only when it starts after its window settled ({@link #SETTLE_NANOS})
   * and ends in the same window. Returns iris idle, iris busy, convnet busy and iris beside the
   * spinning thread.
   */
  private static Point[] isolationRound(
      ModelKeeperServer server, byte[] irisBody, byte[] convBody, int seconds) {
    long start = System.nanoTime() + WINDOW_NANOS; // every client has started by then
    int windows = KINDS * seconds;
    long end = start + windows * WINDOW_NANOS;
    double measured = seconds * (WINDOW_NANOS - SETTLE_NANOS) / 1e9;
    double[] perKind = {measured, measured, measured};
    Series series =
        (s, e) -> {
          long w = Math.floorDiv(s - start, WINDOW_NANOS);
          boolean counted =
              s >= start
                  && e <= end
                  && s - start - w * WINDOW_NANOS >= SETTLE_NANOS
                  && Math.floorDiv(e - start, WINDOW_NANOS) == w;
          return counted ? (int) (w % KINDS) : -1;
        };
    AtomicReference<Point> convBusy = new AtomicReference<>();
    Pace busyWindows = () -> awaitWindow(BUSY, start, end);
    Thread saturate =
        new Thread(
            () ->
                convBusy.set(
                    run(server, "convnet", convBody, 64, perKind, series, busyWindows)[BUSY]),
            "saturate");
    Thread spin =
        new Thread(
            () -> {
              double x = 1;
              try {
                while (awaitWindow(SPIN, start, end)) {
                  for (int i = 0; i < 100_000; i++) {
                    x = x * 1.000_000_1 + 1e-9;
                  }
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              spinSink = x;
            },
            "spin");
    saturate.start();
    spin.start();
    Point[] iris = run(server, "iris", irisBody, 1, perKind, series, () -> System.nanoTime() < end);
    try {
      saturate.join(Duration.ofSeconds(windows + 120L).toMillis());
      spin.join(Duration.ofSeconds(60).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Point conv = convBusy.get();
    if (conv == null || spin.isAlive()) {
      throw new IllegalStateException(
          "the saturating load of convnet or the spinning thread did not finish");
    }
    return new Point[] {iris[IDLE], iris[BUSY], conv, iris[SPIN]};
  }

  /**
   * Waits until a window of {@code kind} (sleeping through the others); false once {@code end} has
   * passed.
   */
  private static boolean awaitWindow(int kind, long start, long end) throws InterruptedException {
    long now = System.nanoTime();
    long w = Math.floorDiv(now - start, WINDOW_NANOS);
    while (now < end && (w < 0 || w % KINDS != kind)) {
      TimeUnit.NANOSECONDS.sleep(Math.min(start + (w + 1) * WINDOW_NANOS, end) - now);
      now = System.nanoTime();
      w = Math.floorDiv(now - start, WINDOW_NANOS);
    }
    return now < end;
  }

  private static void closeQuietly(BlockingHttpClient http) {
    try {
      http.close();
    } catch (IOException e) {
      // the connection is gone either way
    }
  }

  /** A binary-extension request body: a JSON header, then the tensor's little-endian bytes. */
  private static byte[] body(String header, ByteBuffer data) {
    byte[] h = header.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[h.length + data.capacity()];
    System.arraycopy(h, 0, out, 0, h.length);
    data.position(0);
    data.get(out, h.length, data.capacity());
    return out;
  }

  private static int headerLength(byte[] body) {
    int depth = 0;
    for (int i = 0; i < body.length; i++) {
      if (body[i] == '{') {
        depth++;
      } else if (body[i] == '}' && --depth == 0) {
        return i + 1;
      }
    }
    throw new IllegalStateException("no JSON header");
  }

  private static byte[] convRequest() {
    int n = 3 * ConvNet.SIZE * ConvNet.SIZE;
    ByteBuffer data = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < n; i++) {
      data.putFloat((float) random.nextDouble());
    }
    return body(
        "{\"inputs\":[{\"name\":\"image\",\"datatype\":\"FP32\",\"shape\":[1,3,64,64],"
            + "\"parameters\":{\"binary_data_size\":"
            + n * 4
            + "}}]}",
        data);
  }

  private static byte[] irisRequest() {
    ByteBuffer data = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    data.putFloat(5.1f).putFloat(3.5f).putFloat(1.4f).putFloat(0.2f);
    return body(
        "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
            + "\"parameters\":{\"binary_data_size\":16}}]}",
        data);
  }

  private static String isolationRow(String label, Point p) {
    return String.format(
        Locale.ROOT,
        "| %s | %.0f | %.2f | %.2f | %d |\n",
        label,
        p.throughput(),
        p.p50Millis(),
        p.p99Millis(),
        p.failures());
  }

  private static String describe(Point p) {
    return String.format(
        Locale.ROOT,
        "%.0f req/s, p50 %.2f ms, p99 %.2f ms, %d failed",
        p.throughput(),
        p.p50Millis(),
        p.p99Millis(),
        p.failures());
  }

  private static void log(String format, Object... args) {
    System.out.println(String.format(Locale.ROOT, format, args));
  }

  /** Every round's requests and latencies of one setting pooled. */
  private static Point pooled(Point[] rounds) {
    long requests = 0;
    long failures = 0;
    double seconds = 0;
    List<Latencies> parts = new ArrayList<>();
    for (Point p : rounds) {
      requests += p.requests();
      failures += p.failures();
      seconds += p.seconds();
      Latencies l = new Latencies();
      for (long v : p.sortedNanos()) {
        l.record(v);
      }
      parts.add(l);
    }
    return new Point(requests, failures, seconds, Latencies.mergeSorted(parts));
  }

  private static String report(
      Instant started,
      String command,
      int seconds,
      int rounds,
      Point[][] off,
      Point[][] on,
      Point[][] isolationRounds,
      double others,
      double[] floor) {
    StringBuilder sb = new StringBuilder();
    String date =
        DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(started.atOffset(ZoneOffset.UTC).withNano(0));
    sb.append("## Batching\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "Measured %s UTC on %s; other processes kept %.0f%% of the CPUs busy during the run"
                + " (the machine is shared). Command: `%s` (%d s per point, %d interleaved rounds,"
                + " about %d min).\n\n",
            date,
            Machine.summary(),
            others * 100,
            command,
            seconds,
            rounds,
            Math.max(1, Duration.between(started, Instant.now()).toMinutes())));
    sb.append("The demo's `convnet` (FP32 `[-1, 3, 64, 64]` in, three conv/ReLU/max-pool blocks, a")
        .append(
            " "
                + ConvNet.HIDDEN
                + "-unit dense layer, 10 classes) over loopback REST with the binary tensor")
        .append(" extension, closed-loop clients in the same JVM as the server, each with one")
        .append(" keep-alive connection over a plain socket on which it does its own I/O")
        .append(" (`BlockingHttpClient`, as load generators such as wrk do, so the client adds no")
        .append(" thread hand-offs of its own). Off: `max_batch_size` 1,")
        .append(" `max_concurrency` 2 (a run per core); on: `max_batch_size` ")
        .append(CONV_BATCH)
        .append(", `max_queue_delay` ")
        .append(CONV_DELAY_MICROS)
        .append(" µs, `max_concurrency` 2 (a batch per core; one batch at a time measured lower,")
        .append(" since it leaves the second core to the HTTP side alone); one intra-op thread")
        .append(" each.")
        .append(" Figures pool every round of a setting.\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "In-process floor, same run (`OnnxModel.infer` on one thread, no server): %.3f ms per"
                + " single-row run, %.3f ms per row in runs of %d rows (%.2fx less per row).\n\n",
            floor[0],
            floor[1],
            CONV_BATCH,
            floor[0] / floor[1]));
    sb.append(
        "| clients | off req/s | on req/s | ratio | off p50 ms | on p50 ms | off p99 ms | on p99 ms | p99 ratio | failed |\n");
    sb.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    double ratio64 = 0;
    double p99Ratio64 = 0;
    for (int c = 0; c < CLIENTS.length; c++) {
      Point a = pooled(off[c]);
      Point b = pooled(on[c]);
      double ratio = b.throughput() / a.throughput();
      double p99Ratio = b.p99Millis() / a.p99Millis();
      if (CLIENTS[c] == 64) {
        ratio64 = ratio;
        p99Ratio64 = p99Ratio;
      }
      sb.append(
          String.format(
              Locale.ROOT,
              "| %d | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2f | %.2f | %.2fx | %d |\n",
              CLIENTS[c],
              a.throughput(),
              b.throughput(),
              ratio,
              a.p50Millis(),
              b.p50Millis(),
              a.p99Millis(),
              b.p99Millis(),
              p99Ratio,
              a.failures() + b.failures()));
    }
    int last = CLIENTS.length - 1;
    sb.append("\nEach round's throughput ratio at ").append(CLIENTS[last]).append(" clients:");
    for (int r = 0; r < off[last].length; r++) {
      sb.append(
          String.format(
              Locale.ROOT, " %.2fx", on[last][r].throughput() / off[last][r].throughput()));
    }
    sb.append(" (rounds differ as other processes' load changes; the table pools them).\n");
    Point irisIdle = pooled(isolationRounds[0]);
    Point irisBusy = pooled(isolationRounds[1]);
    Point convBusy = pooled(isolationRounds[2]);
    Point irisSpin = pooled(isolationRounds[3]);
    double isolation = irisBusy.p99Millis() / irisIdle.p99Millis();
    double besideSpin = irisBusy.p99Millis() / irisSpin.p99Millis();
    boolean everyRoundMet = true;
    StringBuilder eachRound = new StringBuilder();
    StringBuilder eachRoundSpin = new StringBuilder();
    for (int r = 0; r < isolationRounds[0].length; r++) {
      double ratio = isolationRounds[1][r].p99Millis() / isolationRounds[0][r].p99Millis();
      everyRoundMet &= ratio <= 2;
      eachRound.append(String.format(Locale.ROOT, " %.2fx", ratio));
      eachRoundSpin.append(
          String.format(
              Locale.ROOT,
              " %.2fx",
              isolationRounds[1][r].p99Millis() / isolationRounds[3][r].p99Millis()));
    }
    sb.append("\nPer-model isolation: `iris` from one client, idle and while 64 clients saturate")
        .append(
            " `convnet` (batching on, `max_concurrency` 1, so it holds at most one core) on the")
        .append(" same server. In each round iris runs throughout, in windows of ")
        .append(WINDOW_NANOS / 1_000_000)
        .append(" ms that take turns: idle; busy, convnet's clients sending (they wait in the")
        .append(" other windows); and spin, one thread of the harness computing without pause, so")
        .append(" a core is taken but no server work is done on it. A change in the machine's")
        .append(" other load falls on all three. A request counts when it starts ")
        .append(SETTLE_NANOS / 1_000_000)
        .append(" ms or more into its window (convnet's queue filling or draining) and ends in")
        .append(" it. Each row is measured for ")
        .append(String.format(Locale.ROOT, "%.1f", seconds * (WINDOW_NANOS - SETTLE_NANOS) / 1e9))
        .append(" s per round; failures are counted over whole rounds.\n\n");
    sb.append("| iris | req/s | p50 ms | p99 ms | failed |\n|---|---:|---:|---:|---:|\n");
    sb.append(isolationRow("idle", irisIdle))
        .append(isolationRow("beside a spinning core", irisSpin))
        .append(isolationRow("beside saturated convnet", irisBusy));
    sb.append(
        String.format(
            Locale.ROOT,
            "\n(`convnet` meanwhile: %.0f req/s, p99 %.2f ms, %d failed.)\n\n",
            convBusy.throughput(),
            convBusy.p99Millis(),
            convBusy.failures()));
    sb.append("Each round's iris p99 beside the saturated model against its idle p99 of the same")
        .append(" round:")
        .append(eachRound)
        .append("; against its p99 beside the spinning core:")
        .append(eachRoundSpin)
        .append(" (the table pools the rounds). On this virtual machine a one-client loop on an")
        .append(" otherwise idle machine also waits for an idle virtual CPU to wake, which a busy")
        .append(" core spares it: the spinning row is the stricter baseline, and where idle p99")
        .append(" exceeds it the ratio to idle flatters the server.\n\n");
    sb.append("Verdicts against the issue's targets:\n\n");
    sb.append(
        String.format(
            Locale.ROOT,
            "- 64 clients, throughput with batching ≥ 2x: %.2fx, %s.\n",
            ratio64,
            ratio64 >= 2 ? "met" : "MISSED"));
    sb.append(
        String.format(
            Locale.ROOT,
            "- 64 clients, p99 with batching ≤ 1.5x: %.2fx, %s.\n",
            p99Ratio64,
            p99Ratio64 <= 1.5 ? "met" : "MISSED"));
    sb.append(
        String.format(
            Locale.ROOT,
            "- iris p99 beside a saturated model ≤ 2x its idle p99: %.2fx, %s.\n",
            isolation,
            isolation > 2
                ? "MISSED"
                : everyRoundMet ? "met" : "met when pooled, not in every round"));
    sb.append(
        String.format(
            Locale.ROOT,
            "- the same against its p99 beside a spinning core (stricter, not the issue's): %.2fx,"
                + " %s.\n",
            besideSpin,
            besideSpin <= 2 ? "within 2x" : "above 2x"));
    if (ratio64 < 2) {
      sb.append("\nWhere the throughput goes: batching divides only the model's own cost per row")
          .append(
              " (the floor above), not the per-request cost of HTTP, decoding, encoding and the")
          .append(" load generator, which here share the same two cores, partly taken by other")
          .append(" processes; the end-to-end ratio is therefore below the in-process one.\n");
    }
    if (!everyRoundMet || besideSpin > 2) {
      sb.append("\nWhere iris's tail goes: the two models share no queue, worker or model thread")
          .append(" (iris runs on the HTTP thread that received it, convnet's batches on its own")
          .append(" executor, one at a time); they share the two cores. Losing a core alone does")
          .append(" not lengthen iris's tail (the spinning row). Measured separately on this")
          .append(" machine (2026-12-02): convnet's model thread in the lowest scheduling class")
          .append(" (`SCHED_IDLE`, set by hand) did not move the ratio beyond its spread, and the")
          .append(" slowest 1% of iris's requests follow young-collection pauses no more often")
          .append(" than chance. What remains is the HTTP work of convnet's requests: each")
          .append(" answered batch sets 32 clients sending 48 KB each, which the second core")
          .append(" receives and decodes in a burst, and an iris request that arrives during one")
          .append(" waits its turn.\n");
    }
    return sb.toString();
  }
}
