package dev.modelkeeper.scaleout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.testkit.Http;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The shipped HAProxy configuration in front of three replicas of the packaged jar, on loopback,
 * serving 12 small ONNX models from a loopback HTTP repository through one shared artifact cache.
 * One cluster for the whole class (starting it takes most of the time); each scenario starts by
 * unloading every model. Every request is bounded (count and time), every process is killed at the
 * end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ScaleOutIT {

  private static final int MODELS = 12;
  private static final int CLIENTS = 4;
  private static final Duration STOP = Duration.ofSeconds(30);

  private Cluster cluster;
  private final Http http = new Http();

  @BeforeAll
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void startCluster() throws Exception {
    // under target/, so the processes' logs outlive a failed run
    Path work =
        Files.createTempDirectory(
            Files.createDirectories(Path.of("target", "scaleout-it")), "run-");
    // room for all 12 on one replica: residency then shows routing, not evictions
    cluster = Cluster.start(work, MODELS, MODELS, Cluster.Routing.MODEL_AFFINE);
  }

  @AfterAll
  void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private String proxy() {
    return cluster.proxy().url();
  }

  /** Prints what a scenario saw (residency and the proxy's retry counters) for the build log. */
  private void report(String scenario, ClosedLoop.Result r) throws Exception {
    StringBuilder b =
        new StringBuilder(scenario).append(": residency ").append(cluster.residency());
    if (r != null) {
      b.append(
          String.format(
              ", %d requests, %d failed, p50 %.1f ms, p99 %.1f ms",
              r.requests(), r.failures(), r.percentileMillis(0.5), r.percentileMillis(0.99)));
    }
    Map<String, String> backend = cluster.proxy().server(Cluster.BACKEND, "BACKEND");
    b.append(", proxy retries so far ")
        .append(backend.get("wretr"))
        .append(", redispatches ")
        .append(backend.get("wredis"));
    System.out.println(b);
  }

  private Replica replica(String name) {
    return cluster.replicas().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  @Order(1)
  void sharedCache_threeReplicasLoadOneModelAtOnce_downloadItOnce() throws Exception {
    cluster.clearAll();
    List<Replica> replicas = cluster.replicas();
    CyclicBarrier together = new CyclicBarrier(replicas.size());
    ExecutorService pool = Executors.newFixedThreadPool(replicas.size());
    try {
      List<Future<Http.Response>> adds = new ArrayList<>();
      for (Replica r : replicas) {
        adds.add(
            pool.submit(
                () -> {
                  together.await(30, TimeUnit.SECONDS);
                  return http.post(r.url() + "/model/add", "{\"model_id\": \"m01\"}");
                }));
      }
      for (Future<Http.Response> a : adds) {
        assertThat(a.get(60, TimeUnit.SECONDS).status()).isEqualTo(200);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(cluster.residency().get("m01")).containsExactly("r1", "r2", "r3");
    assertThat(cluster.repository().requests("m01/1/model.onnx"))
        .as("downloads of m01 by three replicas sharing one cache folder")
        .isEqualTo(1);
  }

  @Test
  @Order(2)
  void evenLoad_eachModelResidentOnExactlyOneReplica() throws Exception {
    cluster.clearAll();
    // one client: bounded load never spills (no replica has a request in flight when the next
    // is routed), so where a model lands is the hash ring's choice alone. Each round asks for
    // the models in a new order, so that a router ignoring the model (round robin, say) would
    // put some on several replicas.
    Random order = new Random(3);
    for (int round = 0; round < 3; round++) {
      List<String> models = new ArrayList<>(cluster.models());
      Collections.shuffle(models, order);
      for (String m : models) {
        Http.Response a =
            http.post(proxy() + "/v2/models/" + m + "/infer", GeneratedRepository.inferBody(m));
        assertThat(a.status()).as("%s: %s", m, a.body()).isEqualTo(200);
      }
    }
    report("even load", null);
    Map<String, List<String>> residency = cluster.residency();
    assertThat(residency).hasSize(MODELS);
    assertThat(residency.values())
        .as("replicas per model: %s", residency)
        .allSatisfy(rs -> assertThat(rs).hasSize(1));
    assertThat(residency.values().stream().map(rs -> rs.get(0)).distinct().count())
        .as("every replica owns some models: %s", residency)
        .isEqualTo(3);
  }

  @Test
  @Order(3)
  void hotModel_spillsToASecondReplica_withoutErrors() throws Exception {
    cluster.clearAll();
    List<String> models = cluster.models();
    ClosedLoop.Result r;
    try (ClosedLoop clients =
        new ClosedLoop(proxy(), CLIENTS, Workload.hot(models, "m05", 0.9), 600, 5)) {
      clients.awaitDone(600, Duration.ofSeconds(60));
      r = clients.stop(STOP);
    }
    report("hot model", r);
    assertThat(r.failures()).as("%s", r.failureSamples()).isZero();
    assertThat(r.requests()).isEqualTo(600);
    assertThat(r.perModel().get("m05")).isGreaterThan(450);
    Map<String, List<String>> residency = cluster.residency();
    assertThat(residency.get("m05")).as("residency %s", residency).hasSizeGreaterThanOrEqualTo(2);
  }

  @Test
  @Order(4)
  void sigkillOfAReplica_underFourClients_failsNoRequestAndItsModelsMove() throws Exception {
    cluster.clearAll();
    List<String> models = cluster.models();
    for (String m : models) { // every model on its owner
      assertThat(
              http.post(proxy() + "/v2/models/" + m + "/infer", GeneratedRepository.inferBody(m))
                  .status())
          .isEqualTo(200);
    }
    Map<String, List<String>> before = cluster.residency();
    String victimName = "r2";
    List<String> victimModels =
        before.entrySet().stream()
            .filter(e -> e.getValue().contains(victimName))
            .map(Map.Entry::getKey)
            .toList();
    assertThat(victimModels).as("r2 owns models: %s", before).isNotEmpty();
    Replica victim = replica(victimName);
    ClosedLoop.Result r;
    Map<String, List<String>> after;
    try {
      try (ClosedLoop clients = new ClosedLoop(proxy(), CLIENTS, Workload.even(models), 900, 7)) {
        clients.awaitDone(200, Duration.ofSeconds(60));
        victim.kill();
        long atKill = clients.done();
        clients.awaitDone(atKill + 400, Duration.ofSeconds(60));
        r = clients.stop(STOP);
      }
      after = cluster.residency();
    } finally {
      if (!victim.isAlive()) { // the next scenario needs three replicas again
        victim.start();
        cluster.awaitServing(victim);
      }
    }
    report("SIGKILL of r2", r);
    assertThat(r.failures()).as("%s; logs %s", r.failureSamples(), cluster.logs()).isZero();
    for (String m : victimModels) {
      assertThat(after.get(m))
          .as("%s after r2 died: %s", m, after)
          .isNotEmpty()
          .doesNotContain(victimName);
    }
  }

  @Test
  @Order(5)
  void rollingRestartOfAllThree_underFourClients_failsNoRequest() throws Exception {
    cluster.clearAll();
    ClosedLoop.Result r;
    try (ClosedLoop clients =
        new ClosedLoop(proxy(), CLIENTS, Workload.even(cluster.models()), 20_000, 11)) {
      clients.awaitDone(100, Duration.ofSeconds(60));
      for (Replica replica : cluster.replicas()) {
        long before = clients.done();
        replica.stop(Duration.ofSeconds(30));
        replica.start();
        cluster.awaitServing(replica);
        clients.awaitDone(before + 100, Duration.ofSeconds(60)); // traffic flowed meanwhile
      }
      r = clients.stop(STOP);
    }
    report("rolling restart", r);
    assertThat(r.failures()).as("%s; logs %s", r.failureSamples(), cluster.logs()).isZero();
    assertThat(r.requests()).isGreaterThan(300);
  }

  @Test
  @Order(6)
  void sharedCache_afterEveryScenario_eachArtifactDownloadedAtMostOnce() {
    Map<String, Integer> requests = cluster.repository().allRequests();
    assertThat(requests.keySet().stream().filter(p -> p.endsWith("/model.onnx")))
        .as("artifacts downloaded: %s", requests)
        .hasSizeGreaterThanOrEqualTo(MODELS - 1);
    requests.forEach(
        (path, n) -> {
          if (path.endsWith("/model.onnx")) {
            assertThat(n).as("downloads of %s", path).isEqualTo(1);
          }
        });
  }
}
