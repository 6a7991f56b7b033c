package dev.modelkeeper.interop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory cap holds for a model never seen before. The packaged jar runs with {@code -Xmx256m
 * --max-memory 1GiB} over a repository holding the {@code onnx} wheel's {@code light_vgg19}: a 9 KB
 * file whose load folds about 550 MB of weights out of {@code ConstantOfShape} nodes and peaks
 * above 1.3 GB, and a tiny model. For two minutes a client asks for both in turn: the first request
 * for the big model may overshoot the cap once (its cost is unknown until it loads); from then on
 * every answer for it is 507 naming the cost learned and the room, without a retry hint, the
 * process's RSS (sampled every 20 ms from {@code /proc}) stays under the cap, and the small model
 * answers 200 throughout.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class UnknownModelCapTest {

  private static final long CAP = 1L << 30;
  private static final Duration LOOP = Duration.ofMinutes(2);
  private static final Duration PACE = Duration.ofMillis(50);
  private static final int MAX_PAIRS = 2_400;

  @TempDir Path dir;

  @Test
  void modelThatCanNeverFit_overshootsAtMostOnce_thenIs507_whileOthersServe() throws Exception {
    Path repository = Files.createDirectories(dir.resolve("models"));
    Path onnx = onnxPackage();
    Files.copy(
        onnx.resolve("backend/test/data/light/light_vgg19.onnx"),
        Files.createDirectories(repository.resolve("vgg/1")).resolve("model.onnx"));
    Files.copy(
        onnx.resolve("backend/test/data/node/test_abs/model.onnx"),
        Files.createDirectories(repository.resolve("small/1")).resolve("model.onnx"));

    try (ServerProcess server =
        ServerProcess.builder()
            .jvm("-Xmx256m")
            .cacheDir(Files.createDirectories(dir.resolve("cache")))
            .args("--repository", repository.toString(), "--max-memory", "1GiB")
            .start()) {
      List<long[]> samples = Collections.synchronizedList(new ArrayList<>()); // {nanos, rss}
      HttpClient http =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(10))
              .build();
      String base = "http://" + server.httpAddress();
      String big = body("data_0", "[1,3,224,224]", 3 * 224 * 224);
      String small = body("x", "[3,4,5]", 60);
      List<Answer> bigAnswers = Collections.synchronizedList(new ArrayList<>());
      AtomicInteger smallServed = new AtomicInteger();
      AtomicLong answeredFirst = new AtomicLong();
      CompletableFuture<Void> loop = new CompletableFuture<>();
      long end = System.nanoTime() + LOOP.toNanos();
      // RSS sampled every 20 ms; one pair of requests every 50 ms, a steady pace over the whole
      // two minutes rather than a flood (a fixed-rate task never overlaps itself)
      ScheduledExecutorService clock = Executors.newScheduledThreadPool(2);
      try {
        clock.scheduleAtFixedRate(
            () -> samples.add(new long[] {System.nanoTime(), rss(server.pid())}),
            0,
            20,
            TimeUnit.MILLISECONDS);
        clock.scheduleAtFixedRate(
            () -> {
              if (loop.isDone()) {
                return;
              }
              if (System.nanoTime() >= end || bigAnswers.size() >= MAX_PAIRS) {
                loop.complete(null);
                return;
              }
              try {
                bigAnswers.add(Answer.of(post(http, base + "/v2/models/vgg/infer", big)));
                answeredFirst.compareAndSet(0, System.nanoTime());
                HttpResponse<String> r = post(http, base + "/v2/models/small/infer", small);
                if (r.statusCode() != 200) {
                  throw new AssertionError(
                      "small model answered " + r.statusCode() + ": " + r.body());
                }
                smallServed.incrementAndGet();
              } catch (Throwable t) {
                loop.completeExceptionally(t);
              }
            },
            0,
            PACE.toMillis(),
            TimeUnit.MILLISECONDS);
        loop.get(LOOP.toSeconds() + 120, TimeUnit.SECONDS);
      } finally {
        clock.shutdownNow();
        clock.awaitTermination(10, TimeUnit.SECONDS);
      }
      long firstAnswered = answeredFirst.get();

      assertThat(bigAnswers).hasSizeGreaterThan(10);
      assertThat(smallServed.get()).isEqualTo(bigAnswers.size());
      for (Answer r : bigAnswers.subList(1, bigAnswers.size())) {
        assertThat(r.status()).as(r.body()).isEqualTo(507);
        assertThat(r.retryAfter()).isFalse();
        assertThat(r.body())
            .contains("vgg/1")
            .containsPattern("needs [\\d.]+ MiB")
            .contains("more than the whole byte budget");
      }
      assertThat(bigAnswers.get(0).status()).isIn(507, 503);

      // after the first answer the memory comes back under the cap within seconds, and stays
      List<long[]> after = new ArrayList<>();
      synchronized (samples) {
        for (long[] s : samples) {
          if (s[0] > firstAnswered) {
            after.add(s);
          }
        }
      }
      int back = 0;
      while (back < after.size() && after.get(back)[1] > CAP) {
        back++;
      }
      assertThat(back).as("samples after the first answer").isLessThan(after.size());
      assertThat((after.get(back)[0] - firstAnswered) / 1e9)
          .as("seconds until RSS was under the cap again")
          .isLessThan(10);
      long max = after.subList(back, after.size()).stream().mapToLong(s -> s[1]).max().orElse(0);
      assertThat(max).as("the most RSS held once back under the cap").isLessThanOrEqualTo(CAP);
      System.out.printf(
          "[cap] %d answers for the big model, %d for the small one; max RSS after %.2f MiB%n",
          bigAnswers.size(), smallServed.get(), max / 1048576.0);
    }
  }

  /** What an answer said: its status, whether it had a Retry-After, its body. */
  private record Answer(int status, boolean retryAfter, String body) {
    static Answer of(HttpResponse<String> r) {
      return new Answer(
          r.statusCode(), r.headers().firstValue("Retry-After").isPresent(), r.body());
    }
  }

  /** Posts {@code body}; at most 60 s (a bounded wait, which {@code HttpClient.send} is not). */
  private static HttpResponse<String> post(HttpClient http, String url, String body)
      throws Exception {
    return http.sendAsync(
            HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .get(60, TimeUnit.SECONDS);
  }

  private static String body(String input, String shape, int elements) {
    StringBuilder data = new StringBuilder(elements * 4);
    for (int i = 0; i < elements; i++) {
      data.append(i == 0 ? "0.5" : ",0.5");
    }
    return "{\"inputs\":[{\"name\":\""
        + input
        + "\",\"datatype\":\"FP32\",\"shape\":"
        + shape
        + ",\"data\":["
        + data
        + "]}]}";
  }

  /** The process's resident set size in bytes, from {@code /proc/<pid>/status}. */
  private static long rss(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // the process ended
    }
    return 0;
  }

  /** The installed {@code onnx} package of the interop venv, whose test data this test uses. */
  private static Path onnxPackage() throws Exception {
    Path tests = Path.of(System.getProperty("interop.python.dir"));
    PythonEnv venv = PythonEnv.forRequirements(tests.resolve("requirements.txt"));
    Processes.Outcome where =
        Processes.run(
            List.of(
                venv.python().toString(),
                "-c",
                "import onnx, os; print(os.path.dirname(onnx.__file__))"),
            Duration.ofMinutes(1));
    assertThat(where.exitCode()).isZero();
    return Path.of(where.output().strip().lines().reduce((a, b) -> b).orElseThrow());
  }
}
