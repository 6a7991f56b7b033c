package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelkeeper.server.support.TestServer;
import dev.modelkeeper.testkit.Http;
import dev.modelkeeper.testkit.Http.Response;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Open Inference Protocol checklist against the real demo models (ONNX Runtime) over loopback:
 * health codes, server and model metadata, id echo, output filter, nested and flat data, and the
 * 400s for malformed tensors.
 */
class OpenInferenceProtocolTest {

  private static final String IRIS_ROWS_FLAT =
      "[5.1, 3.5, 1.4, 0.2, 7.0, 3.2, 4.7, 1.4, 6.3, 3.3, 6.0, 2.5]";
  private static final String IRIS_ROWS_NESTED =
      "[[5.1, 3.5, 1.4, 0.2], [7.0, 3.2, 4.7, 1.4], [6.3, 3.3, 6.0, 2.5]]";

  private static ModelKeeperServer server;
  private static Http http;

  @BeforeAll
  static void start() {
    server = TestServer.demo(b -> b.budgets(m -> m.withMaxModels(4)));
    http = Http.to(server.port());
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static String irisRequest(String data, String extra) {
    return "{"
        + extra
        + "\"inputs\": [{\"name\": \"input\", \"shape\": [3, 4], \"datatype\": \"FP32\","
        + " \"data\": "
        + data
        + "}]}";
  }

  @Test
  void healthLive_always_answers200() {
    Response r = http.get("/v2/health/live");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("live").asBoolean()).isTrue();
  }

  @Test
  void healthReady_afterStartup_answers200() {
    Response r = http.get("/v2/health/ready");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.json().get("ready").asBoolean()).isTrue();
  }

  @Test
  void serverMetadata_always_namesServerVersionAndRepositoryExtension() {
    JsonNode body = http.get("/v2").json();
    assertThat(body.get("name").asText()).isEqualTo("modelkeeper");
    assertThat(body.get("version").asText()).isNotBlank().isNotEqualTo("unknown");
    assertThat(body.get("extensions")).extracting(JsonNode::asText).contains("model_repository");
  }

  @Test
  void modelMetadata_ofIris_hasNameVersionsPlatformAndTensors() {
    Response r = http.get("/v2/models/iris");
    assertThat(r.status()).isEqualTo(200);
    JsonNode md = r.json();
    assertThat(md.get("name").asText()).isEqualTo("iris");
    assertThat(md.get("versions")).extracting(JsonNode::asText).containsExactly("1");
    assertThat(md.get("platform").asText()).isEqualTo("onnx_onnxv1");
    JsonNode input = md.get("inputs").get(0);
    assertThat(input.get("name").asText()).isEqualTo("input");
    assertThat(input.get("datatype").asText()).isEqualTo("FP32");
    assertThat(input.get("shape").toString()).isEqualTo("[-1,4]");
    assertThat(md.get("outputs"))
        .extracting(o -> o.get("name").asText())
        .containsExactly("probabilities", "label");
    assertThat(md.get("outputs").get(1).get("datatype").asText()).isEqualTo("INT64");
  }

  @Test
  void modelMetadata_withoutVersion_listsEveryVersionAndDescribesTheHighest() {
    JsonNode md = http.get("/v2/models/mlp-small").json();
    assertThat(md.get("versions")).extracting(JsonNode::asText).containsExactly("1", "2");
    JsonNode v1 = http.get("/v2/models/mlp-small/versions/1").json();
    assertThat(v1.get("versions")).extracting(JsonNode::asText).containsExactly("1");
    assertThat(v1.get("inputs").get(0).get("shape").toString()).isEqualTo("[-1,8]");
  }

  @Test
  void modelReady_beforeAndAfterLoad_answers400Then200() {
    http.post("/v2/repository/models/mlp-medium/unload", "");
    Response before = http.get("/v2/models/mlp-medium/ready");
    assertThat(before.status()).isEqualTo(400);
    assertThat(before.error()).contains("mlp-medium/1");
    assertThat(http.post("/v2/repository/models/mlp-medium/load", "").status()).isEqualTo(200);
    Response after = http.get("/v2/models/mlp-medium/versions/1/ready");
    assertThat(after.status()).isEqualTo(200);
    assertThat(after.json().get("ready").asBoolean()).isTrue();
  }

  @Test
  void infer_withId_echoesIdAndNamesModelAndVersion() {
    Response r =
        http.post("/v2/models/iris/infer", irisRequest(IRIS_ROWS_FLAT, "\"id\": \"req-42\", "));
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    JsonNode body = r.json();
    assertThat(body.get("id").asText()).isEqualTo("req-42");
    assertThat(body.get("model_name").asText()).isEqualTo("iris");
    assertThat(body.get("model_version").asText()).isEqualTo("1");
    JsonNode label = output(body, "label");
    assertThat(label.get("datatype").asText()).isEqualTo("INT64");
    assertThat(label.get("shape").toString()).isEqualTo("[3]");
    assertThat(label.get("data").toString()).isEqualTo("[0,1,2]");
  }

  @Test
  void infer_withoutId_leavesIdOut() {
    JsonNode body =
        http.post("/v2/models/iris/versions/1/infer", irisRequest(IRIS_ROWS_FLAT, "")).json();
    assertThat(body.has("id")).isFalse();
  }

  @Test
  void infer_withOutputsFilter_returnsOnlyRequestedOutputs() {
    JsonNode body =
        http.post(
                "/v2/models/iris/infer",
                irisRequest(IRIS_ROWS_FLAT, "\"outputs\": [{\"name\": \"label\"}], "))
            .json();
    assertThat(body.get("outputs")).hasSize(1);
    assertThat(body.get("outputs").get(0).get("name").asText()).isEqualTo("label");
  }

  @Test
  void infer_withUnknownRequestedOutput_answers400() {
    Response r =
        http.post(
            "/v2/models/iris/infer",
            irisRequest(IRIS_ROWS_FLAT, "\"outputs\": [{\"name\": \"nope\"}], "));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("nope");
  }

  @Test
  void infer_withNestedData_equalsFlatData() {
    JsonNode flat = http.post("/v2/models/iris/infer", irisRequest(IRIS_ROWS_FLAT, "")).json();
    JsonNode nested = http.post("/v2/models/iris/infer", irisRequest(IRIS_ROWS_NESTED, "")).json();
    assertThat(nested.get("outputs")).isEqualTo(flat.get("outputs"));
    JsonNode probabilities = output(flat, "probabilities");
    assertThat(probabilities.get("shape").toString()).isEqualTo("[3,3]");
    double rowSum = 0;
    for (int i = 0; i < 3; i++) {
      rowSum += probabilities.get("data").get(i).asDouble();
    }
    assertThat(rowSum).isCloseTo(1.0, Offset.offset(1e-4));
  }

  @Test
  void infer_withShapeDataMismatch_answers400() {
    Response r =
        http.post(
            "/v2/models/iris/infer",
            "{\"inputs\": [{\"name\": \"input\", \"shape\": [2, 4], \"datatype\": \"FP32\","
                + " \"data\": [1, 2, 3]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("shape");
  }

  @Test
  void infer_withNestedDataNotFollowingShape_answers400() {
    Response r =
        http.post(
            "/v2/models/iris/infer",
            "{\"inputs\": [{\"name\": \"input\", \"shape\": [2, 4], \"datatype\": \"FP32\","
                + " \"data\": [[1, 2, 3, 4, 5, 6, 7, 8]]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("nested");
  }

  @Test
  void infer_withUnknownDatatype_answers400() {
    Response r =
        http.post(
            "/v2/models/iris/infer",
            "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP128\","
                + " \"data\": [1, 2, 3, 4]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("FP128");
  }

  @Test
  void infer_withWrongDatatypeForModel_answers400() {
    Response r =
        http.post(
            "/v2/models/iris/infer",
            "{\"inputs\": [{\"name\": \"input\", \"shape\": [1, 4], \"datatype\": \"FP64\","
                + " \"data\": [1, 2, 3, 4]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("FP32");
  }

  @Test
  void infer_withMissingInputs_answers400() {
    Response r =
        http.post(
            "/v2/models/types/infer",
            "{\"inputs\": [{\"name\": \"fp32_in\", \"shape\": [1], \"datatype\": \"FP32\", \"data\": [1]}]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("missing");
  }

  @Test
  void infer_withNoInputsField_answers400() {
    Response r = http.post("/v2/models/iris/infer", "{\"id\": \"x\"}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("inputs");
  }

  @Test
  void infer_withEveryDatatype_roundTripsBytesAndConvertsNumbers() {
    String body =
        "{\"inputs\": ["
            + in("fp32_in", "FP32", "[1.5, -2]")
            + ","
            + in("fp64_in", "FP64", "[0.25]")
            + ","
            + in("int32_in", "INT32", "[7, -8]")
            + ","
            + in("int64_in", "INT64", "[9007199254740993]")
            + ","
            + in("int16_in", "INT16", "[-32768, 32767]")
            + ","
            + in("int8_in", "INT8", "[-128, 127]")
            + ","
            + in("uint8_in", "UINT8", "[0, 255]")
            + ","
            + in("bool_in", "BOOL", "[true, false]")
            + ","
            + in("bytes_in", "BYTES", "[\"héllo\", \"\", \"wörld ✓\"]")
            + "]}";
    Response r = http.post("/v2/models/types/infer", body);
    assertThat(r.status()).as(r.toString()).isEqualTo(200);
    JsonNode out = r.json();
    assertThat(output(out, "bytes_out").get("data").toString())
        .isEqualTo("[\"héllo\",\"\",\"wörld ✓\"]");
    assertThat(output(out, "bytes_out").get("datatype").asText()).isEqualTo("BYTES");
    assertThat(output(out, "bytes_out").get("shape").toString()).isEqualTo("[3]");
    assertThat(output(out, "fp32_out").get("data").toString()).isEqualTo("[3.0,-4.0]");
    assertThat(output(out, "fp64_out").get("data").toString()).isEqualTo("[0.5]");
    assertThat(output(out, "int32_out").get("data").toString()).isEqualTo("[14,-16]");
    assertThat(output(out, "int64_out").get("data").toString()).isEqualTo("[18014398509481986]");
    assertThat(output(out, "int16_out").get("data").toString()).isEqualTo("[-32768,32767]");
    assertThat(output(out, "int8_out").get("data").toString()).isEqualTo("[-128,127]");
    assertThat(output(out, "uint8_out").get("data").toString()).isEqualTo("[0,255]");
    assertThat(output(out, "bool_out").get("data").toString()).isEqualTo("[false,true]");
  }

  @Test
  void infer_withOutOfRangeInteger_answers400() {
    Response r =
        http.post(
            "/v2/models/types/infer", "{\"inputs\": [" + in("uint8_in", "UINT8", "[256]") + "]}");
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("UINT8");
  }

  @Test
  void infer_onUnknownModel_answers404() {
    Response r = http.post("/v2/models/nope/infer", irisRequest(IRIS_ROWS_FLAT, ""));
    assertThat(r.status()).isEqualTo(404);
    assertThat(r.error()).contains("nope");
    assertThat(
            http.post("/v2/models/iris/versions/9/infer", irisRequest(IRIS_ROWS_FLAT, "")).status())
        .isEqualTo(404);
    assertThat(http.get("/v2/models/nope").status()).isEqualTo(404);
    assertThat(http.get("/v2/models/nope/ready").status()).isEqualTo(404);
  }

  @Test
  void infer_withInvalidModelId_answers400() {
    Response r = http.post("/v2/models/bad$name/infer", irisRequest(IRIS_ROWS_FLAT, ""));
    assertThat(r.status()).isEqualTo(400);
    assertThat(r.error()).contains("bad$name");
    assertThat(
            http.post("/v2/models/iris/versions/01/infer", irisRequest(IRIS_ROWS_FLAT, ""))
                .status())
        .isEqualTo(400);
  }

  private static String in(String name, String datatype, String data) {
    int n = data.equals("[]") ? 0 : data.split(",", -1).length;
    return "{\"name\": \""
        + name
        + "\", \"datatype\": \""
        + datatype
        + "\", \"shape\": ["
        + n
        + "], \"data\": "
        + data
        + "}";
  }

  private static JsonNode output(JsonNode response, String name) {
    List<String> names = new ArrayList<>();
    for (JsonNode o : response.get("outputs")) {
      if (o.get("name").asText().equals(name)) {
        return o;
      }
      names.add(o.get("name").asText());
    }
    throw new AssertionError("no output " + name + " in " + names);
  }
}
