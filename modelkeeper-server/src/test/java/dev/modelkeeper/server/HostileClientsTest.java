package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.server.support.RawHttp;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clients as an attacker would write them, on loopback, against a server in a JVM with a 512 MiB
 * heap (tagged {@code hostile}, it runs in its own surefire execution with {@code -Xmx512m}): many
 * large bodies at once, hundreds of slow bodies, truncated and broken bodies, uploads abandoned
 * halfway. Every case is bounded in count and time.
 */
@Tag("hostile")
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class HostileClientsTest {

  private static final String INFER = "/v2/models/big/infer";
  private static final String SMALL_INFER =
      "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [2], \"data\": [1, 2]}]}";

  @Test
  void fortyConcurrent29MiBInferences_answer200Or503_andHealthStaysFast() throws Exception {
    assertThat(Runtime.getRuntime().maxMemory()).isLessThanOrEqualTo(512L << 20);
    try (ModelKeeperServer server =
        TestServer.fake(
            FakeModels.of("big/1"), b -> b.timeouts(t -> t.withAdmission(Duration.ofSeconds(3))))) {
      LiveProbe probe = new LiveProbe(server.port());
      probe.start();
      ExecutorService clients = Executors.newFixedThreadPool(40);
      List<Future<RawHttp.Response>> answers = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        answers.add(clients.submit(() -> largeInference(server.port())));
      }
      Map<Integer, Integer> statuses = new TreeMap<>();
      for (Future<RawHttp.Response> a : answers) {
        RawHttp.Response r = a.get(120, TimeUnit.SECONDS);
        statuses.merge(r == null ? -1 : r.status(), 1, Integer::sum);
        if (r != null && r.status() == 503) {
          assertThat(r.header("Retry-After")).isNotNull();
          assertThat(r.body()).contains("\"error\"");
        }
      }
      clients.shutdown();
      probe.stop();
      assertThat(statuses.keySet())
          .as("statuses %s", statuses)
          .containsAnyOf(200)
          .isSubsetOf(200, 503);
      assertThat(probe.failures()).isEmpty();
      assertThat(probe.slowest())
          .as("probe answers (at:took ms) %s", probe.samples)
          .isLessThan(Duration.ofSeconds(1));
      await().atMost(Duration.ofSeconds(10)).until(() -> server.inflightBytes() == 0);
    }
  }

  @Test
  void threeHundredSlowBodiesHeldThirtySeconds_leaveHealthAndInferenceFast() throws Exception {
    int slow = 300;
    int announced = 10_000;
    try (ModelKeeperServer server =
        TestServer.fake(
            FakeModels.of("big/1"), b -> b.timeouts(t -> t.withBodyRead(Duration.ofSeconds(60))))) {
      List<RawHttp> connections = new ArrayList<>();
      try {
        for (int i = 0; i < slow; i++) {
          connections.add(
              RawHttp.connect(server.port())
                  .send(RawHttp.post(INFER, "Content-Length: " + announced) + "{"));
        }
        // every slow body is being received: its announced bytes are reserved
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> server.inflightBytes() == (long) slow * announced);
        Http http = Http.to(server.port());
        List<Long> latencies = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        long nextDrip = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < end) {
          if (System.nanoTime() >= nextDrip) {
            for (RawHttp c : connections) {
              c.send(" "); // one byte per connection every 10 s
            }
            nextDrip += Duration.ofSeconds(10).toNanos();
          }
          long start = System.nanoTime();
          Http.Response live = http.get("/v2/health/live");
          Http.Response infer = http.post(INFER, SMALL_INFER);
          latencies.add(System.nanoTime() - start);
          if (live.status() != 200 || infer.status() != 200) {
            failures.add(live + " / " + infer);
          }
        }
        assertThat(failures).isEmpty();
        Collections.sort(latencies);
        long p99 = latencies.get((int) Math.ceil(latencies.size() * 0.99) - 1);
        assertThat(latencies.size()).isGreaterThan(30);
        assertThat(Duration.ofNanos(p99)).isLessThan(Duration.ofSeconds(1));
        // the slow clients were held all along, not dropped early
        assertThat(server.inflightBytes()).isEqualTo((long) slow * announced);
      } finally {
        for (RawHttp c : connections) {
          c.close();
        }
      }
      await().atMost(Duration.ofSeconds(20)).until(() -> server.inflightBytes() == 0);
    }
  }

  @Test
  void truncatedAndBrokenChunkedBodies_answerNo5xx_andLogNoStackTrace() throws Exception {
    String json = "application/json";
    String[][] cases = {
      // headers, body sent before the client half-closes
      {RawHttp.post(INFER, "Content-Type: " + json, "Content-Length: 1000"), SMALL_INFER},
      {RawHttp.post(INFER, "Transfer-Encoding: chunked"), "5\r\n{\"inp\r\nZZZ\r\n\r\n"},
      {RawHttp.post(INFER, "Transfer-Encoding: chunked"), "64\r\n{\"inputs\": [\r\n"},
      {RawHttp.post(INFER, "Transfer-Encoding: chunked"), "5\r\n{\"inp\r\n"},
      {RawHttp.post(INFER, "Transfer-Encoding: chunked"), "5\r\n{\"inputs\"\r\n0\r\n\r\n"},
      {RawHttp.post("/model/add", "Content-Length: 50"), "{\"model_id\""},
    };
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("big/1"), b -> b)) {
      List<String> problems = new ArrayList<>();
      String log =
          capturingStderr(
              () -> {
                for (String[] c : cases) {
                  try (RawHttp raw = RawHttp.connect(server.port())) {
                    raw.send(c[0] + c[1]).shutdownOutput();
                    RawHttp.Response r = raw.readResponse();
                    if (r != null && (r.status() >= 500 || !r.isJson())) {
                      problems.add(c[1].trim() + " -> " + r);
                    }
                  }
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> server.inflightBytes() == 0);
              });
      assertThat(problems).isEmpty();
      assertThat(log).doesNotContain("\tat ").doesNotContain("Exception:");
      assertThat(Http.to(server.port()).post(INFER, SMALL_INFER).status()).isEqualTo(200);
    }
  }

  @Test
  void clientDisconnectingMidUpload_returnsItsBytesToTheBudget() throws Exception {
    int announced = 1 << 20;
    try (ModelKeeperServer server = TestServer.fake(FakeModels.of("big/1"), b -> b)) {
      Http http = Http.to(server.port());
      try (RawHttp raw = RawHttp.connect(server.port())) {
        raw.send(RawHttp.post(INFER, "Content-Length: " + announced) + "{\"inputs\": [");
        raw.send(new byte[200_000]);
        await().atMost(Duration.ofSeconds(10)).until(() -> inflightGauge(http) == announced);
      }
      await().atMost(Duration.ofSeconds(10)).until(() -> inflightGauge(http) == 0);
    }
  }

  // ------------------------------------------------------------------------ helpers

  private static double inflightGauge(Http http) {
    for (String line : http.get("/metrics").body().split("\n")) {
      if (line.startsWith("modelkeeper_inflight_request_bytes ")) {
        return Double.parseDouble(line.substring(line.indexOf(' ') + 1));
      }
    }
    throw new AssertionError("no modelkeeper_inflight_request_bytes gauge");
  }

  /**
   * Sends a 29 MiB FP32 inference request, generated as it is sent, asking only for the small
   * output, with {@code Expect: 100-continue} (so a request refused before its body is read is not
   * uploaded); the final answer, or null when the connection closed without one.
   */
  private static RawHttp.Response largeInference(int port) throws Exception {
    byte[] head =
        "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [7600000], \"data\": ["
            .getBytes(StandardCharsets.US_ASCII);
    byte[] tail = "0.5]}], \"outputs\": [{\"name\": \"n\"}]}".getBytes(StandardCharsets.US_ASCII);
    long elements = 7_600_000;
    InputStream body =
        new GeneratedBody(head, "0.5,".getBytes(StandardCharsets.US_ASCII), elements - 1, tail);
    long length = head.length + 4 * (elements - 1) + tail.length;
    assertThat(length).isBetween(28L << 20, 30L << 20);
    try (RawHttp raw = RawHttp.connect(port, Duration.ofSeconds(90))) {
      raw.send(
          RawHttp.post(
              INFER,
              "Content-Type: application/json",
              "Expect: 100-continue",
              "Content-Length: " + length));
      RawHttp.Response first = raw.readResponse();
      if (first == null || first.status() != 100) {
        return first;
      }
      byte[] buf = new byte[64 * 1024];
      for (int n; (n = body.read(buf, 0, buf.length)) > 0; ) {
        raw.send(buf, 0, n);
      }
      return raw.readResponse();
    }
  }

  /** head, then {@code repeat} copies of {@code unit}, then tail; never held in memory whole. */
  private static final class GeneratedBody extends InputStream {
    private final byte[] head;
    private final byte[] unit;
    private final byte[] tail;
    private final long length;
    private final long middleEnd;
    private long pos;

    GeneratedBody(byte[] head, byte[] unit, long repeat, byte[] tail) {
      this.head = head;
      this.unit = unit;
      this.tail = tail;
      this.middleEnd = head.length + unit.length * repeat;
      this.length = middleEnd + tail.length;
    }

    @Override
    public int read() {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (pos >= length) {
        return -1;
      }
      int n = (int) Math.min(len, length - pos);
      for (int i = 0; i < n; i++, pos++) {
        b[off + i] =
            pos < head.length
                ? head[(int) pos]
                : pos < middleEnd
                    ? unit[(int) ((pos - head.length) % unit.length)]
                    : tail[(int) (pos - middleEnd)];
      }
      return n;
    }
  }

  /** Asks {@code /v2/health/live} every 100 ms on its own connection and times each answer. */
  private static final class LiveProbe {
    private final Http http;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private volatile long slowestNanos;
    private final long began = System.nanoTime(); // for the samples' offsets
    private final ConcurrentLinkedQueue<String> samples = new ConcurrentLinkedQueue<>();
    private final Thread thread;

    LiveProbe(int port) {
      this.http = Http.to(port);
      this.thread = new Thread(this::run, "live-probe");
      thread.setDaemon(true);
    }

    /** Starts probing after one untimed request, so client start-up is not counted. */
    void start() {
      assertThat(http.get("/v2/health/live").status()).isEqualTo(200);
      thread.start();
    }

    private void run() {
      do {
        long start = System.nanoTime();
        try {
          Http.Response r = http.get("/v2/health/live");
          if (r.status() != 200) {
            failures.add(r.toString());
          }
        } catch (RuntimeException e) {
          failures.add(e.toString());
        }
        long took = System.nanoTime() - start;
        slowestNanos = Math.max(slowestNanos, took);
        samples.add(
            Duration.ofNanos(start - began).toMillis() + "ms:" + Duration.ofNanos(took).toMillis());
      } while (!awaitStop());
    }

    /** Waits out the probing interval; true once {@link #stop} was called (or on interrupt). */
    private boolean awaitStop() {
      try {
        return stopped.await(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return true;
      }
    }

    void stop() throws InterruptedException {
      stopped.countDown();
      thread.join(10_000);
    }

    List<String> failures() {
      return new ArrayList<>(failures);
    }

    Duration slowest() {
      return Duration.ofNanos(slowestNanos);
    }
  }

  @FunctionalInterface
  private interface Body {
    void run() throws Exception;
  }

  /** What the server logged (slf4j-simple writes to the current System.err) while body ran. */
  private static String capturingStderr(Body body) throws Exception {
    PrintStream before = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      body.run();
    } finally {
      System.setErr(before);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    before.print(log);
    return log;
  }
}
