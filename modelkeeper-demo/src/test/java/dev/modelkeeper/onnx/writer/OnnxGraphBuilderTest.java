package dev.modelkeeper.onnx.writer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.Datatype;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The streamed writer encodes exactly the bytes the earlier in-memory encoder did: a small graph
 * with every kind of field is checked against the length and SHA-256 that encoder produced for it.
 */
class OnnxGraphBuilderTest {

  /**
   * Length and SHA-256 of {@link #everyField()} as the in-memory encoder (before streaming) wrote
   * it.
   */
  private static final int IN_MEMORY_LENGTH = 21293;

  private static final String IN_MEMORY_SHA256 =
      "f3cfd84adac6dcec36fc64cb87bb14f032c504537f40b326ac87019bd8647bd4";

  @TempDir Path tmp;

  @Test
  void everyWayOfWriting_givesTheBytesOfTheInMemoryEncoder() throws Exception {
    byte[] inMemory = everyField().toByteArray();
    assertThat(inMemory).hasSize(IN_MEMORY_LENGTH);
    assertThat(sha256(inMemory)).isEqualTo(IN_MEMORY_SHA256);

    ByteArrayOutputStream streamed = new ByteArrayOutputStream();
    everyField().writeTo(streamed);
    assertThat(streamed.toByteArray()).isEqualTo(inMemory);

    Path file = everyField().writeTo(tmp.resolve("sub").resolve("model.onnx"));
    assertThat(Files.readAllBytes(file)).isEqualTo(inMemory);
    try (Stream<Path> left = Files.list(file.getParent())) {
      assertThat(left).containsExactly(file); // no temporary file left behind
    }
  }

  @Test
  void generatedInitializer_overManyChunks_equalsTheArrayInitializer() throws Exception {
    int count = 3 * 8192 + 17;
    float[] values = new float[count];
    for (int i = 0; i < count; i++) {
      values[i] = (float) Math.sin(i);
    }
    FloatGenerator generated =
        (first, into, n) -> {
          for (int i = 0; i < n; i++) {
            into[i] = (float) Math.sin(first + i);
          }
        };
    OnnxGraphBuilder fromArray =
        new OnnxGraphBuilder("g").initializer("w", new long[] {count}, values);
    OnnxGraphBuilder fromGenerator =
        new OnnxGraphBuilder("g").initializer("w", new long[] {count}, generated);
    byte[] expected = fromArray.toByteArray();
    ByteArrayOutputStream streamed = new ByteArrayOutputStream();
    fromGenerator.writeTo(streamed);
    assertThat(streamed.toByteArray()).isEqualTo(expected);
    assertThat(fromGenerator.toByteArray()).isEqualTo(expected); // a second write, same bytes
  }

  /**
   * Every field the writer encodes, with one-, two- and three-byte lengths and ten-byte varints.
   */
  private static OnnxGraphBuilder everyField() {
    SplittableRandom random = new SplittableRandom(2024);
    float[] weights = uniform(random, 4 * 40);
    float[] bias = uniform(random, 40);
    float[] large = uniform(random, 5000);
    return new OnnxGraphBuilder("golden μ")
        .docString("a small graph of every field the writer encodes")
        .modelVersion(7)
        .input("x", Datatype.FP32, -1, 4)
        .input("index", Datatype.INT64, 3)
        .initializer("W", new long[] {4, 40}, weights)
        .initializer("b", new long[] {40}, bias)
        .initializer("large", new long[] {50, 100}, large)
        .initializer("shape", new long[] {3}, new long[] {-1, 0, 300})
        .node("MatMul", List.of("x", "W"), List.of("xw"))
        .node("Add", List.of("xw", "b"), List.of("z"))
        .node("Gather", List.of("z", "index"), List.of("g"), OnnxGraphBuilder.intAttr("axis", -1))
        .node("LeakyRelu", List.of("g"), List.of("y"), OnnxGraphBuilder.floatAttr("alpha", 0.25f))
        .node("Pad", List.of("y"), List.of("p"), OnnxGraphBuilder.intsAttr("pads", 1, 300, -2))
        .output("y", Datatype.FP32, -1, 40)
        .output("p", Datatype.FP32, -1, -1);
  }

  private static float[] uniform(SplittableRandom random, int count) {
    float[] values = new float[count];
    for (int i = 0; i < count; i++) {
      values[i] = (float) random.nextDouble(-1, 1);
    }
    return values;
  }

  private static String sha256(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }
}
