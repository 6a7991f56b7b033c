package dev.modelkeeper.onnx.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Downloads against a loopback server: single flight across threads and processes, faults. */
class ArtifactCacheTest {

  private static final String PATH = "m/1/model.onnx";

  @TempDir Path tmp;
  private ArtifactServer server;
  private HttpClient client;
  private ExecutorService pool;
  private byte[] body;
  private String sha;

  @BeforeEach
  void setUp() throws Exception {
    server = new ArtifactServer();
    client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    pool = Executors.newCachedThreadPool();
    body = new byte[3 << 20];
    new SplittableRandom(1).nextBytes(body);
    sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
  }

  @AfterEach
  void tearDown() throws Exception {
    server.close();
    pool.shutdownNow();
    assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
  }

  /** Counts listener events and opens latches on the interesting ones. */
  static final class Events implements ArtifactCache.Listener {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch joined = new CountDownLatch(1);
    final AtomicInteger corrupt = new AtomicInteger();

    @Override
    public void downloadStarted(URI uri, String sha256, long size) {
      started.countDown();
    }

    @Override
    public void joinedDownload(URI uri, String sha256) {
      joined.countDown();
    }

    @Override
    public void corruptEntryDeleted(Path file) {
      corrupt.incrementAndGet();
    }
  }

  private ArtifactCache cache(Duration timeout, ArtifactCache.Listener listener) {
    return new ArtifactCache(tmp.resolve("cache"), client, timeout, listener);
  }

  /** Files in the cache other than lock files. */
  private List<Path> artifacts(ArtifactCache cache) throws IOException {
    try (Stream<Path> s = Files.list(cache.objectsDir())) {
      return s.filter(p -> !p.getFileName().toString().endsWith(".lock"))
          .collect(Collectors.toList());
    }
  }

  @Test
  void fetch_twoThreadsOneArtifact_downloadOnce() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.GATED);
    Events events = new Events();
    ArtifactCache cache = cache(Duration.ofSeconds(30), events);

    Future<Path> first = pool.submit(() -> cache.fetch(server.uri(PATH), sha, body.length));
    assertThat(events.started.await(10, TimeUnit.SECONDS)).isTrue();
    Future<Path> second = pool.submit(() -> cache.fetch(server.uri(PATH), sha, body.length));
    assertThat(events.joined.await(10, TimeUnit.SECONDS)).isTrue();
    server.release();

    Path a = first.get(20, TimeUnit.SECONDS);
    Path b = second.get(20, TimeUnit.SECONDS);
    assertThat(a).isEqualTo(b);
    assertThat(Files.readAllBytes(a)).isEqualTo(body);
    assertThat(server.requests(PATH)).isEqualTo(1);
    assertThat(cache.downloadCount()).isEqualTo(1);
  }

  @Test
  void fetch_joinerOfFailingDownload_getsTheSameFailureWithoutSecondRequest() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.GATED_CORRUPT);
    Events events = new Events();
    ArtifactCache cache = cache(Duration.ofSeconds(30), events);

    Future<Path> first = pool.submit(() -> cache.fetch(server.uri(PATH), sha, body.length));
    assertThat(events.started.await(10, TimeUnit.SECONDS)).isTrue();
    Future<Path> second = pool.submit(() -> cache.fetch(server.uri(PATH), sha, body.length));
    assertThat(events.joined.await(10, TimeUnit.SECONDS)).isTrue();
    server.release();

    for (Future<Path> f : List.of(first, second)) {
      assertThatThrownBy(() -> f.get(20, TimeUnit.SECONDS))
          .hasCauseInstanceOf(ArtifactIntegrityException.class);
    }
    assertThat(server.requests(PATH)).isEqualTo(1);
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_twoCachesOnOneFolderInOneProcess_downloadOnce() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.GATED);
    Events events = new Events();
    ArtifactCache first = cache(Duration.ofSeconds(30), events);
    CountDownLatch waiting = new CountDownLatch(1);
    ArtifactCache second =
        cache(
            Duration.ofSeconds(30),
            new ArtifactCache.Listener() {
              @Override
              public void waitingForLock(URI uri, String sha256) {
                waiting.countDown();
              }
            });
    Future<Path> a = pool.submit(() -> first.fetch(server.uri(PATH), sha, body.length));
    assertThat(events.started.await(10, TimeUnit.SECONDS)).isTrue(); // first holds the file lock
    Future<Path> b = pool.submit(() -> second.fetch(server.uri(PATH), sha, body.length));
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
    server.release();

    assertThat(b.get(20, TimeUnit.SECONDS)).isEqualTo(a.get(20, TimeUnit.SECONDS));
    assertThat(server.requests(PATH)).isEqualTo(1);
    assertThat(first.downloadCount() + second.downloadCount()).isEqualTo(1);
  }

  @Test
  void fetch_twoProcessesOneArtifact_downloadOnce() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.GATED);
    Events events = new Events();
    ArtifactCache cache = cache(Duration.ofSeconds(60), events);
    Future<Path> local = pool.submit(() -> cache.fetch(server.uri(PATH), sha, body.length));
    assertThat(events.started.await(10, TimeUnit.SECONDS)).isTrue(); // we hold the file lock now

    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                CacheFetchMain.class.getName(),
                tmp.resolve("cache").toString(),
                server.uri(PATH).toString(),
                sha,
                Long.toString(body.length))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  lines.add(line);
                }
              } catch (IOException ignored) {
                // the child ended
              }
            });
    reader.start();
    try {
      assertThat(lines.poll(30, TimeUnit.SECONDS)).isEqualTo("STARTED");
      assertThat(lines.poll(30, TimeUnit.SECONDS)).isEqualTo("WAITING"); // blocked on our lock
      server.release();

      Path mine = local.get(30, TimeUnit.SECONDS);
      String done = lines.poll(30, TimeUnit.SECONDS);
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(child.exitValue()).isZero();
      assertThat(done).isEqualTo("DONE downloads=0 path=" + mine);
      assertThat(server.requests(PATH)).isEqualTo(1);
      assertThat(Files.readAllBytes(mine)).isEqualTo(body);
    } finally {
      child.destroyForcibly();
      reader.join(10_000);
      assertThat(reader.isAlive()).isFalse();
    }
  }

  @Test
  void fetch_checksumMismatch_throwsIntegrityAndLeavesNoFile() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.CORRUPT);
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(ArtifactIntegrityException.class)
        .hasMessageContaining("SHA-256");
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_connectionDroppedMidBody_throwsAndLeavesNoFile() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.DROPPED);
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(ArtifactDownloadException.class)
        .hasMessageContaining(PATH);
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_shortBody_throwsTruncatedAndLeavesNoFile() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.SHORT);
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(ArtifactIntegrityException.class)
        .hasMessageContaining("truncated");
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_serverStallsMidBody_timesOutAndLeavesNoFile() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.STALLED_BODY);
    ArtifactCache cache = cache(Duration.ofMillis(700), new Events());
    long start = System.nanoTime();
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(DownloadTimeoutException.class)
        .hasMessageContaining("did not finish");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_serverStallsBeforeHeaders_timesOutAndLeavesNoFile() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.STALLED_HEADERS);
    ArtifactCache cache = cache(Duration.ofMillis(700), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(DownloadTimeoutException.class);
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_httpError_throwsDownloadException() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.MISSING);
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(ArtifactDownloadException.class)
        .hasMessageContaining("HTTP 404");
    assertThat(artifacts(cache)).isEmpty();
  }

  @Test
  void fetch_cachedCopy_isReusedWithoutRequest() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.NORMAL);
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    Path first = cache.fetch(server.uri(PATH), sha, body.length);
    Path again =
        cache(Duration.ofSeconds(10), new Events()).fetch(server.uri(PATH), sha, body.length);
    assertThat(again).isEqualTo(first);
    assertThat(server.requests(PATH)).isEqualTo(1);
  }

  @Test
  void fetch_cachedCopyCorrupted_isReverifiedAndDownloadedAgain() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.NORMAL);
    Events events = new Events();
    ArtifactCache cache = cache(Duration.ofSeconds(10), events);
    Path file = cache.fetch(server.uri(PATH), sha, body.length);
    byte[] tampered = body.clone();
    tampered[12345] ^= 0x55;
    Files.write(file, tampered); // same length, different content

    Path again = cache.fetch(server.uri(PATH), sha, body.length);
    assertThat(Files.readAllBytes(again)).isEqualTo(body);
    assertThat(events.corrupt.get()).isEqualTo(1);
    assertThat(server.requests(PATH)).isEqualTo(2);
  }

  @Test
  void fetch_afterFailedDownload_retriesOnNextCall() throws Exception {
    server.put(PATH, body, ArtifactServer.Mode.CORRUPT);
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), sha, body.length))
        .isInstanceOf(ArtifactIntegrityException.class);
    server.mode(PATH, ArtifactServer.Mode.NORMAL);
    assertThat(Files.readAllBytes(cache.fetch(server.uri(PATH), sha, body.length))).isEqualTo(body);
    assertThat(server.requests(PATH)).isEqualTo(2);
  }

  @Test
  void fetch_notAHexDigest_isRejected() {
    ArtifactCache cache = cache(Duration.ofSeconds(10), new Events());
    assertThatThrownBy(() -> cache.fetch(server.uri(PATH), "../../etc/passwd", 1))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
