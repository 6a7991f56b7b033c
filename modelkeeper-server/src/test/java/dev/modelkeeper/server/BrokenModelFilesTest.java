package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.InferTensorContents;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.DemoRepo;
import dev.modelkeeper.testkit.Http;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model that cannot load for a reason in its files is refused once and the same way every time: a
 * corrupt model file, a model with a non-tensor input and a configuration that does not parse each
 * answer five identical, non-retryable refusals over HTTP (400, no Retry-After) and gRPC
 * (FAILED_PRECONDITION, or UNIMPLEMENTED for what is not served), naming the file within the model
 * folder and the reason but no server path; the repository index lists each UNAVAILABLE with the
 * reason; the log has one WARN per model and no stack trace; and once a file is fixed, the next
 * request loads it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BrokenModelFilesTest {

  private static final String BODY =
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
          + "\"data\":[5.1,3.5,1.4,0.2]}]}";

  @TempDir Path root;

  @Test
  void eachUnservableModel_isRefusedTheSameWayEveryTime_untilItsFilesChange() throws Exception {
    byte[] iris = Files.readAllBytes(DemoRepo.root().resolve("iris/1/model.onnx"));
    Path corrupt = Files.createDirectories(root.resolve("corrupt/1")).resolve("model.onnx");
    Files.write(corrupt, Arrays.copyOf(iris, iris.length / 2)); // cut short, as by a failed copy
    new OnnxGraphBuilder("sequence")
        .sequenceInput("input", Datatype.FP32, -1)
        .node("SequenceLength", List.of("input"), List.of("n"))
        .output("n", Datatype.INT64)
        .writeTo(Files.createDirectories(root.resolve("sequence/1")).resolve("model.onnx"));
    Path config = root.resolve("badconfig/config.pbtxt");
    Files.createDirectories(root.resolve("badconfig/1"));
    Files.write(root.resolve("badconfig/1/model.onnx"), iris);
    Files.writeString(config, "max_batch_size: 8\ninput [\n");

    try (LogCapture manager = LogCapture.of(BaseModelManager.class);
        LogCapture repository = LogCapture.of(LocalModelRepository.class);
        LogCapture mapper = LogCapture.of(Failure.class);
        ModelKeeperServer server =
            TestServer.start(
                TestServer.config(new LocalModelRepository(root))
                    .network(n -> n.withGrpcPort(0))
                    .timeouts(t -> t.withLoadFailureBackoff(Duration.ofMillis(50))))) {
      Http http = Http.to(server.port());
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
      try {
        refusedFiveTimes(
            http, channel, "corrupt", "corrupt/1/model.onnx", "Protobuf parsing", false);
        refusedFiveTimes(
            http, channel, "sequence", "input 'input' is a sequence, not a tensor", "", true);
        refusedFiveTimes(http, channel, "badconfig", "badconfig/config.pbtxt", "line 3", false);

        List<String> index = List.of(http.post("/v2/repository/index", "{}").body());
        assertThat(index.get(0))
            .contains("\"name\":\"corrupt\",\"version\":\"1\",\"state\":\"UNAVAILABLE\"")
            .contains("Protobuf parsing failed")
            .contains("is a sequence, not a tensor")
            .contains("line 3, column 1")
            .doesNotContain(root.toString());

        for (String model : List.of("corrupt", "sequence", "badconfig")) {
          assertThat(Stream.concat(manager.entries().stream(), repository.entries().stream()))
              .as("WARN lines about %s", model)
              .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
              .filteredOn(e -> e.message().contains("'" + model))
              .singleElement()
              .satisfies(e -> assertThat(e.thrown()).isNull());
        }
        assertThat(mapper.entries())
            .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
            .isEmpty();

        // the files fixed (a new modification time, as a copy gives), the next request loads
        Files.write(corrupt, iris);
        Files.setLastModifiedTime(corrupt, FileTime.from(Instant.now().plusSeconds(5)));
        assertThat(http.post("/v2/models/corrupt/infer", BODY).status()).isEqualTo(200);
        Files.writeString(config, "max_batch_size: 8\n");
        Files.setLastModifiedTime(config, FileTime.from(Instant.now().plusSeconds(5)));
        assertThat(http.post("/v2/models/badconfig/infer", BODY).status()).isEqualTo(200);
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Asks {@code model} five times over HTTP and five over gRPC: each transport answers the same
   * refusal each time, naming {@code names} and {@code reason}, without a server path.
   */
  private void refusedFiveTimes(
      Http http,
      ManagedChannel channel,
      String model,
      String names,
      String reason,
      boolean unsupported) {
    Http.Response first = http.post("/v2/models/" + model + "/infer", BODY);
    assertThat(first.status()).as(first.toString()).isEqualTo(400);
    assertThat(first.retryAfter()).as("no retry hint").isNull();
    assertThat(first.error())
        .contains(names)
        .contains(reason)
        .doesNotContain(root.toString())
        .doesNotContain("Exception");
    for (int i = 0; i < 4; i++) {
      Http.Response again = http.post("/v2/models/" + model + "/infer", BODY);
      assertThat(again.status()).isEqualTo(400);
      assertThat(again.body()).isEqualTo(first.body());
      assertThat(again.retryAfter()).isNull();
    }
    ModelInferRequest request =
        ModelInferRequest.newBuilder()
            .setModelName(model)
            .addInputs(
                ModelInferRequest.InferInputTensor.newBuilder()
                    .setName("input")
                    .setDatatype("FP32")
                    .addShape(1)
                    .addShape(4)
                    .setContents(
                        InferTensorContents.newBuilder()
                            .addAllFp32Contents(List.of(5.1f, 3.5f, 1.4f, 0.2f))))
            .build();
    Status.Code expected =
        unsupported ? Status.Code.UNIMPLEMENTED : Status.Code.FAILED_PRECONDITION;
    String description = null;
    for (int i = 0; i < 5; i++) {
      StatusRuntimeException e =
          catchThrowableOfType(
              StatusRuntimeException.class,
              () ->
                  GRPCInferenceServiceGrpc.newBlockingStub(channel)
                      .withDeadlineAfter(30, TimeUnit.SECONDS)
                      .modelInfer(request));
      assertThat(e).as("gRPC call %d to %s", i, model).isNotNull();
      assertThat(e.getStatus().getCode()).isEqualTo(expected);
      assertThat(e.getStatus().getDescription()).contains(names).doesNotContain(root.toString());
      if (description == null) {
        description = e.getStatus().getDescription();
      }
      assertThat(e.getStatus().getDescription()).isEqualTo(description);
    }
  }
}
