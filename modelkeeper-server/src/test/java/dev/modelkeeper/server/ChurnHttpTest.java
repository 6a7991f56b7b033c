package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.ManagerStats;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Churn over HTTP: four demo models under a count budget of two, four closed-loop clients inferring
 * on random models without retries. Every request must succeed although most of them evict a model
 * or wait for room; latency percentiles are printed, not asserted.
 */
class ChurnHttpTest {

  private static final int CLIENTS = 4;
  private static final Duration RUN_FOR = Duration.ofSeconds(12);
  private static final int MAX_REQUESTS_PER_CLIENT = 1500;

  private static final Map<String, String> REQUESTS =
      Map.of(
          "iris",
          "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\","
              + " \"data\": [6.3, 3.3, 6.0, 2.5]}]}",
          "mlp-small",
          "{\"inputs\": [{\"name\": \"input\", \"shape\": [2, 8], \"datatype\": \"FP32\","
              + " \"data\": [[1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 0, 0, 1, 1, 1, 1]]}]}",
          "mlp-medium",
          "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 64], \"datatype\": \"FP32\","
              + " \"data\": "
              + ones(64)
              + "}]}",
          "types",
          "{\"inputs\": ["
              + tensor("fp32_in", "FP32", "[1.5]")
              + ","
              + tensor("fp64_in", "FP64", "[2.5]")
              + ","
              + tensor("int32_in", "INT32", "[3]")
              + ","
              + tensor("int64_in", "INT64", "[4]")
              + ","
              + tensor("int16_in", "INT16", "[5]")
              + ","
              + tensor("int8_in", "INT8", "[6]")
              + ","
              + tensor("uint8_in", "UINT8", "[7]")
              + ","
              + tensor("bool_in", "BOOL", "[true]")
              + ","
              + tensor("bytes_in", "BYTES", "[\"churn\"]")
              + "]}");

  /** One answered request. */
  private record Sample(String model, int status, long nanos) {}

  @Test
  void infer_onFourModelsUnderBudgetOfTwo_answersEveryRequestWithoutRetries() throws Exception {
    try (ModelKeeperServer server = TestServer.demo(b -> b.budgets(m -> m.withMaxModels(2)))) {
      Http http = Http.to(server.port());
      List<String> models = List.copyOf(REQUESTS.keySet());
      ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
      ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
      CyclicBarrier start = new CyclicBarrier(CLIENTS);
      ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
      List<Future<?>> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        long seed = 77 + c;
        clients.add(
            pool.submit(
                () -> {
                  Random random = new Random(seed);
                  start.await(30, TimeUnit.SECONDS);
                  long deadline = System.nanoTime() + RUN_FOR.toNanos();
                  for (int i = 0;
                      i < MAX_REQUESTS_PER_CLIENT && System.nanoTime() < deadline;
                      i++) {
                    String model = models.get(random.nextInt(models.size()));
                    long begin = System.nanoTime();
                    Response r = http.post("/v2/models/" + model + "/infer", REQUESTS.get(model));
                    samples.add(new Sample(model, r.status(), System.nanoTime() - begin));
                    if (r.status() / 100 != 2) {
                      failures.add(model + " -> " + r);
                    }
                  }
                  return null;
                }));
      }
      pool.shutdown();
      for (Future<?> f : clients) {
        f.get(60, TimeUnit.SECONDS);
      }
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

      assertThat(failures).as("non-2xx responses").isEmpty();
      assertThat(samples).hasSizeGreaterThan(CLIENTS * 20);
      ManagerStats stats = server.manager().stats();
      assertThat(stats.residentModels()).isLessThanOrEqualTo(2);
      assertThat(stats.evictionsTotal()).as("the budget forced evictions").isPositive();
      assertThat(stats.capacityRejections()).isZero();
      long[] all = samples.stream().mapToLong(Sample::nanos).sorted().toArray();
      System.out.printf(
          "HTTP churn: %d requests in %s by %d clients over %d models (budget 2): p50 %.2f ms,"
              + " p95 %.2f ms, p99 %.2f ms; %d loads, %d evictions, %d capacity waits%n",
          all.length,
          RUN_FOR,
          CLIENTS,
          models.size(),
          millis(all, 0.50),
          millis(all, 0.95),
          millis(all, 0.99),
          stats.loads(),
          stats.evictionsTotal(),
          stats.capacityWaits());
    }
  }

  private static double millis(long[] sorted, double q) {
    int i = Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1);
    return sorted[Math.max(0, i)] / 1e6;
  }

  private static String ones(int n) {
    float[] v = new float[n];
    Arrays.fill(v, 0.5f);
    return Arrays.toString(v);
  }

  private static String tensor(String name, String datatype, String data) {
    return "{\"name\": \""
        + name
        + "\", \"datatype\": \""
        + datatype
        + "\", \"shape\": [1],"
        + " \"data\": "
        + data
        + "}";
  }
}
