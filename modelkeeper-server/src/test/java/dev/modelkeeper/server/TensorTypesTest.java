package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.HalfFloats;
import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.writer.OnnxGraphBuilder;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc;
import dev.modelkeeper.server.grpc.GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub;
import dev.modelkeeper.server.grpc.ModelInferRequest;
import dev.modelkeeper.server.grpc.ModelInferResponse;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every tensor type and shape a model declares, carried exactly over JSON, binary REST and gRPC:
 * FP16 and BF16 in and out, UINT16/32/64 outputs, BYTES with every byte value, 4-byte UTF-8, empty
 * elements and scalars, an input that declares no shape, and an input with a default.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TensorTypesTest {

  @TempDir static Path root;

  private static ModelKeeperServer server;
  private static Http http;
  private static ManagedChannel channel;
  private static GRPCInferenceServiceBlockingStub grpc;

  @BeforeAll
  static void start() throws Exception {
    model(
        "halfs",
        new OnnxGraphBuilder("halfs")
            .input("h", Datatype.FP16, -1)
            .node("Identity", List.of("h"), List.of("h_out"))
            .output("h_out", Datatype.FP16, -1)
            .input("b", Datatype.BF16, -1)
            .node("Identity", List.of("b"), List.of("b_out"))
            .output("b_out", Datatype.BF16, -1)
            .input("i", Datatype.INT64, -1)
            .node("Cast", List.of("i"), List.of("u16"), to(Datatype.UINT16))
            .output("u16", Datatype.UINT16, -1)
            .node("Cast", List.of("i"), List.of("u32"), to(Datatype.UINT32))
            .output("u32", Datatype.UINT32, -1)
            .node("Cast", List.of("i"), List.of("u64"), to(Datatype.UINT64))
            .output("u64", Datatype.UINT64, -1));
    model(
        "echo",
        new OnnxGraphBuilder("echo")
            .input("s", Datatype.BYTES, -1)
            .node("Identity", List.of("s"), List.of("s_out"))
            .output("s_out", Datatype.BYTES, -1));
    model(
        "anybytes",
        new OnnxGraphBuilder("anybytes")
            .shapelessInput("s", Datatype.BYTES)
            .node("Identity", List.of("s"), List.of("s_out"))
            .shapelessOutput("s_out", Datatype.BYTES));
    model(
        "perrow",
        new OnnxGraphBuilder("perrow")
            .input("x", Datatype.FP32, -1)
            .node("Neg", List.of("x"), List.of("y"))
            .output("y", Datatype.FP32, -1));
    // Triton's form of a per-row scalar: dims [1] for clients, no dimension for the model
    Files.writeString(
        root.resolve("perrow/config.pbtxt"),
        "max_batch_size: 8\n"
            + "input [ { name: \"x\" data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } } ]\n"
            + "output [ { name: \"y\" data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } } ]\n");
    model(
        "anyshape",
        new OnnxGraphBuilder("anyshape")
            .shapelessInput("x", Datatype.FP32)
            .node("Neg", List.of("x"), List.of("y"))
            .shapelessOutput("y", Datatype.FP32));
    model(
        "withdefault",
        new OnnxGraphBuilder("withdefault")
            .input("a", Datatype.FP32, 2)
            .input("b", Datatype.FP32, 2)
            .initializer("b", new long[] {2}, new float[] {10, 20})
            .node("Add", List.of("a", "b"), List.of("y"))
            .output("y", Datatype.FP32, 2));
    server =
        TestServer.start(
            TestServer.config(new LocalModelRepository(root)).network(n -> n.withGrpcPort(0)));
    http = Http.to(server.port());
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
    grpc = GRPCInferenceServiceGrpc.newBlockingStub(channel);
  }

  @AfterAll
  static void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  private static void model(String name, OnnxGraphBuilder graph) throws Exception {
    graph.writeTo(Files.createDirectories(root.resolve(name).resolve("1")).resolve("model.onnx"));
  }

  private static OnnxGraphBuilder.Attribute to(Datatype type) {
    return OnnxGraphBuilder.intAttr("to", OnnxGraphBuilder.onnxType(type));
  }

  // FP16 values that are exact in half precision, and BF16 values exact in bfloat16
  private static final float[] HALFS = {1.5f, -2f, 65504f, 0x1p-14f, 0x1p-24f, 0f};
  private static final float[] BFLOATS = {1.5f, -2f, 3.3895314e38f, 0x1p-126f, 0f};
  private static final long[] INTS = {0, 1, 65535, -1};

  @Test
  void halfAndUnsignedTypes_overJson_carryExactValues() {
    String body =
        "{\"inputs\":["
            + input("h", "FP16", HALFS.length, floats(HALFS))
            + ","
            + input("b", "BF16", BFLOATS.length, floats(BFLOATS))
            + ","
            + input("i", "INT64", INTS.length, "0,1,65535,-1")
            + "]}";
    Http.Response r = http.post("/v2/models/halfs/infer", body);
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    JsonNode outputs = r.json().get("outputs");
    assertThat(values(outputs, "h_out")).containsExactly(floats(HALFS).split(","));
    assertThat(values(outputs, "b_out")).containsExactly(floats(BFLOATS).split(","));
    assertThat(values(outputs, "u16")).containsExactly("0", "1", "65535", "65535");
    assertThat(values(outputs, "u32")).containsExactly("0", "1", "65535", "4294967295");
    assertThat(values(outputs, "u64")).containsExactly("0", "1", "65535", "18446744073709551615");
    assertThat(datatype(outputs, "u64")).isEqualTo("UINT64");
    assertThat(datatype(outputs, "h_out")).isEqualTo("FP16");
  }

  @Test
  void halfAndUnsignedTypes_overBinaryAndGrpc_carryExactBits() {
    short[] h = new short[HALFS.length];
    for (int i = 0; i < h.length; i++) {
      h[i] = HalfFloats.fp16FromFloat(HALFS[i]);
    }
    short[] b = new short[BFLOATS.length];
    for (int i = 0; i < b.length; i++) {
      b[i] = (short) (Float.floatToRawIntBits(BFLOATS[i]) >>> 16);
    }
    byte[] hRaw = Datatype.FP16.toBinary(h);
    byte[] bRaw = Datatype.BF16.toBinary(b);
    byte[] iRaw = Datatype.INT64.toBinary(INTS);

    Http.BinaryResponse r =
        http.postBinary(
            "/v2/models/halfs/infer",
            "{\"inputs\":["
                + binaryInput("h", "FP16", h.length, hRaw.length)
                + ","
                + binaryInput("b", "BF16", b.length, bRaw.length)
                + ","
                + binaryInput("i", "INT64", INTS.length, iRaw.length)
                + "],\"parameters\":{\"binary_data_output\":true}}",
            concat(hRaw, bRaw, iRaw));
    assertThat(r.status()).as(r.json().toString()).isEqualTo(200);
    List<byte[]> rest = new ArrayList<>();
    for (JsonNode o : r.json().get("outputs")) {
      byte[] bytes = new byte[o.get("parameters").get("binary_data_size").asInt()];
      r.binary().get(bytes);
      rest.add(bytes);
    }
    assertThat(rest.get(0)).isEqualTo(hRaw);
    assertThat(rest.get(1)).isEqualTo(bRaw);
    assertThat(rest.get(4)).isEqualTo(iRaw); // UINT64 is INT64's bits

    ModelInferResponse g =
        grpc.withDeadlineAfter(30, TimeUnit.SECONDS)
            .modelInfer(
                ModelInferRequest.newBuilder()
                    .setModelName("halfs")
                    .addInputs(grpcInput("h", "FP16", h.length))
                    .addInputs(grpcInput("b", "BF16", b.length))
                    .addInputs(grpcInput("i", "INT64", INTS.length))
                    .addRawInputContents(ByteString.copyFrom(hRaw))
                    .addRawInputContents(ByteString.copyFrom(bRaw))
                    .addRawInputContents(ByteString.copyFrom(iRaw))
                    .build());
    assertThat(g.getRawOutputContents(0).toByteArray()).isEqualTo(hRaw);
    assertThat(g.getRawOutputContents(1).toByteArray()).isEqualTo(bRaw);
    assertThat(g.getOutputs(2).getDatatype()).isEqualTo("UINT16");
    assertThat(g.getRawOutputContents(4).toByteArray()).isEqualTo(iRaw);
  }

  /**
   * Every byte value at the start, in the middle and at the end of a BYTES element, with 4-byte
   * UTF-8 and empty elements beside them, through an echo over binary REST and gRPC raw contents:
   * every element back unchanged.
   */
  @Test
  void bytes_everyByteValueInEveryPosition_overBinaryAndGrpc_comeBackUnchanged() {
    List<byte[]> elements = new ArrayList<>();
    for (int v = 0; v < 256; v++) {
      elements.add(new byte[] {(byte) v, 'a'});
      elements.add(new byte[] {'a', (byte) v, 'z'});
      elements.add(new byte[] {'a', (byte) v});
    }
    elements.add(new byte[0]);
    elements.add("\uD83D\uDE00\u0000\uD83E\uDD16".getBytes(StandardCharsets.UTF_8));
    elements.add(new byte[0]);
    byte[] raw = Datatype.BYTES.toBinary(elements.toArray(new byte[0][]));
    String header =
        "{\"inputs\":["
            + binaryInput("s", "BYTES", "[" + elements.size() + "]", raw.length)
            + "],\"parameters\":{\"binary_data_output\":true}}";
    Http.BinaryResponse r = http.postBinary("/v2/models/echo/infer", header, raw);
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    byte[] back = new byte[r.binary().remaining()];
    r.binary().get(back);
    assertThat(HexFormat.of().formatHex(back)).isEqualTo(HexFormat.of().formatHex(raw));
    ModelInferResponse g =
        grpc.withDeadlineAfter(30, TimeUnit.SECONDS)
            .modelInfer(
                ModelInferRequest.newBuilder()
                    .setModelName("echo")
                    .addInputs(grpcInput("s", "BYTES", elements.size()))
                    .addRawInputContents(ByteString.copyFrom(raw))
                    .build());
    assertThat(HexFormat.of().formatHex(g.getRawOutputContents(0).toByteArray()))
        .isEqualTo(HexFormat.of().formatHex(raw));
  }

  /**
   * BYTES as JSON strings: U+0000, 4-byte UTF-8 (emoji) and empty strings come back as the same
   * strings.
   */
  @Test
  void bytes_nulAndEmojiAndEmpty_overJson_comeBackUnchanged() {
    String sent = "[\"he\\u0000llo\",\"\",\"\uD83D\uDE00 ok \uD83E\uDD16\",\"\\u0000\"]";
    Http.Response r =
        http.post(
            "/v2/models/echo/infer",
            "{\"inputs\":[{\"name\":\"s\",\"datatype\":\"BYTES\",\"shape\":[4],\"data\":"
                + sent
                + "}]}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(values(r.json().get("outputs"), "s_out"))
        .containsExactly("he\u0000llo", "", "\uD83D\uDE00 ok \uD83E\uDD16", "\u0000");
  }

  /** A BYTES scalar (shape []) into a model whose input declares no shape: back as a scalar. */
  @Test
  void bytes_scalar_overJsonBinaryAndGrpc_comesBackAsAScalar() {
    Http.Response json =
        http.post(
            "/v2/models/anybytes/infer",
            "{\"inputs\":[{\"name\":\"s\",\"datatype\":\"BYTES\",\"shape\":[],"
                + "\"data\":[\"\uD83D\uDE00\"]}]}");
    assertThat(json.status()).as(json.toString()).isEqualTo(200);
    JsonNode out = json.json().get("outputs").get(0);
    assertThat(out.get("shape").toString()).isEqualTo("[]");
    assertThat(values(json.json().get("outputs"), "s_out")).containsExactly("\uD83D\uDE00");
    byte[] raw = Datatype.BYTES.toBinary(new byte[][] {{0, (byte) 0xff, 'x'}});
    Http.BinaryResponse binary =
        http.postBinary(
            "/v2/models/anybytes/infer",
            "{\"inputs\":["
                + binaryInput("s", "BYTES", "[]", raw.length)
                + "],\"parameters\":{\"binary_data_output\":true}}",
            raw);
    assertThat(binary.status()).as(binary.toString()).isEqualTo(200);
    byte[] back = new byte[binary.binary().remaining()];
    binary.binary().get(back);
    assertThat(back).isEqualTo(raw);
    ModelInferResponse g =
        grpc.withDeadlineAfter(30, TimeUnit.SECONDS)
            .modelInfer(
                ModelInferRequest.newBuilder()
                    .setModelName("anybytes")
                    .addInputs(
                        ModelInferRequest.InferInputTensor.newBuilder()
                            .setName("s")
                            .setDatatype("BYTES"))
                    .addRawInputContents(ByteString.copyFrom(raw))
                    .build());
    assertThat(g.getOutputs(0).getShapeList()).isEmpty();
    assertThat(g.getRawOutputContents(0).toByteArray()).isEqualTo(raw);
  }

  /**
   * {@code reshape: { shape: [ ] }} on an input and an output of a batching model, as Triton means
   * it: clients send and get {@code [rows, 1]}, the model takes and gives {@code [rows]}.
   */
  @Test
  void reshapeToAScalarPerRow_onAnInputAndAnOutput_isServedAsTritonServesIt() {
    Http.Response md = http.get("/v2/models/perrow");
    assertThat(md.status()).as(md.toString()).isEqualTo(200);
    assertThat(md.json().get("inputs").get(0).get("shape").toString()).isEqualTo("[-1,1]");
    assertThat(md.json().get("outputs").get(0).get("shape").toString()).isEqualTo("[-1,1]");
    Http.Response r =
        http.post(
            "/v2/models/perrow/infer",
            "{\"inputs\":[" + input("x", "FP32", "[3,1]", "1,2,3") + "]}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    JsonNode y = r.json().get("outputs").get(0);
    assertThat(y.get("shape").toString()).isEqualTo("[3,1]");
    assertThat(y.get("data").toString()).isEqualTo("[-1.0,-2.0,-3.0]");
  }

  @Test
  void inputDeclaringNoShape_takesAnyShape_andMetadataSaysAnySize() {
    Http.Response md = http.get("/v2/models/anyshape");
    assertThat(md.json().get("inputs").get(0).get("shape").toString()).isEqualTo("[-1]");
    for (String shape : List.of("[2,3]", "[6]", "[1,1,6]")) {
      Http.Response r =
          http.post(
              "/v2/models/anyshape/infer",
              "{\"inputs\":[" + input("x", "FP32", shape, "1,2,3,4,5,6") + "]}");
      assertThat(r.status()).as(r.toString()).isEqualTo(200);
      JsonNode y = r.json().get("outputs").get(0);
      assertThat(y.get("shape").toString()).isEqualTo(shape);
      assertThat(y.get("data").toString()).isEqualTo("[-1.0,-2.0,-3.0,-4.0,-5.0,-6.0]");
    }
  }

  @Test
  void inputWithADefault_mayBeLeftOut_andSendingItIsRefusedClearly() {
    Http.Response r =
        http.post(
            "/v2/models/withdefault/infer", "{\"inputs\":[" + input("a", "FP32", 2, "1,2") + "]}");
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    assertThat(r.json().get("outputs").get(0).get("data").toString()).isEqualTo("[11.0,22.0]");
    Http.Response both =
        http.post(
            "/v2/models/withdefault/infer",
            "{\"inputs\":["
                + input("a", "FP32", 2, "1,2")
                + ","
                + input("b", "FP32", 2, "1,1")
                + "]}");
    assertThat(both.status()).isEqualTo(400);
    assertThat(both.error())
        .contains("input 'b' of model 'withdefault/1' has a default value in the model")
        .contains("leave it out to use the default");
  }

  private static String input(String name, String datatype, int n, String data) {
    return input(name, datatype, "[" + n + "]", data);
  }

  private static String input(String name, String datatype, String shape, String data) {
    return "{\"name\":\""
        + name
        + "\",\"datatype\":\""
        + datatype
        + "\",\"shape\":"
        + shape
        + ",\"data\":["
        + data
        + "]}";
  }

  private static String binaryInput(String name, String datatype, int n, int bytes) {
    return binaryInput(name, datatype, "[" + n + "]", bytes);
  }

  private static String binaryInput(String name, String datatype, String shape, int bytes) {
    return "{\"name\":\""
        + name
        + "\",\"datatype\":\""
        + datatype
        + "\",\"shape\":"
        + shape
        + ",\"parameters\":{\"binary_data_size\":"
        + bytes
        + "}}";
  }

  private static ModelInferRequest.InferInputTensor grpcInput(String name, String datatype, int n) {
    return ModelInferRequest.InferInputTensor.newBuilder()
        .setName(name)
        .setDatatype(datatype)
        .addShape(n)
        .build();
  }

  private static String floats(float[] values) {
    StringBuilder out = new StringBuilder();
    for (float v : values) {
      out.append(out.length() == 0 ? "" : ",").append(v);
    }
    return out.toString();
  }

  private static List<String> values(JsonNode outputs, String name) {
    List<String> out = new ArrayList<>();
    for (JsonNode o : outputs) {
      if (o.get("name").asText().equals(name)) {
        o.get("data").forEach(v -> out.add(v.isNumber() ? v.numberValue().toString() : v.asText()));
      }
    }
    return out;
  }

  private static String datatype(JsonNode outputs, String name) {
    for (JsonNode o : outputs) {
      if (o.get("name").asText().equals(name)) {
        return o.get("datatype").asText();
      }
    }
    return null;
  }

  private static byte[] concat(byte[]... parts) {
    ByteBuffer out =
        ByteBuffer.allocate(Arrays.stream(parts).mapToInt(p -> p.length).sum())
            .order(ByteOrder.LITTLE_ENDIAN);
    for (byte[] p : parts) {
      out.put(p);
    }
    return out.array();
  }
}
