package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The binary tensor data extension over REST against the demo models: binary inputs and outputs,
 * JSON and binary mixed, binary output of every datatype, and the 400s for a header length past the
 * body, sizes that disagree with the shape, truncated BYTES prefixes and unclaimed bytes.
 */
class BinaryTensorDataTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static ModelKeeperServer server;
  private static HttpClient client;

  @BeforeAll
  static void start() {
    server = TestServer.demo(b -> b.budgets(m -> m.withMaxModels(4)));
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** A response: status, the JSON header and the binary part after it. */
  private record Answer(int status, JsonNode json, ByteBuffer binary, String headerLength) {}

  private static Answer post(String model, String json, byte[] binary, Integer headerLength)
      throws IOException, InterruptedException {
    byte[] head = json.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(head);
    body.write(binary);
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create(
                    server.url().replace("localhost", "127.0.0.1")
                        + "/v2/models/"
                        + model
                        + "/infer"))
            .timeout(Http.TIMEOUT)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray()));
    b.header(
        "Inference-Header-Content-Length",
        Integer.toString(headerLength != null ? headerLength : head.length));
    HttpResponse<byte[]> r = client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    String length = r.headers().firstValue("Inference-Header-Content-Length").orElse(null);
    int jsonLength = length != null ? Integer.parseInt(length) : r.body().length;
    JsonNode parsed = MAPPER.readTree(r.body(), 0, jsonLength);
    ByteBuffer rest =
        ByteBuffer.wrap(r.body(), jsonLength, r.body().length - jsonLength)
            .slice()
            .order(ByteOrder.LITTLE_ENDIAN);
    return new Answer(r.statusCode(), parsed, rest, length);
  }

  /** Posts {@code body} (a JSON part of {@code headerLength} bytes, then binary) to {@code s}. */
  private static HttpResponse<String> postTo(
      ModelKeeperServer s, String model, int headerLength, byte[] body)
      throws IOException, InterruptedException {
    return client.send(
        HttpRequest.newBuilder(
                URI.create(
                    s.url().replace("localhost", "127.0.0.1") + "/v2/models/" + model + "/infer"))
            .timeout(Http.TIMEOUT)
            .header("Inference-Header-Content-Length", Integer.toString(headerLength))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static byte[] le(int bytes, Consumer<ByteBuffer> fill) {
    ByteBuffer b = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    fill.accept(b);
    return b.array();
  }

  private static final byte[] IRIS_2_ROWS =
      le(
          32,
          b -> {
            for (float f : new float[] {5.1f, 3.5f, 1.4f, 0.2f, 6.7f, 3.0f, 5.2f, 2.3f}) {
              b.putFloat(f);
            }
          });

  @Test
  void irisInBinary_withBinaryDataOutput_answersBinaryOutputsAndTheHeaderLength() throws Exception {
    Answer a =
        post(
            "iris",
            "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[2,4],"
                + "\"parameters\":{\"binary_data_size\":32}}],"
                + "\"parameters\":{\"binary_data_output\":true}}",
            IRIS_2_ROWS,
            null);
    assertThat(a.status()).as(a.json().toString()).isEqualTo(200);
    assertThat(a.headerLength()).isNotNull();
    JsonNode outputs = a.json().get("outputs");
    assertThat(outputs.get(0).get("name").asText()).isEqualTo("probabilities");
    assertThat(outputs.get(0).has("data")).isFalse();
    assertThat(outputs.get(0).get("parameters").get("binary_data_size").asInt()).isEqualTo(24);
    assertThat(outputs.get(1).get("parameters").get("binary_data_size").asInt()).isEqualTo(16);
    assertThat(a.binary().remaining()).isEqualTo(40);
    a.binary().position(24);
    assertThat(a.binary().getLong()).isEqualTo(0L);
    assertThat(a.binary().getLong()).isEqualTo(2L);
  }

  @Test
  void largeBinaryInputs_heldOffHeap_answerAsTheSameRowsInJson_alsoWhenTheirMemoryIsReused()
      throws Exception {
    int rows = 5000; // 80,000 bytes: the body is held off-heap and read by the model in place
    for (int round = 0; round < 3; round++) {
      float[] values = new float[rows * 4];
      Random random = new Random(round);
      for (int i = 0; i < values.length; i++) {
        values[i] = 0.1f + 7 * random.nextFloat();
      }
      byte[] binary = le(values.length * 4, b -> b.asFloatBuffer().put(values));
      Answer inBinary =
          post(
              "iris",
              "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
                  + rows
                  + ",4],\"parameters\":{\"binary_data_size\":"
                  + binary.length
                  + "}}],\"outputs\":[{\"name\":\"label\"}]}",
              binary,
              null);
      StringBuilder data = new StringBuilder();
      for (float v : values) {
        data.append(data.length() == 0 ? "" : ",").append(v);
      }
      Http.Response inJson =
          Http.to(server.port())
              .post(
                  "/v2/models/iris/infer",
                  "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
                      + rows
                      + ",4],\"data\":["
                      + data
                      + "]}],\"outputs\":[{\"name\":\"label\"}]}");
      assertThat(inBinary.status()).as(inBinary.json().toString()).isEqualTo(200);
      assertThat(inJson.status()).isEqualTo(200);
      JsonNode expected = MAPPER.readTree(inJson.body()).get("outputs").get(0).get("data");
      assertThat(inBinary.json().get("outputs").get(0).get("data")).isEqualTo(expected);
      assertThat(expected.toString()).contains("0").contains("1").contains("2");
    }
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> server.offHeapRequestBytes() == 0); // every body's memory went back
  }

  @Test
  void binaryInput_withJsonOutputsRequested_answersAllJson() throws Exception {
    Answer a =
        post(
            "iris",
            "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[2,4],"
                + "\"parameters\":{\"binary_data_size\":32}}],"
                + "\"outputs\":[{\"name\":\"label\",\"parameters\":{\"binary_data\":false}}]}",
            IRIS_2_ROWS,
            null);
    assertThat(a.status()).isEqualTo(200);
    assertThat(a.headerLength()).isNull();
    assertThat(a.json().get("outputs")).hasSize(1);
    assertThat(a.json().get("outputs").get(0).get("data").toString()).isEqualTo("[0,2]");
  }

  @Test
  void everyDatatype_mixedJsonAndBinaryInputs_answersBinaryOutputsOfEveryDatatype()
      throws Exception {
    // binary: fp32, int64, int8, bool, bytes; JSON: the rest
    byte[] fp32 = le(8, b -> b.putFloat(1.5f).putFloat(-2f));
    byte[] int64 = le(16, b -> b.putLong(1L << 40).putLong(-1));
    byte[] int8 = {-128, 127};
    byte[] bool = {1, 0};
    byte[] hello = "h\u00e9".getBytes(StandardCharsets.UTF_8);
    byte[] bytes = le(8 + hello.length, b -> b.putInt(hello.length).put(hello).putInt(0));
    ByteArrayOutputStream bin = new ByteArrayOutputStream();
    for (byte[] part : new byte[][] {fp32, int64, int8, bool, bytes}) {
      bin.write(part);
    }
    String json =
        "{\"inputs\":["
            + binaryInput("fp32", "FP32", fp32.length)
            + ","
            + "{\"name\":\"fp64_in\",\"datatype\":\"FP64\",\"shape\":[2],\"data\":[1.5,-2]},"
            + "{\"name\":\"int32_in\",\"datatype\":\"INT32\",\"shape\":[2],\"data\":[3,-4]},"
            + binaryInput("int64", "INT64", int64.length)
            + ","
            + "{\"name\":\"int16_in\",\"datatype\":\"INT16\",\"shape\":[2],\"data\":[-32768,7]},"
            + binaryInput("int8", "INT8", int8.length)
            + ","
            + "{\"name\":\"uint8_in\",\"datatype\":\"UINT8\",\"shape\":[2],\"data\":[200,0]},"
            + binaryInput("bool", "BOOL", bool.length)
            + ","
            + binaryInput("bytes", "BYTES", bytes.length)
            + "],\"parameters\":{\"binary_data_output\":true}}";
    Answer a = post("types", json, bin.toByteArray(), null);
    assertThat(a.status()).as(a.json().toString()).isEqualTo(200);
    Map<String, ByteBuffer> out = new HashMap<>();
    ByteBuffer rest = a.binary();
    for (JsonNode o : a.json().get("outputs")) {
      assertThat(o.has("data")).isFalse();
      int size = o.get("parameters").get("binary_data_size").asInt();
      out.put(
          o.get("name").asText(), rest.slice(rest.position(), size).order(ByteOrder.LITTLE_ENDIAN));
      rest.position(rest.position() + size);
    }
    assertThat(rest.hasRemaining()).isFalse();
    assertThat(out.get("fp32_out").getFloat()).isEqualTo(3f);
    assertThat(out.get("fp64_out").getDouble(8)).isEqualTo(-4.0);
    assertThat(out.get("int32_out").getInt(4)).isEqualTo(-8);
    assertThat(out.get("int64_out").getLong()).isEqualTo(1L << 41);
    assertThat(out.get("int64_as_fp32").getFloat(4)).isEqualTo(-1f);
    assertThat(out.get("int16_out").getShort()).isEqualTo((short) -32768);
    assertThat(out.get("int8_out").get(1)).isEqualTo((byte) 127);
    assertThat(Byte.toUnsignedInt(out.get("uint8_out").get(0))).isEqualTo(200);
    assertThat(out.get("bool_out").remaining()).isEqualTo(2);
    assertThat(out.get("bool_out").get(0)).isEqualTo((byte) 0);
    assertThat(out.get("bool_out").get(1)).isEqualTo((byte) 1);
    ByteBuffer s = out.get("bytes_out");
    assertThat(s.getInt()).isEqualTo(hello.length);
    byte[] first = new byte[hello.length];
    s.get(first);
    assertThat(first).isEqualTo(hello);
    assertThat(s.getInt()).isZero();
    assertThat(s.hasRemaining()).isFalse();
  }

  private static String binaryInput(String prefix, String datatype, int size) {
    return "{\"name\":\""
        + prefix
        + "_in\",\"datatype\":\""
        + datatype
        + "\",\"shape\":[2],"
        + "\"parameters\":{\"binary_data_size\":"
        + size
        + "}}";
  }

  private static final String IRIS_HEADER =
      "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[2,4],"
          + "\"parameters\":{\"binary_data_size\":32}}]}";

  @Test
  void headerLengthPastTheBody_is400() throws Exception {
    Answer a = post("iris", IRIS_HEADER, IRIS_2_ROWS, IRIS_HEADER.length() + 33);
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.json().get("error").asText()).contains("Inference-Header-Content-Length");
  }

  @Test
  void binaryDataSizePastTheEnd_is400() throws Exception {
    Answer a = post("iris", IRIS_HEADER, Arrays.copyOf(IRIS_2_ROWS, 20), null);
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.json().get("error").asText()).contains("claims 32 bytes").contains("20 remain");
  }

  @Test
  void sizeThatDisagreesWithTheShape_is400() throws Exception {
    String header = IRIS_HEADER.replace("[2,4]", "[3,4]");
    Answer a = post("iris", header, IRIS_2_ROWS, null);
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.json().get("error").asText()).contains("48 bytes").contains("32 bytes");
  }

  @Test
  void bytesUnclaimedByAnyInput_are400() throws Exception {
    byte[] more = Arrays.copyOf(IRIS_2_ROWS, 36);
    Answer a = post("iris", IRIS_HEADER, more, null);
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.json().get("error").asText()).contains("4 bytes");
  }

  @Test
  void manyEmptyBytesElements_countTheirStringsInTheBudget_andAre413BeforeDecoding()
      throws Exception {
    // 100,000 empty elements: 400 kB of length prefixes, 4.8 MB of strings once decoded
    int n = 100_000;
    String json =
        "{\"inputs\":[{\"name\":\"bytes_in\",\"datatype\":\"BYTES\",\"shape\":["
            + n
            + "],\"parameters\":{\"binary_data_size\":"
            + 4 * n
            + "}}]}";
    byte[] head = json.getBytes(StandardCharsets.UTF_8);
    byte[] body = Arrays.copyOf(head, head.length + 4 * n);
    try (ModelKeeperServer small =
        TestServer.demo(
            b -> b.budgets(m -> m.withMaxRequestBytes(1 << 20).withMaxInflightBytes(1 << 20)))) {
      HttpResponse<String> r = postTo(small, "types", head.length, body);
      assertThat(r.statusCode()).isEqualTo(413);
      assertThat(r.body()).contains("in-flight budget");
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> small.inflightBytes() == 0);
    }
  }

  @Test
  void offHeapBinaryTensors_countOnceInTheBudget_theyAreReadInPlace() throws Exception {
    // 80,000 bytes of FP32 in an off-heap body: a budget of 150,000 holds the body, and the tensor
    // read in place costs nothing more (counted twice, as decoded copies are, it would not fit)
    int rows = 5000;
    byte[] binary = le(rows * 16, b -> {});
    String json =
        "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":["
            + rows
            + ",4],\"parameters\":{\"binary_data_size\":"
            + binary.length
            + "}}],\"outputs\":[{\"name\":\"label\"}]}";
    byte[] head = json.getBytes(StandardCharsets.UTF_8);
    byte[] body = Arrays.copyOf(head, head.length + binary.length);
    try (ModelKeeperServer small =
        TestServer.demo(
            b -> b.budgets(m -> m.withMaxRequestBytes(100_000).withMaxInflightBytes(150_000)))) {
      HttpResponse<String> r = postTo(small, "iris", head.length, body);
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> small.inflightBytes() == 0);
    }
  }

  @Test
  void truncatedBytesLengthPrefix_is400() throws Exception {
    // two elements: "ab" then a prefix cut after 2 of its 4 bytes
    byte[] bytes =
        le(8, b -> b.putInt(2).put((byte) 'a').put((byte) 'b').put((byte) 5).put((byte) 0));
    Answer a = post("types", typesBytesOnly(bytes.length), bytes, null);
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.json().get("error").asText()).contains("truncated BYTES");
    // a prefix that claims more bytes than follow
    byte[] overlong = le(6, b -> b.putInt(100).put((byte) 'a').put((byte) 'b'));
    Answer b = post("types", typesBytesOnly(overlong.length), overlong, null);
    assertThat(b.status()).isEqualTo(400);
    assertThat(b.json().get("error").asText()).contains("truncated BYTES");
  }

  /** A types request whose only binary input is bytes_in (2 elements); the rest are JSON. */
  private static String typesBytesOnly(int size) {
    return "{\"inputs\":["
        + "{\"name\":\"fp32_in\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"fp64_in\",\"datatype\":\"FP64\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"int32_in\",\"datatype\":\"INT32\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"int64_in\",\"datatype\":\"INT64\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"int16_in\",\"datatype\":\"INT16\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"int8_in\",\"datatype\":\"INT8\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"uint8_in\",\"datatype\":\"UINT8\",\"shape\":[1],\"data\":[1]},"
        + "{\"name\":\"bool_in\",\"datatype\":\"BOOL\",\"shape\":[1],\"data\":[true]},"
        + binaryInput("bytes", "BYTES", size)
        + "]}";
  }

  @Test
  void jsonBytesElementWithALoneSurrogate_is400() {
    // UTF-8 cannot encode it: taken as it was, its binary output had a wrong size
    Http.Response r =
        Http.to(server.port())
            .post(
                "/v2/models/types/infer",
                "{\"inputs\":[{\"name\":\"bytes_in\",\"datatype\":\"BYTES\",\"shape\":[2],"
                    + "\"data\":[\"ok\",\"\\ud800\"]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("tensor 'bytes_in' element 1 holds a lone UTF-16 surrogate");
  }

  @Test
  void binaryDataSizeWithoutTheHeader_is400() throws Exception {
    Http.Response r = Http.to(server.port()).post("/v2/models/iris/infer", IRIS_HEADER);
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("Inference-Header-Content-Length");
  }

  @Test
  void serverMetadata_listsTheExtension() {
    JsonNode md = Http.to(server.port()).get("/v2").json();
    assertThat(md.get("extensions").toString()).contains("binary_tensor_data");
  }
}
