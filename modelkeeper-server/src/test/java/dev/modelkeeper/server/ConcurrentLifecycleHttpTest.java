package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.core.ManagerStats;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * 32 threads × 200 iterations of load, unload and infer on one real model over HTTP. Nothing may
 * answer other than 200 (an unload racing an inference makes the inference load the model again),
 * every inference must be right, and the final state must be the effect of an operation that could
 * have been the last one to take effect.
 */
class ConcurrentLifecycleHttpTest {

  private static final int THREADS = 32;
  private static final int ITERATIONS = 200;
  private static final String SETOSA =
      "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP32\","
          + " \"data\": [5.1, 3.5, 1.4, 0.2]}], \"outputs\": [{\"name\": \"label\"}]}";

  /** One completed request: what it did, when it started and ended, and what it got. */
  private record Op(String kind, long start, long end, int status, String body) {}

  @Test
  void loadUnloadInfer_from32Threads_neverFailAndEndConsistent() throws Exception {
    try (ModelKeeperServer server =
        TestServer.demo(b -> b.scheduling(sc -> sc.withWorkerThreads(64)))) {
      Http http = Http.to(server.port());
      ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
      CyclicBarrier start = new CyclicBarrier(THREADS);
      ExecutorService pool = Executors.newFixedThreadPool(THREADS);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        long seed = 1000 + t;
        done.add(
            pool.submit(
                () -> {
                  Random random = new Random(seed);
                  start.await(30, TimeUnit.SECONDS);
                  for (int i = 0; i < ITERATIONS; i++) {
                    int dice = random.nextInt(4);
                    String kind = dice == 0 ? "load" : dice == 1 ? "unload" : "infer";
                    long begin = System.nanoTime();
                    Response r =
                        kind.equals("infer")
                            ? http.post("/v2/models/iris/infer", SETOSA)
                            : http.post("/v2/repository/models/iris/" + kind, "");
                    ops.add(new Op(kind, begin, System.nanoTime(), r.status(), r.body()));
                  }
                  return null;
                }));
      }
      pool.shutdown();
      for (Future<?> f : done) {
        f.get(150, TimeUnit.SECONDS);
      }
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

      assertThat(ops).hasSize(THREADS * ITERATIONS);
      List<Op> failed = new ArrayList<>();
      int inferences = 0;
      for (Op op : ops) {
        if (op.status() != 200) {
          failed.add(op);
        } else if (op.kind().equals("infer")) {
          inferences++;
          JsonNode label = new Http.Response(200, op.body(), null, "").json().get("outputs").get(0);
          assertThat(label.get("name").asText()).isEqualTo("label");
          assertThat(label.get("data").get(0).asInt()).isZero();
        }
      }
      assertThat(failed).as("requests that did not answer 200").isEmpty();
      assertThat(inferences).isGreaterThan(THREADS * ITERATIONS / 3);

      // The last operation to take effect started before every other one ended and ended after
      // the last start: only operations that ended after the latest start can be it.
      long lastStart = ops.stream().mapToLong(Op::start).max().orElseThrow();
      boolean unloadCandidate = false;
      boolean readyCandidate = false;
      for (Op op : ops) {
        if (op.end() >= lastStart) {
          unloadCandidate |= op.kind().equals("unload");
          readyCandidate |= !op.kind().equals("unload");
        }
      }
      String state = indexState(http);
      assertThat(state).isIn("READY", "UNAVAILABLE");
      if (state.equals("READY")) {
        assertThat(readyCandidate).as("READY, but no load or infer could have been last").isTrue();
        assertThat(server.manager().keys()).containsExactly("iris/1");
      } else {
        assertThat(unloadCandidate).as("UNAVAILABLE, but no unload could have been last").isTrue();
        assertThat(server.manager().keys()).isEmpty();
      }
      ManagerStats stats = server.manager().stats();
      assertThat(stats.loads() - stats.removals() - stats.evictionsTotal())
          .as("loads minus unloads equals what is resident")
          .isEqualTo(stats.residentModels());
      assertThat(stats.activeLeases()).isZero();
      assertThat(stats.loadFailures()).isZero();
      System.out.printf(
          "concurrent lifecycle: %d requests, %d loads, %d unloads, final state %s%n",
          ops.size(), stats.loads(), stats.removals(), state);

      // and the server still works
      assertThat(http.post("/v2/repository/models/iris/load", "").status()).isEqualTo(200);
      assertThat(indexState(http)).isEqualTo("READY");
      assertThat(http.post("/v2/repository/models/iris/unload", "").status()).isEqualTo(200);
      assertThat(indexState(http)).isEqualTo("UNAVAILABLE");
    }
  }

  private static String indexState(Http http) {
    for (JsonNode row : http.post("/v2/repository/index", "").json()) {
      if (row.get("name").asText().equals("iris")) {
        return row.get("state").asText();
      }
    }
    throw new AssertionError("iris is not in the index");
  }
}
