package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.GrpcEndpoint;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModel;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which threads run an inference, over loopback: a request for a resident model with a free slot
 * runs on the thread that received it (REST's HTTP thread; gRPC's event loop when the model's runs
 * are quick), not on another thread after a hand-off, whether it is named by its name or an alias;
 * a model whose runs are slow is never run on gRPC's event loop; and runs of stalled models never
 * hold every thread, so other models keep answering.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InferenceThreadsTest {

  private static final String BODY =
      "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[1,2]}]}";

  private static FakeModel model(FakeModels models, String id) {
    return models.built().stream()
        .filter(m -> m.metadata().id().equals(id))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void infer_residentModelWithAFreeSlot_runsOnTheReceivingThreadWithoutAHandOff() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.network(n -> n.withGrpcPort(0)))) {
      Http http = Http.to(server.port());
      assertThat(http.post("/v2/models/alpha/infer", BODY).status()).isEqualTo(200); // loads it
      assertThat(http.post("/v2/models/alpha/infer", BODY).status()).isEqualTo(200);

      grpcInfer(server, "alpha");
      List<String> threads = model(models, "alpha/1").inferThreads();
      assertThat(threads).hasSize(3);
      // the first run loaded the model on the model's executor; REST then ran on the HTTP thread
      // and gRPC on the event loop, neither on a worker nor on a model thread
      assertThat(threads.get(0)).startsWith("modelkeeper-model-");
      assertThat(threads.get(1)).startsWith("JettyServerThreadPool");
      assertThat(threads.get(2)).startsWith("grpc-");
    }
  }

  @Test
  void infer_aliasedModel_runsOnTheReceivingThreadLikeItsTarget() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.network(n -> n.withGrpcPort(0)))) {
      Http http = Http.to(server.port());
      assertThat(
              http.post("/model/add", "{\"model_id\":\"alpha/1\",\"model_id_alias\":\"a\"}")
                  .status())
          .isEqualTo(200); // loaded under the alias
      assertThat(http.post("/v2/models/a/infer", BODY).status()).isEqualTo(200);

      grpcInfer(server, "a");
      List<String> threads = model(models, "alpha/1").inferThreads();
      assertThat(threads).hasSize(2);
      // resident under its alias and idle: no hand-off to a model thread, as for its target
      assertThat(threads.get(0)).startsWith("JettyServerThreadPool");
      assertThat(threads.get(1)).startsWith("grpc-");
    }
  }

  @Test
  void grpcInfer_modelWhoseRunsAreSlow_runsOnAModelThreadNotOnTheEventLoop() throws Exception {
    FakeModels models = FakeModels.of("slow/1");
    Gate gate = new Gate();
    models.gateInfer("slow/1", gate);
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.network(n -> n.withGrpcPort(0)))) {
      Http http = Http.to(server.port());
      CompletableFuture<Integer> first =
          CompletableFuture.supplyAsync(() -> http.post("/v2/models/slow/infer", BODY).status());
      gate.awaitEntered();
      // the run lasts at least this long: far longer than a run the event loop would do itself
      long entered = System.nanoTime();
      while (System.nanoTime() - entered < 10 * GrpcEndpoint.QUICK_RUN_NANOS) {
        Thread.onSpinWait();
      }
      gate.open();
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(200);

      grpcInfer(server, "slow");
      List<String> threads = model(models, "slow/1").inferThreads();
      assertThat(threads).hasSize(2);
      assertThat(threads.get(1)).startsWith("modelkeeper-model-");
    }
  }

  /** One gRPC inference of {@code model} with input {@code x} = [1, 2]. */
  private static void grpcInfer(ModelKeeperServer server, String model) throws Exception {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
    try {
      ByteBuffer raw = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
      raw.putFloat(1).putFloat(2);
      GRPCInferenceServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .modelInfer(
              ModelInferRequest.newBuilder()
                  .setModelName(model)
                  .addInputs(
                      ModelInferRequest.InferInputTensor.newBuilder()
                          .setName("x")
                          .setDatatype("FP32")
                          .addShape(2))
                  .addRawInputContents(ByteString.copyFrom(raw.array()))
                  .build());
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void infer_stalledRunsOnWorkers_leaveWorkersForOtherModels() throws Exception {
    FakeModels models = FakeModels.of("slow/1", "fast/1");
    ExecutorService clients = Executors.newFixedThreadPool(3);
    Gate first = new Gate();
    Gate second = new Gate();
    // two workers' count: one request at a time may run its model on its own (HTTP) thread, the
    // others are decoded on a worker that hands the run to the model's executor
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.scheduling(sc -> sc.withWorkerThreads(2)))) {
      Http http = Http.to(server.port());
      assertThat(http.post("/v2/models/slow/infer", BODY).status()).isEqualTo(200);
      assertThat(http.post("/v2/models/fast/infer", BODY).status()).isEqualTo(200);
      models.gateInfer("slow/1", first);
      CompletableFuture<Integer> a =
          CompletableFuture.supplyAsync(
              () -> http.post("/v2/models/slow/infer", BODY).status(), clients);
      first.awaitEntered();
      models.gateInfer("slow/1", second);
      CompletableFuture<Integer> b =
          CompletableFuture.supplyAsync(
              () -> http.post("/v2/models/slow/infer", BODY).status(), clients);
      second.awaitEntered();

      // both slow runs are stalled; a worker is still free to decode and answer this one
      CompletableFuture<Integer> fast =
          CompletableFuture.supplyAsync(
              () -> http.post("/v2/models/fast/infer", BODY).status(), clients);
      // answered well before the stalled runs give up at their gates
      assertThat(fast.get(Gate.TIMEOUT_SECONDS / 2, TimeUnit.SECONDS)).isEqualTo(200);

      first.open();
      second.open();
      assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo(200);
      assertThat(b.get(30, TimeUnit.SECONDS)).isEqualTo(200);
      List<String> slow = model(models, "slow/1").inferThreads();
      assertThat(slow.get(slow.size() - 1)).startsWith("modelkeeper-model-");
    } finally {
      clients.shutdownNow();
    }
  }
}
