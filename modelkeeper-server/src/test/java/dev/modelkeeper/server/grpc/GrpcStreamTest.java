package dev.modelkeeper.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.grpc.stream.InferStream;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModel;
import dev.modelkeeper.testkit.FakeModels;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * ModelStreamInfer's flow control with grpc-java's own client: a client that reads none of its
 * answers stops its stream within the window (the rest of its requests are not read, so not run),
 * and gets every answer, in order, once it reads.
 */
class GrpcStreamTest {

  private static final int REQUESTS = 200;

  /** 16,384 floats: 64 kB requests and answers, so unread answers fill the transport's windows. */
  private static final int FLOATS = 16_384;

  @Test
  void aClientThatStopsReading_stopsItsStreamWithinTheWindow_andThenGetsEveryAnswerInOrder()
      throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    try (ModelKeeperServer server =
        TestServer.fake(models, b -> b.network(n -> n.withGrpcPort(0)))) {
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
              .usePlaintext()
              .flowControlWindow(64 * 1024) // what the client takes in before its code reads
              .build();
      try {
        List<ModelStreamInferResponse> answers = new CopyOnWriteArrayList<>();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<ModelInferRequest, ModelStreamInferResponse> call =
            ch.newCall(
                GRPCInferenceServiceGrpc.getModelStreamInferMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(120, TimeUnit.SECONDS));
        call.start(
            new ClientCall.Listener<>() {
              @Override
              public void onMessage(ModelStreamInferResponse message) {
                answers.add(message);
              }

              @Override
              public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
              }
            },
            new Metadata());
        ByteString x = ByteString.copyFrom(new byte[FLOATS * 4]);
        for (int i = 0; i < REQUESTS; i++) { // grpc-java buffers what the server does not read
          call.sendMessage(
              ModelInferRequest.newBuilder()
                  .setModelName("alpha")
                  .setId(Integer.toString(i))
                  .addInputs(
                      ModelInferRequest.InferInputTensor.newBuilder()
                          .setName("x")
                          .setDatatype("FP32")
                          .addShape(FLOATS))
                  .addRawInputContents(x)
                  .build());
        }
        call.halfClose();
        // the client asks for no answer: the server runs some requests, then stops reading more
        Awaitility.await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> !models.built().isEmpty() && !models.built().get(0).inferThreads().isEmpty());
        FakeModel model = models.built().get(0);
        int bound = InferStream.WINDOW + 8;
        Awaitility.await()
            .during(Duration.ofSeconds(2))
            .atMost(Duration.ofSeconds(10))
            .until(() -> model.inferThreads().size() <= bound);
        assertThat(answers).isEmpty();

        call.request(Integer.MAX_VALUE); // now it reads
        assertThat(closed.get(120, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(answers).hasSize(REQUESTS);
        for (int i = 0; i < REQUESTS; i++) {
          assertThat(answers.get(i).getErrorMessage()).isEmpty();
          assertThat(answers.get(i).getInferResponse().getId()).isEqualTo(Integer.toString(i));
        }
        assertThat(model.inferThreads()).hasSize(REQUESTS);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> server.inflightBytes() == 0);
      } finally {
        ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aStream_mayWaitLongerThanTheBodyReadTimeoutForItsFirstRequest() throws Exception {
    FakeModels models = FakeModels.of("alpha/1");
    try (ModelKeeperServer server =
        TestServer.fake(
            models,
            b ->
                b.network(n -> n.withGrpcPort(0))
                    .timeouts(t -> t.withBodyRead(Duration.ofMillis(300))))) {
      ManagedChannel ch =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
      try {
        List<ModelStreamInferResponse> answers = new CopyOnWriteArrayList<>();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<ModelInferRequest, ModelStreamInferResponse> call =
            ch.newCall(
                GRPCInferenceServiceGrpc.getModelStreamInferMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
        call.start(
            new ClientCall.Listener<>() {
              @Override
              public void onMessage(ModelStreamInferResponse message) {
                answers.add(message);
              }

              @Override
              public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
              }
            },
            new Metadata());
        call.request(Integer.MAX_VALUE);
        // several body read timeouts pass with the stream open and idle
        Awaitility.await()
            .pollDelay(Duration.ofSeconds(1))
            .atMost(Duration.ofSeconds(5))
            .until(() -> true);
        assertThat(closed).isNotDone();
        call.sendMessage(
            ModelInferRequest.newBuilder()
                .setModelName("alpha")
                .setId("late")
                .addInputs(
                    ModelInferRequest.InferInputTensor.newBuilder()
                        .setName("x")
                        .setDatatype("FP32")
                        .addShape(2))
                .addRawInputContents(ByteString.copyFrom(new byte[8]))
                .build());
        call.halfClose();
        assertThat(closed.get(60, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
        assertThat(answers).hasSize(1);
        assertThat(answers.get(0).getInferResponse().getId()).isEqualTo("late");
      } finally {
        ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }
}
