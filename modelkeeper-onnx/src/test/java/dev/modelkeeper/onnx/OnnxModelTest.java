package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotLoadedException;
import dev.modelkeeper.core.ModelTooLargeException;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.memory.WorkingMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** OnnxModel on the demo models: every datatype path, input validation, concurrency, unload. */
class OnnxModelTest {

  private static OnnxModel types;
  private static OnnxModel iris;

  @BeforeAll
  static void load() {
    types = TestRepos.load("types", "1");
    iris = TestRepos.load("iris", "1");
  }

  @AfterAll
  static void unload() throws Exception {
    types.clearCache();
    iris.clearCache();
  }

  private static Map<String, Tensor> typesInputs() {
    long[] s3 = {3};
    Map<String, Tensor> in = new LinkedHashMap<>();
    for (Tensor t :
        List.of(
            Tensor.ofFloats("fp32_in", s3, 1.5f, -2.25f, 0f),
            Tensor.ofDoubles("fp64_in", s3, 1e300, -0.125, 3.0),
            Tensor.ofInts("int32_in", s3, 7, -1_000_000_000, 0),
            Tensor.ofLongs("int64_in", s3, 1L << 40, -3, 5),
            Tensor.ofShorts("int16_in", s3, (short) -32768, (short) 12, (short) 32767),
            Tensor.ofInt8("int8_in", s3, (byte) -128, (byte) 0, (byte) 127),
            Tensor.ofUint8("uint8_in", s3, (byte) 0, (byte) 128, (byte) 255),
            Tensor.ofBooleans("bool_in", s3, true, false, true),
            Tensor.ofStrings("bytes_in", s3, "hello", "", "naïve ☃"))) {
      in.put(t.name(), t);
    }
    return in;
  }

  @Test
  void infer_everyDatatype_returnsValuesComputedByHand() {
    Map<String, Tensor> out = types.infer(typesInputs(), Set.of());

    assertThat(out.get("fp32_out").floats()).containsExactly(3f, -4.5f, 0f);
    assertThat(out.get("fp64_out").doubles()).containsExactly(2e300, -0.25, 6.0);
    assertThat(out.get("int32_out").ints()).containsExactly(14, -2_000_000_000, 0);
    assertThat(out.get("int64_out").longs()).containsExactly(1L << 41, -6, 10);
    assertThat(out.get("int64_as_fp32").floats()).containsExactly((float) (1L << 40), -3f, 5f);
    assertThat(out.get("int16_out").shorts())
        .containsExactly((short) -32768, (short) 12, (short) 32767);
    assertThat(out.get("int8_out").bytes()).containsExactly((byte) -128, (byte) 0, (byte) 127);
    assertThat(out.get("uint8_out").toList()).containsExactly(0, 128, 255);
    assertThat(out.get("bool_out").booleans()).containsExactly(false, true, false);
    assertThat(out.get("bytes_out").strings()).containsExactly("hello", "", "naïve ☃");
    assertThat(out.values()).allSatisfy(t -> assertThat(t.shape()).containsExactly(3));
    assertThat(out.get("uint8_out").datatype()).isEqualTo(Datatype.UINT8);
  }

  /**
   * Every byte value, at the start, in the middle and at the end of a BYTES element, through the
   * types model's echo (bytes_in to bytes_out, an ONNX Identity): the model hands back exactly the
   * bytes sent. So do 4-byte UTF-8 (an emoji), bytes that are not UTF-8, an element of 0x00 alone,
   * empty elements, and a large element.
   */
  @Test
  void infer_bytesEveryByteValueInEveryPosition_comeBackUnchanged() {
    List<byte[]> elements = new ArrayList<>();
    for (int v = 0; v < 256; v++) {
      byte b = (byte) v;
      elements.add(new byte[] {b});
      elements.add(new byte[] {'a', b, 'z'});
      elements.add(new byte[] {'a', b});
    }
    elements.add("x\uD83D\uDE00 and \uD83E\uDD16".getBytes(StandardCharsets.UTF_8));
    elements.add(new byte[] {(byte) 0xc1, (byte) 0x81, 0, 0, (byte) 0xff});
    elements.add(new byte[0]);
    byte[] large = new byte[1 << 20];
    new Random(7).nextBytes(large);
    elements.add(large);
    elements.add(new byte[0]);
    byte[][] sent = elements.toArray(new byte[0][]);
    Map<String, Tensor> in = typesInputs();
    in.put("bytes_in", Tensor.ofByteStrings("bytes_in", new long[] {sent.length}, sent));
    byte[][] back = types.infer(in, Set.of("bytes_out")).get("bytes_out").byteStrings();
    assertThat(back.length).isEqualTo(sent.length);
    for (int i = 0; i < sent.length; i++) {
      assertThat(back[i]).as("element %d", i).isEqualTo(sent[i]);
    }
  }

  @Test
  void load_measuredToNeedMoreThanTheRoomForModels_isRefusedNamingItsNeedAndTheRoom() {
    OnnxModelOptions tight =
        OnnxModelOptions.defaults()
            .withWorkingMemory(
                new WorkingMemory() {
                  @Override
                  public WithFixedSizeCache.Reservation reserve(String modelId, long bytes) {
                    return WithFixedSizeCache.Reservation.NONE;
                  }

                  @Override
                  public long modelRoom() {
                    return 64 << 10; // less than any session's own structures
                  }
                });
    assertThatThrownBy(
            () ->
                OnnxModel.load(
                    TestRepos.modelFile("iris", "1"), "iris", "1", ModelConfig.EMPTY, tight))
        .isInstanceOf(ModelTooLargeException.class)
        .hasMessageContaining("model 'iris/1' needs")
        .hasMessageContaining("more than the 0.1 MiB the memory cap leaves for models");
  }

  @Test
  void infer_binaryTensorsInADirectBuffer_answerAsTheirArrays() {
    // every fixed-size input in its binary layout, back to back in one direct buffer at an odd
    // offset (as they arrive in a request body), handed to ONNX Runtime in place
    Map<String, Tensor> arrays = typesInputs();
    ByteBuffer body = ByteBuffer.allocateDirect(1024).order(ByteOrder.LITTLE_ENDIAN);
    body.position(3);
    Map<String, Tensor> binary = new LinkedHashMap<>();
    for (Tensor t : arrays.values()) {
      if (t.datatype() == Datatype.BYTES) {
        binary.put(t.name(), t);
        continue;
      }
      byte[] raw = t.datatype().toBinary(t.data());
      ByteBuffer slice = body.slice(body.position(), raw.length);
      slice.put(raw).flip();
      body.position(body.position() + raw.length);
      Tensor b = Tensor.ofBinary(t.name(), t.datatype(), t.shape(), slice);
      assertThat(b.binary().isDirect()).isTrue();
      binary.put(t.name(), b);
    }

    assertThat(types.infer(binary, Set.of())).isEqualTo(types.infer(arrays, Set.of()));
    assertThat(binary).isEqualTo(arrays); // and each decodes to the same array
  }

  @Test
  void metadata_typesModel_declaresEveryDatatypeWithDynamicDims() {
    ModelMetadata md = types.metadata();
    assertThat(md.platform()).isEqualTo(ModelMetadata.ONNX_PLATFORM);
    assertThat(md.inputs())
        .extracting(TensorSpec::datatype)
        .containsExactlyInAnyOrder(
            Datatype.FP32,
            Datatype.FP64,
            Datatype.INT32,
            Datatype.INT64,
            Datatype.INT16,
            Datatype.INT8,
            Datatype.UINT8,
            Datatype.BOOL,
            Datatype.BYTES);
    assertThat(md.inputs()).allSatisfy(s -> assertThat(s.shape()).containsExactly(-1L));
    assertThat(md.outputs()).extracting(TensorSpec::name).contains("int64_as_fp32", "bytes_out");
  }

  @Test
  void infer_requestedOutputs_returnsOnlyThose() {
    Map<String, Tensor> out = types.infer(typesInputs(), Set.of("bool_out", "fp64_out"));
    assertThat(out).containsOnlyKeys("fp64_out", "bool_out");
  }

  @Test
  void infer_unknownRequestedOutput_throwsInvalidInput() {
    assertThatThrownBy(() -> types.infer(typesInputs(), Set.of("nope")))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("no output named 'nope'");
  }

  @Test
  void infer_unknownInputName_throwsInvalidInput() {
    Map<String, Tensor> in = typesInputs();
    in.put("extra", Tensor.ofFloats("extra", new long[] {1}, 1f));
    assertThatThrownBy(() -> types.infer(in, Set.of()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("no input named 'extra'");
  }

  @Test
  void infer_missingInput_throwsInvalidInput() {
    Map<String, Tensor> in = typesInputs();
    in.remove("bytes_in");
    assertThatThrownBy(() -> types.infer(in, Set.of()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("'bytes_in', which is missing");
  }

  @Test
  void infer_wrongDatatype_throwsInvalidInput() {
    Map<String, Tensor> in = typesInputs();
    in.put("int64_in", Tensor.ofInts("int64_in", new long[] {3}, 1, 2, 3));
    assertThatThrownBy(() -> types.infer(in, Set.of()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("must be INT64, was INT32");
  }

  @Test
  void infer_shapeTheModelCannotTake_throwsInvalidInput() {
    Map<String, Tensor> in =
        Map.of("input", Tensor.ofFloats("input", new long[] {2, 2}, 1, 2, 3, 4));
    assertThatThrownBy(() -> iris.infer(in, Set.of()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("has shape [2, 2]");
  }

  @Test
  void infer_wrongRank_throwsInvalidInput() {
    Map<String, Tensor> in = Map.of("input", Tensor.ofFloats("input", new long[] {4}, 1, 2, 3, 4));
    assertThatThrownBy(() -> iris.infer(in, Set.of())).isInstanceOf(InvalidInputException.class);
  }

  @Test
  void infer_keyDiffersFromTensorName_throwsInvalidInput() {
    Map<String, Tensor> in =
        Map.of("input", Tensor.ofFloats("other", new long[] {1, 4}, 1, 2, 3, 4));
    assertThatThrownBy(() -> iris.infer(in, Set.of()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("named 'other'");
  }

  @Test
  void infer_emptyBatch_returnsEmptyOutputs() {
    Map<String, Tensor> out =
        iris.infer(Map.of("input", Tensor.ofFloats("input", new long[] {0, 4})), Set.of());
    assertThat(out.get("label").shape()).containsExactly(0);
    assertThat(out.get("probabilities").elementCount()).isZero();
  }

  @Test
  void infer_manyThreadsAtOnce_allGetTheSingleThreadedAnswer() throws Exception {
    Map<String, Tensor> in = typesInputs();
    Map<String, Tensor> expected = types.infer(in, Set.of());
    int threads = 8;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(
            pool.submit(
                () -> {
                  start.await(10, TimeUnit.SECONDS);
                  for (int i = 0; i < 50; i++) {
                    if (!types.infer(in, Set.of()).equals(expected)) {
                      return false;
                    }
                  }
                  return true;
                }));
      }
      for (Future<Boolean> f : results) {
        assertThat(f.get(30, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void infer_afterClearCache_throwsModelNotLoaded() throws Exception {
    OnnxModel model = TestRepos.load("mlp-small", "1");
    model.clearCache();
    model.clearCache(); // idempotent
    assertThat(model.isLoaded()).isFalse();
    assertThatThrownBy(
            () ->
                model.infer(
                    Map.of("input", Tensor.ofFloats("input", new long[] {1, 8}, new float[8])),
                    Set.of()))
        .isInstanceOf(ModelNotLoadedException.class);
  }

  @Test
  void sizeBytes_isTheChargedMemoryCost_andFileBytesTheModelFileSize() throws Exception {
    assertThat(iris.fileBytes()).isEqualTo(Files.size(TestRepos.modelFile("iris", "1")));
    assertThat(iris.sizeBytes()).isEqualTo(iris.memoryCost().idleBytes()).isPositive();
  }

  @Test
  void load_notAnOnnxFile_throwsModelLoadException(@TempDir Path dir) throws Exception {
    Path junk = Files.writeString(dir.resolve("model.onnx"), "this is not a protobuf");
    assertThatThrownBy(
            () -> OnnxModel.load(junk, "junk", "1", ModelConfig.EMPTY, OnnxModelOptions.defaults()))
        .isInstanceOf(ModelLoadException.class)
        .hasMessageContaining("junk/1");
  }

  @Test
  void load_missingFile_throwsModelLoadException(@TempDir Path dir) {
    assertThatThrownBy(
            () ->
                OnnxModel.load(
                    dir.resolve("absent.onnx"),
                    "absent",
                    "1",
                    ModelConfig.EMPTY,
                    OnnxModelOptions.defaults()))
        .isInstanceOf(ModelLoadException.class);
  }
}
