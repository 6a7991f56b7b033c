package dev.modelkeeper.server.oip;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.admission.RequestBytes;
import dev.modelkeeper.server.errors.PathRedaction;
import dev.modelkeeper.server.http.ErrorMapper;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.request.InferRequest;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whatever bytes arrive, the inference decoder yields a request or an error the server answers with
 * a 4xx status (mapped by type in {@link ErrorMapper}): never another exception.
 *
 * <p>Each generator runs {@value #CASES} seeded cases; a failure names the seed and the body, so it
 * replays exactly.
 */
class InferRequestDecoderFuzzTest {

  private static final int CASES = 1500;

  private static final String VALID =
      "{\"id\": \"r\", \"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [2, 2],"
          + " \"data\": [[1.5, -2], [3e3, 4]]}, {\"name\": \"b\", \"datatype\": \"BOOL\", \"shape\":"
          + " [1], \"data\": [true]}, {\"name\": \"s\", \"datatype\": \"BYTES\", \"shape\": [], \"data\":"
          + " [\"hi\"]}], \"outputs\": [{\"name\": \"y\"}], \"parameters\": {\"k\": [1]}}";

  private static final List<String> FRAGMENTS =
      List.of(
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

  private static final List<String> DATATYPES =
      List.of(
          "BOOL", "UINT8", "INT8", "INT16", "INT32", "INT64", "FP32", "FP64", "BYTES", "FP16", "x");

  private static final List<String> ELEMENTS =
      List.of(
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

  private final InferRequestDecoder decoder = new InferRequestDecoder(new Json());
  private final ErrorMapper errors = new ErrorMapper(new Json(), PathRedaction.NONE);

  @ParameterizedTest
  @ValueSource(longs = {1L, 2L})
  void anyBytes_decodeOrFailWith4xx(long seed) {
    run(
        seed,
        r -> {
          byte[] body = new byte[r.nextInt(200)];
          for (int i = 0; i < body.length; i++) {
            body[i] = (byte) r.nextInt(256);
          }
          return body;
        });
  }

  @ParameterizedTest
  @ValueSource(longs = {3L, 4L})
  void mutatedValidRequests_decodeOrFailWith4xx(long seed) {
    run(
        seed,
        r -> {
          int a = r.nextInt(VALID.length());
          int b = r.nextInt(VALID.length());
          int from = Math.min(a, b);
          int to = Math.min(Math.max(a, b), from + 3);
          String s = VALID.substring(0, from) + pick(r, FRAGMENTS) + VALID.substring(to);
          return s.getBytes(StandardCharsets.UTF_8);
        });
  }

  /** Requests that are valid JSON: one tensor of a random datatype, shape and data. */
  @ParameterizedTest
  @ValueSource(longs = {5L, 6L})
  void wellFormedTensorsOfAnyShapeTypeAndData_decodeOrFailWith4xx(long seed) {
    run(
        seed,
        r -> {
          StringBuilder shape = new StringBuilder("[");
          for (int i = r.nextInt(5); i > 0; i--) {
            shape.append(r.nextInt(-1, 4)).append(i > 1 ? ", " : "");
          }
          StringBuilder data = new StringBuilder("[");
          for (int i = r.nextInt(13); i > 0; i--) {
            data.append(pick(r, ELEMENTS)).append(i > 1 ? ", " : "");
          }
          String s =
              "{\"inputs\": [{\"name\": \"t\", \"datatype\": \""
                  + pick(r, DATATYPES)
                  + "\", \"shape\": "
                  + shape.append(']')
                  + ", \"data\": "
                  + data.append(']')
                  + "}]}";
          return s.getBytes(StandardCharsets.UTF_8);
        });
  }

  private static String pick(SplittableRandom r, List<String> from) {
    return from.get(r.nextInt(from.size()));
  }

  private void run(long seed, Function<SplittableRandom, byte[]> bodies) {
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < CASES; i++) {
      assertDecodesOr4xx(seed, bodies.apply(r));
    }
  }

  private void assertDecodesOr4xx(long seed, byte[] body) {
    RequestBytes bytes = new RequestBytes(new InflightBytes(1 << 20, Duration.ofMillis(1), null));
    try {
      InferRequest r = decoder.decode(new ByteArrayInputStream(body), body.length, bytes);
      assertThat(r.inputs()).isNotNull();
    } catch (RuntimeException e) {
      int status = errors.toResult(e, "fuzz").status();
      assertThat(status)
          .as("seed %d: %s for %s", seed, e, new String(body, StandardCharsets.UTF_8))
          .isBetween(400, 499);
    }
  }
}
