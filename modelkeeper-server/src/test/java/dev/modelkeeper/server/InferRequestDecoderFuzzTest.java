package dev.modelkeeper.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Whatever bytes arrive, the inference decoder yields a request or an error the server answers with
 * a 4xx status (mapped by type in {@link ErrorMapper}): never another exception.
 */
class InferRequestDecoderFuzzTest {

  private static final String VALID =
      "{\"id\": \"r\", \"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [2, 2],"
          + " \"data\": [[1.5, -2], [3e3, 4]]}, {\"name\": \"b\", \"datatype\": \"BOOL\", \"shape\":"
          + " [1], \"data\": [true]}, {\"name\": \"s\", \"datatype\": \"BYTES\", \"shape\": [], \"data\":"
          + " [\"hi\"]}], \"outputs\": [{\"name\": \"y\"}], \"parameters\": {\"k\": [1]}}";

  private final InferRequestDecoder decoder = new InferRequestDecoder(new Json());
  private final ErrorMapper errors = new ErrorMapper(new Json());

  @Property(tries = 1000)
  void anyBytes_decodeOrFailWith4xx(@ForAll byte[] body) {
    assertDecodesOr4xx(body);
  }

  @Property(tries = 1000)
  void mutatedValidRequests_decodeOrFailWith4xx(@ForAll("mutatedRequests") byte[] body) {
    assertDecodesOr4xx(body);
  }

  @Provide
  Arbitrary<byte[]> mutatedRequests() {
    byte[] valid = VALID.getBytes(StandardCharsets.UTF_8);
    Arbitrary<Integer> position = Arbitraries.integers().between(0, valid.length - 1);
    Arbitrary<String> fragment =
        Arbitraries.of(
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            "\"",
            "-",
            "1e39",
            "1e400",
            "NaN",
            "null",
            "true",
            "[[",
            "]]",
            "99999999999999999999",
            "\\u0000",
            " ",
            "0",
            "-1",
            "\"shape\": [1],",
            "\"data\": [],");
    return Combinators.combine(position, position, fragment)
        .as(
            (from, to, insert) -> {
              int a = Math.min(from, to);
              int b = Math.max(from, to);
              String s = VALID.substring(0, a) + insert + VALID.substring(Math.min(b, a + 3));
              return s.getBytes(StandardCharsets.UTF_8);
            });
  }

  @Property(tries = 1000)
  void wellFormedTensorsOfAnyShapeTypeAndData_decodeOrFailWith4xx(
      @ForAll("tensorRequests") byte[] body) {
    assertDecodesOr4xx(body);
  }

  /** Requests that are valid JSON: one tensor of a random datatype, shape and data. */
  @Provide
  Arbitrary<byte[]> tensorRequests() {
    Arbitrary<String> datatype =
        Arbitraries.of(
            "BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP32", "FP64", "BYTES", "FP16",
            "x");
    Arbitrary<String> shape =
        Arbitraries.integers().between(-1, 3).list().ofMaxSize(4).map(Object::toString);
    Arbitrary<String> element =
        Arbitraries.of(
            "0",
            "1",
            "-1",
            "255",
            "256",
            "-129",
            "1.5",
            "1e39",
            "-1e309",
            "true",
            "false",
            "\"s\"",
            "null",
            "[1]",
            "[]",
            "[[0]]",
            "{}",
            "9223372036854775808");
    Arbitrary<String> data = element.list().ofMaxSize(12).map(Object::toString);
    return Combinators.combine(datatype, shape, data)
        .as(
            (dt, sh, d) ->
                ("{\"inputs\": [{\"name\": \"t\", \"datatype\": \""
                        + dt
                        + "\", \"shape\": "
                        + sh
                        + ", \"data\": "
                        + d
                        + "}]}")
                    .getBytes(StandardCharsets.UTF_8));
  }

  private void assertDecodesOr4xx(byte[] body) {
    RequestBytes bytes = new RequestBytes(new InflightBytes(1 << 20, Duration.ofMillis(1), null));
    try {
      InferRequest r = decoder.decode(new ByteArrayInputStream(body), body.length, bytes);
      assertThat(r.inputs()).isNotNull();
    } catch (RuntimeException e) {
      int status = errors.toResult(e, "fuzz").status();
      assertThat(status)
          .as("%s for %s", e, new String(body, StandardCharsets.UTF_8))
          .isBetween(400, 499);
    }
  }
}
