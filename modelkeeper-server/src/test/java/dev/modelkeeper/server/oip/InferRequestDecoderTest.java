package dev.modelkeeper.server.oip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.onnx.Datatype;
import dev.modelkeeper.onnx.InvalidInputException;
import dev.modelkeeper.onnx.Tensor;
import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.admission.RequestBytes;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.PayloadTooLargeException;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading tensors from inference requests and writing them back, without a server. */
class InferRequestDecoderTest {

  private final Json json = new Json();
  private final InferRequestDecoder decoder = new InferRequestDecoder(json);

  private InferRequest parse(String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return decoder.decode(new ByteArrayInputStream(bytes), bytes.length, RequestBytes.untracked());
  }

  private Tensor one(String name, String datatype, String shape, String data) {
    return parse(
            "{\"inputs\": [{\"name\": \""
                + name
                + "\", \"datatype\": \""
                + datatype
                + "\", \"shape\": "
                + shape
                + ", \"data\": "
                + data
                + "}]}")
        .inputs()
        .get(name);
  }

  @Test
  void parseInfer_nestedAndFlatData_giveTheSameTensor() {
    Tensor nested = one("x", "FP32", "[2, 2, 2]", "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]");
    Tensor flat = one("x", "FP32", "[2, 2, 2]", "[1, 2, 3, 4, 5, 6, 7, 8]");
    assertThat(nested).isEqualTo(flat);
    assertThat(flat.floats()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
  }

  @Test
  void parseInfer_scalarAndEmptyTensors_areAccepted() {
    assertThat(one("x", "INT32", "[]", "[5]").ints()).containsExactly(5);
    assertThat(one("x", "FP32", "[0, 4]", "[]").elementCount()).isZero();
  }

  @Test
  void parseInfer_integerTypes_keepFullPrecisionAndCheckRange() {
    assertThat(one("x", "INT64", "[1]", "[9223372036854775807]").longs())
        .containsExactly(Long.MAX_VALUE);
    assertThat(one("x", "UINT8", "[2]", "[0, 255]").bytes()).containsExactly(0, (byte) 255);
    assertThatThrownBy(() -> one("x", "UINT8", "[1]", "[256]")).hasMessageContaining("UINT8 range");
    assertThatThrownBy(() -> one("x", "INT8", "[1]", "[-129]")).hasMessageContaining("INT8 range");
    assertThatThrownBy(() -> one("x", "INT64", "[1]", "[9223372036854775808]"))
        .hasMessageContaining("INT64 range");
    assertThatThrownBy(() -> one("x", "INT32", "[1]", "[1.5]")).hasMessageContaining("integer");
  }

  @Test
  void parseInfer_boolsAndStrings_needTheirJsonTypes() {
    assertThat(one("x", "BOOL", "[2]", "[true, false]").booleans()).containsExactly(true, false);
    assertThat(one("x", "BYTES", "[2]", "[\"a\", \"ü\"]").strings()).containsExactly("a", "ü");
    assertThatThrownBy(() -> one("x", "BOOL", "[1]", "[1]")).hasMessageContaining("true or false");
    assertThatThrownBy(() -> one("x", "BYTES", "[1]", "[1]")).hasMessageContaining("a string");
  }

  @Test
  void parseInfer_classificationOfAnOutput_isRead_aRequestParameterOfThatNameIsNot() {
    InferRequest r =
        parse(
            "{\"inputs\": [], \"outputs\": [{\"name\": \"p\","
                + " \"parameters\": {\"binary_data\": true, \"classification\": 2}}]}");
    assertThat(r.classifications()).containsExactly(Map.entry("p", 2));
    assertThat(r.binaryOutput("p")).isTrue();
    assertThat(parse("{\"inputs\": [], \"parameters\": {\"classification\": 2}}").classifications())
        .isEmpty();
    assertThatThrownBy(
            () ->
                parse(
                    "{\"inputs\": [], \"outputs\": [{\"name\": \"p\","
                        + " \"parameters\": {\"classification\": 0}}]}"))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("outputs[0].parameters 'classification' must be a whole number");
    assertThatThrownBy(
            () ->
                parse(
                    "{\"inputs\": [], \"outputs\": [{\"name\": \"p\","
                        + " \"parameters\": {\"classification\": \"2\"}}]}"))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("'classification' must be a whole number");
  }

  @Test
  void parseInfer_negativeDimension_showsTheShapeUpToIt() {
    assertThatThrownBy(() -> one("x", "FP32", "[-1, 4]", "[1, 2, 3, 4]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageEndingWith("has a negative dimension in shape [-1]");
    assertThatThrownBy(() -> one("x", "FP32", "[2, -3]", "[1, 2, 3, 4]"))
        .hasMessageEndingWith("has a negative dimension in shape [2, -3]");
  }

  @Test
  void parseInfer_shapeProblems_areInvalidInput() {
    assertThatThrownBy(() -> one("x", "FP32", "[2, 3]", "[1, 2, 3]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("6 elements");
    assertThatThrownBy(() -> one("x", "FP32", "[2, 2]", "[[1, 2, 3], [4]]"))
        .hasMessageContaining("does not follow its shape");
    assertThatThrownBy(() -> one("x", "FP32", "[4]", "[1, [2], 3, 4]"))
        .hasMessageContaining("mixes nested and flat");
    assertThatThrownBy(() -> one("x", "FP32", "[3037000500, 3037000500]", "[1]"))
        .hasMessageContaining("too large");
    assertThatThrownBy(() -> one("x", "FP32", "[-2]", "[1, 2]")).hasMessageContaining("negative");
  }

  @Test
  void parseInfer_numberBeyondItsFloatType_isInvalidInputNotInfinity() {
    // regression: 1e39 as FP32 silently became Infinity
    assertThatThrownBy(() -> one("x", "FP32", "[1]", "[1e39]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the FP32 range");
    assertThatThrownBy(() -> one("x", "FP64", "[1]", "[1e309]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the FP64 range");
    assertThat(one("x", "FP32", "[2]", "[3.4e38, -1e-50]").floats()).containsExactly(3.4e38f, -0f);
    assertThat(one("x", "FP64", "[1]", "[1e39]").doubles()).containsExactly(1e39);
  }

  @Test
  void parseInfer_nonFiniteWordsAsPythonWritesThem_areFloatValues() {
    assertThat(one("x", "FP32", "[3]", "[NaN, Infinity, -Infinity]").floats())
        .containsExactly(Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY);
    assertThat(one("x", "FP64", "[2]", "[-Infinity, NaN]").doubles())
        .containsExactly(Double.NEGATIVE_INFINITY, Double.NaN);
    assertThat(one("x", "FP16", "[3]", "[NaN, Infinity, 1.5]").toList())
        .containsExactly(Float.NaN, Float.POSITIVE_INFINITY, 1.5f);
    assertThatThrownBy(() -> one("x", "FP16", "[1]", "[65520]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the FP16 range");
  }

  @Test
  void parseInfer_nonFiniteWordsForIntegers_orMisspelled_areRejectedWithoutNamingParserOptions() {
    assertThatThrownBy(() -> one("x", "INT32", "[1]", "[NaN]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("INT32 needs an integer");
    assertThatThrownBy(() -> one("x", "FP32", "[1]", "[nan]"))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("malformed JSON")
        .hasMessageNotContaining("`")
        .hasMessageNotContaining("JsonReadFeature");
  }

  @Test
  void parseInfer_unsignedAndHalfTypes_readWithinTheirRanges() {
    assertThat(one("x", "UINT16", "[2]", "[0, 65535]").toList()).containsExactly(0, 65535);
    assertThat(one("x", "UINT32", "[1]", "[4294967295]").toList()).containsExactly(4294967295L);
    assertThat(one("x", "UINT64", "[2]", "[18446744073709551615, 5]").toList())
        .containsExactly(new BigInteger("18446744073709551615"), 5L);
    assertThat(one("x", "BF16", "[1]", "[1.0]").toList()).containsExactly(1f);
    assertThatThrownBy(() -> one("x", "UINT16", "[1]", "[65536]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the UINT16 range");
    assertThatThrownBy(() -> one("x", "UINT64", "[1]", "[-1]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("outside the UINT64 range");
  }

  @Test
  void parseInfer_dataBeforeShape_isABadRequest() {
    assertThatThrownBy(
            () ->
                parse(
                    "{\"inputs\": [{\"name\": \"x\", \"data\": [1], \"datatype\": \"FP32\","
                        + " \"shape\": [1]}]}"))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("must come before 'data'");
  }

  @Test
  void parseInfer_shapeLargerThanTheBodyCanHold_isRefusedBeforeAllocating() {
    assertThatThrownBy(() -> one("x", "FP64", "[100000000]", "[1]"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("more than its request body");
  }

  @Test
  void parseInfer_tensorsLargerThanTheBudget_arePayloadTooLarge() {
    byte[] body =
        "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"INT64\", \"shape\": [4], \"data\": [1,2,3,4]}]}"
            .getBytes(StandardCharsets.UTF_8);
    RequestBytes small = new RequestBytes(new InflightBytes(16, Duration.ofSeconds(1), null));
    assertThatThrownBy(() -> decoder.decode(new ByteArrayInputStream(body), body.length, small))
        .isInstanceOf(PayloadTooLargeException.class);
  }

  @Test
  void inferResponse_nonFiniteOutputs_areJsonStrings() {
    Map<String, Tensor> outputs =
        Map.of(
            "y", Tensor.ofFloats("y", new long[] {3}, Float.NaN, Float.POSITIVE_INFINITY, -1f / 0));
    String out =
        new String(
            new InferResponses(json, new SharedMemoryRegions(0))
                .inferResponse("m", "1", null, outputs),
            StandardCharsets.UTF_8);
    assertThat(out).contains("\"data\":[\"NaN\",\"Infinity\",\"-Infinity\"]");
  }

  @Test
  void parseInfer_idAndOutputs_areRead() {
    InferRequest r =
        parse(
            "{\"id\": \"r1\", \"inputs\": [], \"outputs\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}");
    assertThat(r.id()).isEqualTo("r1");
    assertThat(r.outputs()).containsExactlyInAnyOrder("a", "b");
    assertThat(parse("{\"inputs\": []}").outputs()).isEmpty();
  }

  @Test
  void inferResponse_everyDatatype_writesJsonValues() {
    Map<String, Tensor> outputs = new LinkedHashMap<>();
    outputs.put("u", Tensor.ofUint8("u", new long[] {2}, (byte) 200, (byte) 1));
    outputs.put("b", Tensor.ofBooleans("b", new long[] {1}, true));
    outputs.put("s", Tensor.ofStrings("s", new long[] {1}, "\"quoted\""));
    outputs.put("l", Tensor.ofLongs("l", new long[] {1, 1}, -7));
    String out =
        new String(
            new InferResponses(json, new SharedMemoryRegions(0))
                .inferResponse("m", "3", null, outputs),
            StandardCharsets.UTF_8);
    assertThat(out)
        .isEqualTo(
            "{\"model_name\":\"m\",\"model_version\":\"3\",\"outputs\":["
                + "{\"name\":\"u\",\"datatype\":\"UINT8\",\"shape\":[2],\"data\":[200,1]},"
                + "{\"name\":\"b\",\"datatype\":\"BOOL\",\"shape\":[1],\"data\":[true]},"
                + "{\"name\":\"s\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"\\\"quoted\\\"\"]},"
                + "{\"name\":\"l\",\"datatype\":\"INT64\",\"shape\":[1,1],\"data\":[-7]}]}");
    assertThat(Datatype.UINT8.oipName()).isEqualTo("UINT8");
  }
}
