package dev.modelkeeper.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.modelkeeper.core.CapacityExceededException;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.auth.UnauthorizedException;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.ConflictException;
import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.PathRedaction;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub;
import dev.modelkeeper.server.http.RequestTimeoutException;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.FakeModels;
import dev.modelkeeper.testkit.Http;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.Marshaller;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import org.assertj.core.data.Offset;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The gRPC endpoint over loopback with a real gRPC client: health, metadata, inference with raw and
 * typed contents on the demo models, the repository methods and their bearer token, status codes,
 * the message size limit, and a deadline that passes while a load is pending.
 */
class GrpcEndpointTest {

  private static final String TOKEN = "grpc-s3cret";
  private static ModelKeeperServer server;
  private static ManagedChannel channel;
  private static GRPCInferenceServiceBlockingStub grpc;

  @BeforeAll
  static void start() {
    server =
        TestServer.demo(
            b ->
                b.network(n -> n.withGrpcPort(0))
                    .security(s -> s.withAuthToken(TOKEN))
                    .budgets(m -> m.withMaxRequestBytes(1 << 20).withMaxModels(4)));
    channel = channel(server);
    grpc =
        GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    server.close();
  }

  private static ManagedChannel channel(ModelKeeperServer s) {
    return NettyChannelBuilder.forAddress("127.0.0.1", s.grpcPort())
        .usePlaintext()
        .maxInboundMessageSize(64 << 20)
        .build();
  }

  private static GRPCInferenceServiceBlockingStub withToken(GRPCInferenceServiceBlockingStub stub) {
    Metadata m = new Metadata();
    m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + TOKEN);
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(m));
  }

  private static ByteString floats(float... values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    b.asFloatBuffer().put(values);
    return ByteString.copyFrom(b.array());
  }

  static ModelInferRequest.Builder iris(long rows, ByteString raw) {
    return ModelInferRequest.newBuilder()
        .setModelName("iris")
        .addInputs(
            ModelInferRequest.InferInputTensor.newBuilder()
                .setName("input")
                .setDatatype("FP32")
                .addShape(rows)
                .addShape(4))
        .addRawInputContents(raw);
  }

  @Test
  void health_andServerMetadata_answer() {
    assertThat(grpc.serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).isTrue();
    assertThat(grpc.serverReady(ServerReadyRequest.getDefaultInstance()).getReady()).isTrue();
    assertThat(grpc.serverMetadata(ServerMetadataRequest.getDefaultInstance()).getExtensionsList())
        .contains("binary_tensor_data", "model_repository");
  }

  @Test
  void modelMetadata_ofIris_listsTensors() {
    ModelMetadataResponse md =
        grpc.modelMetadata(ModelMetadataRequest.newBuilder().setName("iris").build());
    assertThat(md.getName()).isEqualTo("iris");
    assertThat(md.getInputs(0).getName()).isEqualTo("input");
    assertThat(md.getInputs(0).getShapeList()).containsExactly(-1L, 4L);
    assertThat(grpc.modelReady(ModelReadyRequest.newBuilder().setName("iris").build()).getReady())
        .isTrue();
  }

  @Test
  void modelInfer_withRawContents_answersRawOutputs() {
    ModelInferResponse r =
        grpc.modelInfer(
            iris(2, floats(5.1f, 3.5f, 1.4f, 0.2f, 6.7f, 3.0f, 5.2f, 2.3f)).setId("req-7").build());
    assertThat(r.getId()).isEqualTo("req-7");
    assertThat(r.getModelName()).isEqualTo("iris");
    assertThat(r.getOutputsList())
        .extracting(ModelInferResponse.InferOutputTensor::getName)
        .containsExactly("probabilities", "label");
    assertThat(r.getRawOutputContentsCount()).isEqualTo(2);
    ByteBuffer p = r.getRawOutputContents(0).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    assertThat(p.remaining()).isEqualTo(2 * 3 * 4);
    float sum = 0;
    for (int i = 0; i < 3; i++) {
      sum += p.getFloat();
    }
    assertThat(sum).isCloseTo(1f, Offset.offset(1e-5f));
    ByteBuffer labels =
        r.getRawOutputContents(1).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    assertThat(labels.getLong()).isEqualTo(0L);
    assertThat(labels.getLong()).isEqualTo(2L);
  }

  @Test
  void modelInfer_largeRawContents_parsedOffHeap_answerAsTheSameRowsTyped_alsoWhenMemoryIsReused() {
    int rows = 5000; // an 80 kB message: parsed off-heap, its raw contents read in place
    for (int round = 0; round < 3; round++) {
      float[] values = new float[rows * 4];
      Random random = new Random(round);
      for (int i = 0; i < values.length; i++) {
        values[i] = 0.1f + 7 * random.nextFloat();
      }
      ModelInferResponse raw = grpc.modelInfer(iris(rows, floats(values)).build());
      assertThat(server.offHeapRequestBytes()).isLessThanOrEqualTo(128 * 1024); // one at most
      InferTensorContents.Builder typed = InferTensorContents.newBuilder();
      for (float v : values) {
        typed.addFp32Contents(v);
      }
      ModelInferRequest.Builder asTyped = iris(rows, ByteString.EMPTY).clearRawInputContents();
      asTyped.getInputsBuilder(0).setContents(typed);
      ModelInferResponse expected = grpc.modelInfer(asTyped.build());

      ByteBuffer labels =
          raw.getRawOutputContents(1).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
      assertThat(labels.remaining()).isEqualTo(rows * 8);
      List<Long> got = new ArrayList<>();
      while (labels.hasRemaining()) {
        got.add(labels.getLong());
      }
      assertThat(expected.getRawOutputContents(1)).isEqualTo(raw.getRawOutputContents(1));
      assertThat(got).contains(0L, 1L, 2L);
    }
    // each message's memory went back when its call closed
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> server.offHeapRequestBytes() == 0);
  }

  @Test
  void modelInfer_withTypedContents_answersRawOutputsForEveryDatatype() {
    ModelInferRequest.Builder b = ModelInferRequest.newBuilder().setModelName("types");
    typed(
        b,
        "fp32",
        "FP32",
        InferTensorContents.newBuilder().addFp32Contents(1.5f).addFp32Contents(-2f));
    typed(
        b,
        "fp64",
        "FP64",
        InferTensorContents.newBuilder().addFp64Contents(1.5).addFp64Contents(-2));
    typed(
        b, "int32", "INT32", InferTensorContents.newBuilder().addIntContents(3).addIntContents(-4));
    typed(
        b,
        "int64",
        "INT64",
        InferTensorContents.newBuilder().addInt64Contents(1L << 40).addInt64Contents(-1));
    typed(
        b,
        "int16",
        "INT16",
        InferTensorContents.newBuilder().addIntContents(-32768).addIntContents(7));
    typed(
        b,
        "int8",
        "INT8",
        InferTensorContents.newBuilder().addIntContents(-128).addIntContents(127));
    typed(
        b,
        "uint8",
        "UINT8",
        InferTensorContents.newBuilder().addUintContents(200).addUintContents(0));
    typed(
        b,
        "bool",
        "BOOL",
        InferTensorContents.newBuilder().addBoolContents(true).addBoolContents(false));
    typed(
        b,
        "bytes",
        "BYTES",
        InferTensorContents.newBuilder()
            .addBytesContents(ByteString.copyFromUtf8("h\u00e9"))
            .addBytesContents(ByteString.EMPTY));
    ModelInferResponse r = grpc.modelInfer(b.build());
    // answered in raw_output_contents, as Triton does, whatever form the inputs took
    assertThat(r.getRawOutputContentsCount()).isEqualTo(r.getOutputsCount());
    Map<String, List<Object>> out = new HashMap<>();
    for (int i = 0; i < r.getOutputsCount(); i++) {
      ModelInferResponse.InferOutputTensor o = r.getOutputs(i);
      Datatype dt = Datatype.parse(o.getDatatype());
      ByteBuffer raw =
          r.getRawOutputContents(i).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
      long[] shape = o.getShapeList().stream().mapToLong(Long::longValue).toArray();
      out.put(
          o.getName(),
          Tensor.of(o.getName(), dt, shape, dt.fromBinary(o.getName(), raw, (int) shape[0]))
              .toList());
    }
    assertThat(out.get("fp32_out")).containsExactly(3f, -4f);
    assertThat(out.get("fp64_out")).containsExactly(3.0, -4.0);
    assertThat(out.get("int32_out")).containsExactly(6, -8);
    assertThat(out.get("int64_out")).containsExactly(1L << 41, -2L);
    assertThat(out.get("int16_out")).containsExactly(-32768, 7);
    assertThat(out.get("int8_out")).containsExactly(-128, 127);
    assertThat(out.get("uint8_out")).containsExactly(200, 0);
    assertThat(out.get("bool_out")).containsExactly(false, true);
    assertThat(out.get("bytes_out")).containsExactly("h\u00e9", "");
  }

  private static void typed(
      ModelInferRequest.Builder b, String prefix, String datatype, InferTensorContents.Builder c) {
    b.addInputs(
        ModelInferRequest.InferInputTensor.newBuilder()
            .setName(prefix + "_in")
            .setDatatype(datatype)
            .addShape(2)
            .setContents(c));
  }

  @Test
  void modelInfer_withTypedContentsInTheWrongField_isInvalidArgument() {
    ModelInferRequest.Builder b = ModelInferRequest.newBuilder().setModelName("iris");
    typed(b, "input", "FP32", InferTensorContents.newBuilder().addIntContents(1));
    assertThat(code(() -> grpc.modelInfer(b.build()))).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void modelInfer_classificationOfAnOutput_answersItsTopClassesWithLabels() {
    ModelInferRequest request =
        iris(2, floats(5.1f, 3.5f, 1.4f, 0.2f, 6.7f, 3.0f, 5.2f, 2.3f))
            .addOutputs(
                ModelInferRequest.InferRequestedOutputTensor.newBuilder()
                    .setName("probabilities")
                    .putParameters(
                        "classification", InferParameter.newBuilder().setInt64Param(2).build()))
            .build();
    ModelInferResponse r = grpc.modelInfer(request);
    assertThat(r.getOutputsCount()).isEqualTo(1);
    assertThat(r.getOutputs(0).getDatatype()).isEqualTo("BYTES");
    assertThat(r.getOutputs(0).getShapeList()).containsExactly(2L, 2L);
    ByteBuffer raw =
        r.getRawOutputContents(0).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    List<String> classes = new ArrayList<>();
    while (raw.hasRemaining()) {
      byte[] s = new byte[raw.getInt()];
      raw.get(s);
      classes.add(new String(s, StandardCharsets.UTF_8));
    }
    assertThat(classes).hasSize(4);
    assertThat(classes.get(0)).matches("0\\.\\d+:0:setosa");
    assertThat(classes.get(2)).matches("0\\.\\d+:2:virginica");
    double first = Double.parseDouble(classes.get(0).split(":")[0]);
    double second = Double.parseDouble(classes.get(1).split(":")[0]);
    assertThat(first).isGreaterThanOrEqualTo(second);
  }

  @Test
  void modelInfer_classificationThatIsNotACount_isInvalidArgument() {
    ModelInferRequest request =
        iris(1, floats(1, 2, 3, 4))
            .addOutputs(
                ModelInferRequest.InferRequestedOutputTensor.newBuilder()
                    .setName("probabilities")
                    .putParameters(
                        "classification", InferParameter.newBuilder().setStringParam("2").build()))
            .build();
    assertThat(code(() -> grpc.modelInfer(request))).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void modelInfer_errors_mapToStatusCodes() {
    assertThat(
            code(() -> grpc.modelInfer(iris(1, floats(1, 2, 3, 4)).setModelName("nope").build())))
        .isEqualTo(Status.Code.NOT_FOUND);
    // 3 floats for a [1, 4] tensor: the raw size disagrees with the shape
    assertThat(code(() -> grpc.modelInfer(iris(1, floats(1, 2, 3)).build())))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    // [1, 3] is a shape iris does not take
    assertThat(
            code(
                () ->
                    grpc.modelInfer(
                        ModelInferRequest.newBuilder(iris(1, floats(1, 2, 3)).build())
                            .setInputs(
                                0,
                                ModelInferRequest.InferInputTensor.newBuilder()
                                    .setName("input")
                                    .setDatatype("FP32")
                                    .addShape(1)
                                    .addShape(3))
                            .build())))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void messageOverTheSizeLimit_isResourceExhausted() {
    ByteString big = ByteString.copyFrom(new byte[(1 << 20) + 16]);
    assertThat(code(() -> grpc.modelInfer(iris(65537, big).build())))
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(grpc.serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).isTrue();
  }

  @Test
  void inference_largerThanTheInflightBudget_isResourceExhausted_andItsBytesReturn()
      throws Exception {
    try (ModelKeeperServer s =
        TestServer.demo(
            b ->
                b.network(n -> n.withGrpcPort(0))
                    .budgets(
                        m ->
                            m.withMaxRequestBytes(64 << 10)
                                .withMaxInflightBytes(64 << 10)
                                .withMaxModels(2)))) {
      ManagedChannel ch = channel(s);
      try {
        GRPCInferenceServiceBlockingStub stub =
            GRPCInferenceServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS);
        // 2,500 rows of 4 floats: a 40 kB message (under the size limit) and as much decoded,
        // more than the 64 KiB budget together
        ByteString big = ByteString.copyFrom(new byte[2_500 * 16]);
        assertThat(code(() -> stub.modelInfer(iris(2_500, big).build())))
            .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(
                stub.modelInfer(iris(1, floats(5.1f, 3.5f, 1.4f, 0.2f)).build())
                    .getRawOutputContentsCount())
            .isEqualTo(2);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> s.inflightBytes() == 0);
      } finally {
        ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"BYTES", "bytes", " Bytes "}) // the datatype as the decoder reads it
  void manyEmptyBytesElements_countTheirStringsInTheBudget_andAreResourceExhausted(String datatype)
      throws Exception {
    // 100,000 empty raw elements: 400 kB of length prefixes, 4.8 MB of strings once decoded
    int n = 100_000;
    ModelInferRequest request =
        ModelInferRequest.newBuilder()
            .setModelName("types")
            .addInputs(
                ModelInferRequest.InferInputTensor.newBuilder()
                    .setName("bytes_in")
                    .setDatatype(datatype)
                    .addShape(n))
            .addRawInputContents(ByteString.copyFrom(new byte[4 * n]))
            .build();
    try (ModelKeeperServer s =
        TestServer.demo(
            b ->
                b.network(net -> net.withGrpcPort(0))
                    .budgets(m -> m.withMaxRequestBytes(1 << 20).withMaxInflightBytes(1 << 20)))) {
      ManagedChannel ch = channel(s);
      try {
        GRPCInferenceServiceBlockingStub stub =
            GRPCInferenceServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS);
        assertThat(code(() -> stub.modelInfer(request))).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> s.inflightBytes() == 0);
      } finally {
        ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void repositoryMethods_needTheBearerToken_inferenceDoesNot() {
    assertThat(code(() -> grpc.repositoryIndex(RepositoryIndexRequest.getDefaultInstance())))
        .isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(
            code(
                () ->
                    grpc.repositoryModelLoad(
                        RepositoryModelLoadRequest.newBuilder().setModelName("mlp-small").build())))
        .isEqualTo(Status.Code.UNAUTHENTICATED);
    GRPCInferenceServiceBlockingStub authed = withToken(grpc);
    assertThat(authed.repositoryIndex(RepositoryIndexRequest.getDefaultInstance()).getModelsList())
        .extracting(m -> m.getName())
        .contains("iris", "mlp-small", "mlp-medium", "types");
    authed.repositoryModelLoad(
        RepositoryModelLoadRequest.newBuilder().setModelName("mlp-small").build());
    assertThat(
            grpc.modelReady(ModelReadyRequest.newBuilder().setName("mlp-small").build()).getReady())
        .isTrue();
    authed.repositoryModelUnload(
        RepositoryModelUnloadRequest.newBuilder().setModelName("mlp-small").build());
    assertThat(
            grpc.modelReady(ModelReadyRequest.newBuilder().setName("mlp-small").build()).getReady())
        .isFalse();
    assertThat(
            code(
                () ->
                    authed.repositoryModelLoad(
                        RepositoryModelLoadRequest.newBuilder().setModelName("no-such").build())))
        .isEqualTo(Status.Code.NOT_FOUND);
  }

  @Test
  void deadline_thatPassesWhileALoadIsPending_endsTheCallAtTheDeadline() throws Exception {
    Gate load = new Gate();
    FakeModels models = FakeModels.of("slow/1").gateLoad("slow/1", load);
    try (ModelKeeperServer s = TestServer.fake(models, b -> b.network(n -> n.withGrpcPort(0)))) {
      ManagedChannel ch = channel(s);
      try {
        long start = System.nanoTime();
        StatusRuntimeException e =
            org.junit.jupiter.api.Assertions.assertThrows(
                StatusRuntimeException.class,
                () ->
                    GRPCInferenceServiceGrpc.newBlockingStub(ch)
                        .withDeadlineAfter(300, TimeUnit.MILLISECONDS)
                        .repositoryModelLoad(
                            RepositoryModelLoadRequest.newBuilder().setModelName("slow").build()));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(load.isEntered()).as("the load was pending").isTrue();
        assertThat(took).isLessThan(Duration.ofSeconds(Gate.TIMEOUT_SECONDS / 2));
      } finally {
        load.open();
        ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  /** Passes bytes through as they are, to send messages a protobuf encoder would not produce. */
  private static final Marshaller<byte[]> RAW_BYTES =
      new Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  @Test
  void messageThatIsNotValidProtobuf_isInvalidArgument_andTheNextCallIsAnswered() {
    MethodDescriptor<byte[], byte[]> raw =
        GRPCInferenceServiceGrpc.getModelInferMethod().toBuilder(RAW_BYTES, RAW_BYTES).build();
    // field 1 (model_name) as a length-delimited string 2 GB long, in 3 bytes: not protobuf
    byte[] garbage = {0x0a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07};
    StatusRuntimeException e =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    raw,
                    CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS),
                    garbage));
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription()).contains("ModelInferRequest");
    assertThat(grpc.modelInfer(iris(1, floats(5.1f, 3.5f, 1.4f, 0.2f)).build()).getOutputsCount())
        .isEqualTo(2);
  }

  @Test
  void everyCall_isCountedByMethodAndCode_includingOnesTheTransportEnds() throws Exception {
    try (ModelKeeperServer s =
        TestServer.demo(
            b -> b.network(n -> n.withGrpcPort(0)).budgets(m -> m.withMaxRequestBytes(1 << 16)))) {
      ManagedChannel ch = channel(s);
      try {
        GRPCInferenceServiceBlockingStub stub =
            GRPCInferenceServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS);
        stub.serverLive(ServerLiveRequest.getDefaultInstance());
        stub.modelInfer(iris(1, floats(5.1f, 3.5f, 1.4f, 0.2f)).build());
        stub.modelInfer(iris(1, floats(5.1f, 3.5f, 1.4f, 0.2f)).build());
        assertThat(
                code(
                    () ->
                        stub.modelInfer(iris(1, floats(1, 2, 3, 4)).setModelName("nope").build())))
            .isEqualTo(Status.Code.NOT_FOUND);
        // over the message size limit: the transport ends it before any handler runs
        ByteString big = ByteString.copyFrom(new byte[(1 << 16) + 16]);
        assertThat(code(() -> stub.modelInfer(iris(4097, big).build())))
            .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        // a method the service does not have is counted under one name, whatever it is called
        MethodDescriptor<ServerLiveRequest, ServerLiveRequest> missing =
            GRPCInferenceServiceGrpc.getServerLiveMethod().toBuilder(
                    ProtoUtils.marshaller(ServerLiveRequest.getDefaultInstance()),
                    ProtoUtils.marshaller(ServerLiveRequest.getDefaultInstance()))
                .setFullMethodName("inference.GRPCInferenceService/NoSuchMethod")
                .build();
        assertThat(
                code(
                    () ->
                        ClientCalls.blockingUnaryCall(
                            ch,
                            missing,
                            CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS),
                            ServerLiveRequest.getDefaultInstance())))
            .isEqualTo(Status.Code.UNIMPLEMENTED);
        // a stream is counted when it closes, which may follow the answer by a moment
        String[] expected = {
          "modelkeeper_grpc_requests_total{code=\"OK\",method=\"ServerLive\"} 1.0",
          "modelkeeper_grpc_requests_total{code=\"OK\",method=\"ModelInfer\"} 2.0",
          "modelkeeper_grpc_requests_total{code=\"NOT_FOUND\",method=\"ModelInfer\"} 1.0",
          "modelkeeper_grpc_requests_total{code=\"RESOURCE_EXHAUSTED\",method=\"ModelInfer\"} 1.0",
          "modelkeeper_grpc_requests_total{code=\"UNIMPLEMENTED\",method=\"unknown\"} 1.0",
          "modelkeeper_grpc_request_seconds_count{method=\"ModelInfer\"} 4"
        };
        Awaitility.await()
            .atMost(Duration.ofSeconds(10))
            .untilAsserted(
                () ->
                    assertThat(Http.to(s.port()).get("/metrics").body())
                        .contains(expected)
                        .doesNotContain("NoSuchMethod"));
      } finally {
        ch.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void grpcErrors_giveEveryFailureTypeItsGrpcCode() {
    Map<Throwable, Status.Code> cases =
        Map.of(
            new ModelNotFoundException("x"), Status.Code.NOT_FOUND,
            new InvalidInputException("x"), Status.Code.INVALID_ARGUMENT,
            new BadRequestException("x"), Status.Code.INVALID_ARGUMENT,
            new UnauthorizedException("x"), Status.Code.UNAUTHENTICATED,
            new ConflictException("x"), Status.Code.ALREADY_EXISTS,
            new RequestTimeoutException("x"), Status.Code.DEADLINE_EXCEEDED,
            new CapacityExceededException("x"), Status.Code.UNAVAILABLE,
            new UnavailableException("x", Duration.ofSeconds(1)), Status.Code.UNAVAILABLE,
            new CancellationException(), Status.Code.CANCELLED,
            new IllegalStateException("bug"), Status.Code.INTERNAL);
    cases.forEach(
        (failure, code) -> {
          Status s = GrpcErrors.toStatus(failure, "t", PathRedaction.NONE);
          assertThat(s.getCode()).as(failure.getClass().getSimpleName()).isEqualTo(code);
          assertThat(s.getDescription()).isNotBlank();
        });
    for (Failure.Kind kind : Failure.Kind.values()) {
      assertThat(GrpcErrors.code(kind).getCode()).as(kind.name()).isNotEqualTo(Status.Code.UNKNOWN);
    }
  }

  private static Status.Code code(Runnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
    throw new AssertionError("the call succeeded");
  }

  @Test
  void repositoryModelLoad_withConfigOverride_appliesIt_untilAPlainLoad_andRefusesBadParameters() {
    GRPCInferenceServiceBlockingStub authed = withToken(grpc);
    authed.repositoryModelLoad(
        RepositoryModelLoadRequest.newBuilder()
            .setModelName("mlp-small")
            .putParameters(
                "config",
                ModelRepositoryParameter.newBuilder()
                    .setStringParam("{\"max_batch_size\": 3}")
                    .build())
            .build());
    assertThat(
            grpc.modelConfig(ModelConfigRequest.newBuilder().setName("mlp-small").build())
                .getConfig()
                .getMaxBatchSize())
        .isEqualTo(3);
    authed.repositoryModelLoad(
        RepositoryModelLoadRequest.newBuilder().setModelName("mlp-small").build());
    assertThat(
            grpc.modelConfig(ModelConfigRequest.newBuilder().setName("mlp-small").build())
                .getConfig()
                .getMaxBatchSize())
        .isNotEqualTo(3);
    assertThat(
            code(
                () ->
                    authed.repositoryModelLoad(
                        RepositoryModelLoadRequest.newBuilder()
                            .setModelName("mlp-small")
                            .putParameters(
                                "config",
                                ModelRepositoryParameter.newBuilder().setBoolParam(true).build())
                            .build())))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(
            code(
                () ->
                    authed.repositoryModelUnload(
                        RepositoryModelUnloadRequest.newBuilder()
                            .setModelName("mlp-small")
                            .putParameters(
                                "force",
                                ModelRepositoryParameter.newBuilder().setBoolParam(true).build())
                            .build())))
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
  }
}
