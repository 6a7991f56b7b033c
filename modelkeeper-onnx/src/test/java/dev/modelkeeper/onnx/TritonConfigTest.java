package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotFoundException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TritonConfigTest {

  @TempDir Path root;

  private ModelConfig parse(String text) {
    Path dir = root.resolve("m");
    return TritonConfig.parse(text, dir.resolve("config.pbtxt"), dir);
  }

  @Test
  void parse_mapsWhatAnOnnxCpuServerHonours() throws Exception {
    Files.createDirectories(root.resolve("m"));
    Files.writeString(root.resolve("m/labels.txt"), "a\nb\n\n", StandardCharsets.UTF_8);
    ModelConfig c =
        parse(
            """
            name: "m"
            platform: "onnxruntime_onnx"
            max_batch_size: 8
            input [ { name: "x" data_type: TYPE_FP32 dims: [ 2, -1 ] reshape { shape: [ -1 ] } } ]
            output [ { name: "y" data_type: TYPE_INT64 dims: [ 2 ] label_filename: "labels.txt" } ]
            instance_group [ { count: 2 kind: KIND_CPU }, { count: 1 } ]
            dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 250 }
            parameters { key: "intra_op_thread_count" value: { string_value: "3" } }
            default_model_filename: "net.onnx"
            optimization { graph { level: 1 } }
            """);
    assertThat(c.maxBatchSize()).isEqualTo(8);
    assertThat(c.maxConcurrency()).isEqualTo(3);
    assertThat(c.maxQueueDelayMicros()).isEqualTo(250);
    assertThat(c.preferredBatchSizes()).containsExactly(4);
    assertThat(c.intraOpThreads()).isEqualTo(3);
    assertThat(c.interOpThreads()).isEqualTo(-1);
    assertThat(c.labels()).containsExactly("a", "b");
    ModelConfig.Declared d = c.declared();
    assertThat(d.modelFileName()).isEqualTo("net.onnx");
    assertThat(d.versionPolicy()).isEqualTo(VersionPolicy.LATEST_ONE);
    assertThat(d.inputs())
        .containsExactly(
            new TensorConfig("x", Datatype.FP32, List.of(2L, -1L), List.of(-1L), false, List.of()));
    assertThat(d.outputs().get(0).labels()).containsExactly("a", "b");
    assertThat(d.ignored()).containsExactly("optimization");
    assertThat(d.triton().getName()).isEqualTo("m");
  }

  @Test
  void parse_withoutDynamicBatching_waitsForNoCompany_andMaxBatchSizeZeroIsKept() {
    ModelConfig c = parse("max_batch_size: 0\n");
    assertThat(c.maxBatchSize()).isZero();
    assertThat(c.maxQueueDelayMicros()).isZero();
    assertThat(c.maxConcurrency()).isEqualTo(-1);
  }

  @Test
  void parse_versionPolicies() {
    assertThat(parse("version_policy: { all { } }").declared().versionPolicy())
        .isEqualTo(VersionPolicy.ALL);
    VersionPolicy latest =
        parse("version_policy: { latest: { num_versions: 2 } }").declared().versionPolicy();
    assertThat(latest.select(List.of("1", "2", "3", "10"))).containsExactly("3", "10");
    VersionPolicy specific =
        parse("version_policy: { specific: { versions: [ 1, 3 ] } }").declared().versionPolicy();
    assertThat(specific.select(List.of("1", "2", "3"))).containsExactly("1", "3");
    assertThatThrownBy(() -> parse("version_policy: { latest: { num_versions: 0 } }"))
        .hasMessageContaining("num_versions of at least 1");
    assertThatThrownBy(() -> parse("version_policy: { specific: { } }"))
        .hasMessageContaining("lists no versions");
  }

  @Test
  void parse_refusesWhatItCannotServe_namingTheSetting() {
    assertThatThrownBy(() -> parse("name: \"other\""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name 'other' is not the model's folder name 'm'");
    assertThatThrownBy(() -> parse("platform: \"tensorrt_plan\""))
        .hasMessageStartingWith("platform 'tensorrt_plan' is not served");
    assertThatThrownBy(() -> parse("sequence_batching { }"))
        .isInstanceOf(UnsupportedFeatureException.class)
        .hasMessageStartingWith("sequence_batching is not offered");
    assertThatThrownBy(() -> parse("platform: \"ensemble\""))
        .isInstanceOf(UnsupportedFeatureException.class)
        .hasMessageStartingWith("ensemble models");
    assertThatThrownBy(() -> parse("backend: \"pytorch\""))
        .isInstanceOf(UnsupportedFeatureException.class)
        .hasMessageStartingWith("backend 'pytorch' is not served");
    assertThatThrownBy(() -> parse("model_transaction_policy { decoupled: true }"))
        .isInstanceOf(UnsupportedFeatureException.class)
        .hasMessageStartingWith("decoupled models");
    assertThatThrownBy(() -> parse("default_model_filename: \"../x/model.onnx\""))
        .hasMessageContaining("inside the version folder");
    assertThatThrownBy(() -> parse("input [ { name: \"x\" dims: [ 1 ] } ]"))
        .hasMessage("input 'x' needs a data_type");
    assertThatThrownBy(
            () ->
                parse(
                    "output [ { name: \"y\" data_type: TYPE_FP32 dims: [ 1 ] label_filename: \"../l\" } ]"))
        .hasMessageContaining("lies outside the model folder");
    assertThatThrownBy(
            () ->
                parse(
                    "input [ { name: \"x\" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 3 ] } } ]"))
        .hasMessageContaining("hold different numbers of elements");
  }

  @Test
  void parse_syntaxErrorsAndRepeatedSettings_giveLineAndColumn() {
    assertThatThrownBy(() -> parse("max_batch_size: 8\nmax_batch_size: 4\n"))
        .hasMessage("line 2, column 15: \"max_batch_size\" is given more than once");
    assertThatThrownBy(() -> parse("max_batch_size: 8\nmax_bach_size: 4\n"))
        .hasMessageStartingWith("line 2, column 1: ")
        .hasMessageContaining("max_bach_size");
    assertThatThrownBy(() -> parse("max_batch_size: \"eight\"\n"))
        .hasMessageStartingWith("line 1, column 17: ");
  }

  @Test
  void repository_servesTheVersionsItsPolicyNames_andSaysWhyAnotherIsNotServed() throws Exception {
    byte[] model = Files.readAllBytes(TestRepos.demo().resolve("iris/1/model.onnx"));
    for (int v = 1; v <= 3; v++) {
      Files.write(Files.createDirectories(root.resolve("iris/" + v)).resolve("model.onnx"), model);
    }
    Files.writeString(
        root.resolve("iris/config.pbtxt"), "version_policy: { latest: { num_versions: 2 } }\n");
    LocalModelRepository repo = new LocalModelRepository(root);
    assertThat(repo.list()).extracting(RepositoryEntry::id).containsExactly("iris/2", "iris/3");
    assertThat(repo.locate(new ModelId("iris", null)).version()).isEqualTo("3");
    assertThatThrownBy(() -> repo.fetch(new ModelId("iris", "1")))
        .isInstanceOf(ModelNotFoundException.class)
        .hasMessage(
            "version 1 of model 'iris' is not served: its version_policy serves the latest 2"
                + " (versions served: [2, 3])");
    assertThat(repo.fetch(new ModelId("iris", "2")).config().declared().file())
        .endsWith("config.pbtxt");
  }

  private OnnxModel loadIrisWith(String config) throws Exception {
    Path version = Files.createDirectories(root.resolve("iris/1"));
    Files.copy(
        TestRepos.modelFile("iris", "1"),
        version.resolve("model.onnx"),
        StandardCopyOption.REPLACE_EXISTING);
    Files.writeString(root.resolve("iris/config.pbtxt"), config);
    ByteBuffer row = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    row.putFloat(5.1f).putFloat(3.5f).putFloat(1.4f).putFloat(0.2f);
    Files.write(
        Files.createDirectories(root.resolve("iris/warmup")).resolve("iris.bin"), row.array());
    LocalModelRepository repo = new LocalModelRepository(root);
    return OnnxModel.load(repo.fetch(new ModelId("iris", null)), OnnxModelOptions.defaults());
  }

  @Test
  void modelWarmup_runsAsPartOfTheLoad_andABadSampleFailsItNamingTheSample() throws Exception {
    String input =
        "max_batch_size: 8\ninput [ { name: \"input\" data_type: TYPE_FP32 dims: [ 4 ] } ]\n";
    OnnxModel ok =
        loadIrisWith(
            input
                + "model_warmup [ { name: \"zeros\" batch_size: 2 count: 3 inputs { key: \"input\""
                + " value: { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } },"
                + " { name: \"random\" batch_size: 1 inputs { key: \"input\""
                + " value: { data_type: TYPE_FP32 dims: [ 4 ] random_data: true } } },"
                + " { name: \"file\" batch_size: 3 inputs { key: \"input\""
                + " value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: \"iris.bin\" } } } ]\n");
    ok.clearCache();
    assertThatThrownBy(
            () ->
                loadIrisWith(
                    input
                        + "model_warmup [ { name: \"wide\" batch_size: 1 inputs { key: \"input\""
                        + " value: { data_type: TYPE_FP32 dims: [ 5 ] zero_data: true } } } ]\n"))
        .isInstanceOf(ModelLoadException.class)
        .hasMessageContaining("config.pbtxt: model_warmup 'wide' of 'iris/1' failed: ")
        .hasMessageContaining("has shape [1, 5]");
    assertThatThrownBy(
            () ->
                loadIrisWith(
                    input
                        + "model_warmup [ { name: \"missing\" inputs { key: \"input\""
                        + " value: { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: \"no.bin\" } } } ]\n"))
        .hasMessageContaining("model_warmup 'missing' of 'iris/1' cannot be built");
  }

  @Test
  void repository_seesAChangedConfigOrLabelFile_atItsNextLookup() throws Exception {
    byte[] model = Files.readAllBytes(TestRepos.modelFile("iris", "1"));
    for (int v = 1; v <= 2; v++) {
      Files.write(Files.createDirectories(root.resolve("iris/" + v)).resolve("model.onnx"), model);
    }
    Files.writeString(root.resolve("iris/labels.txt"), "a\nb\nc\n");
    String outputs =
        "output [ { name: \"probabilities\" data_type: TYPE_FP32 dims: [ 3 ]"
            + " label_filename: \"labels.txt\" } ]\n";
    Files.writeString(root.resolve("iris/config.pbtxt"), "max_batch_size: 4\n" + outputs);
    LocalModelRepository repo = new LocalModelRepository(root);
    ModelId iris = new ModelId("iris", null);
    assertThat(repo.fetch(iris).config().labels()).containsExactly("a", "b", "c");
    assertThat(repo.list()).extracting(RepositoryEntry::id).containsExactly("iris/2");

    Files.writeString(root.resolve("iris/labels.txt"), "setosa\nversicolor\nvirginica\n");
    assertThat(repo.fetch(iris).config().labels())
        .containsExactly("setosa", "versicolor", "virginica");
    Files.writeString(
        root.resolve("iris/config.pbtxt"),
        "max_batch_size: 4\nversion_policy: { all { } }\n" + outputs);
    assertThat(repo.list()).extracting(RepositoryEntry::id).containsExactly("iris/1", "iris/2");
  }
}
