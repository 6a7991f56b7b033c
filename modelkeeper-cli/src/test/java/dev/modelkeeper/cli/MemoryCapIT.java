package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.testkit.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory cap holds under churn: the packaged jar with a small heap and {@code --max-memory}
 * serves three copies of the demo convnet (67.5 MB each) to two clients rotating over them with
 * batch-32 binary requests for a minute, and its resident memory, sampled every 100 ms from {@code
 * /proc}, never passes the cap; nearly every request is answered 200, the rest 503 or 429, and no
 * OutOfMemoryError is logged. A CI-sized cut of the memory churn benchmark. Runs after {@code
 * package}, in {@code mvn verify}.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class MemoryCapIT {

  private static final long CAP = 640L << 20;
  private static final Duration CHURN = Duration.ofSeconds(60);
  private static final List<String> COPIES = List.of("convnet-a", "convnet-b", "convnet-c");
  private static final int ROWS = 32;

  @TempDir Path tmp;

  @Test
  void threeConvnetsRotatingAtBatch32_stayUnderTheCap() throws Exception {
    Path repo = repositoryOfConvnetCopies();
    Path err = tmp.resolve("stderr.txt");
    AtomicLong maxRss = new AtomicLong();
    Map<Integer, LongAdder> statuses = new ConcurrentHashMap<>();
    String metrics;
    Thread sampler = null;
    try (ServerProcess server =
        ServerProcess.builder()
            .jvm("-Xmx128m")
            .args("--grpc-port", "-1", "--repository", repo.toString())
            .cacheDir(tmp.resolve("cache"))
            .args("--max-memory", (CAP >> 20) + "MiB")
            .stderrTo(err)
            .start()) {
      sampler = sampler(server.pid(), maxRss);
      String base = server.url();

      List<Thread> clients = new ArrayList<>();
      long end = System.nanoTime() + CHURN.toNanos();
      for (int c = 0; c < 2; c++) {
        int offset = c;
        Thread t = new Thread(() -> client(base, offset, end, statuses), "client-" + c);
        t.start();
        clients.add(t);
      }
      for (Thread t : clients) {
        t.join(CHURN.plusSeconds(90).toMillis());
        assertThat(t.isAlive()).as(t.getName() + " finished").isFalse();
      }
      metrics = get(base + "/metrics");
    } finally {
      if (sampler != null) {
        sampler.interrupt();
        sampler.join(5_000);
      }
    }
    long total = statuses.values().stream().mapToLong(LongAdder::sum).sum();
    System.out.printf(
        "max RSS %d MiB of a %d MiB cap; answers %s%n", maxRss.get() >> 20, CAP >> 20, statuses);
    long ok = statuses.getOrDefault(200, new LongAdder()).sum();
    assertThat(maxRss.get())
        .as("max RSS %d MiB against the cap of %d MiB", maxRss.get() >> 20, CAP >> 20)
        .isLessThanOrEqualTo(CAP);
    assertThat(total).isPositive();
    assertThat(metrics)
        .as("models were evicted to stay under the cap")
        .containsPattern("modelkeeper_model_evictions_total\\{reason=\"[a-z_]+\"} [1-9]");
    assertThat(ok).as("200s of %s", statuses).isGreaterThanOrEqualTo(total * 95 / 100);
    assertThat(statuses.keySet()).as("statuses").isSubsetOf(200, 503, 429);
    assertThat(Files.readString(err)).doesNotContain("OutOfMemoryError");
  }

  /** Three copies of the demo convnet, hard-linked, each with the demo's config. */
  private Path repositoryOfConvnetCopies() throws IOException {
    Path demo = DemoRepository.materialize(tmp.resolve("demo"));
    Path repo = tmp.resolve("repo");
    for (String name : COPIES) {
      Path version = Files.createDirectories(repo.resolve(name).resolve("1"));
      Files.createLink(version.resolve("model.onnx"), demo.resolve("convnet/1/model.onnx"));
      Files.copy(demo.resolve("convnet/1/config.json"), version.resolve("config.json"));
    }
    return repo;
  }

  /** Samples the child's VmRSS every 100 ms into {@code max} until interrupted. */
  private static Thread sampler(long pid, AtomicLong max) {
    Path status = Path.of("/proc", Long.toString(pid), "status");
    Thread t =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                try {
                  for (String line : Files.readAllLines(status, StandardCharsets.US_ASCII)) {
                    if (line.startsWith("VmRSS:")) {
                      long kb = Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
                      max.accumulateAndGet(kb << 10, Math::max);
                    }
                  }
                  Thread.sleep(100); // the sampling period, not an ordering of threads
                } catch (IOException e) {
                  return; // the process is gone
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "rss-sampler");
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** Sends batch-32 binary requests, rotating over the copies, until {@code endNanos}. */
  private static void client(
      String base, int offset, long endNanos, Map<Integer, LongAdder> statuses) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    byte[] body = binaryRequest();
    int headerLength = body.length - ROWS * 3 * 64 * 64 * 4;
    for (int i = offset; System.nanoTime() - endNanos < 0; i++) {
      String model = COPIES.get(i % COPIES.size());
      HttpRequest request =
          HttpRequest.newBuilder(URI.create(base + "/v2/models/" + model + "/infer"))
              .timeout(Duration.ofSeconds(90))
              .header("Content-Type", "application/octet-stream")
              .header("Inference-Header-Content-Length", Integer.toString(headerLength))
              .POST(HttpRequest.BodyPublishers.ofByteArray(body))
              .build();
      int status;
      try {
        status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
      } catch (IOException e) {
        status = -1;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      statuses.computeIfAbsent(status, s -> new LongAdder()).increment();
    }
  }

  private static byte[] binaryRequest() {
    int values = ROWS * 3 * 64 * 64;
    byte[] header =
        ("{\"inputs\":[{\"name\":\"image\",\"datatype\":\"FP32\",\"shape\":["
                + ROWS
                + ",3,64,64],\"parameters\":{\"binary_data_size\":"
                + values * 4
                + "}}]}")
            .getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(header.length + values * 4).order(ByteOrder.LITTLE_ENDIAN);
    b.put(header);
    for (int i = 0; i < values; i++) {
      b.putFloat((i % 255) / 255f);
    }
    return b.array();
  }

  private static String get(String url) throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
