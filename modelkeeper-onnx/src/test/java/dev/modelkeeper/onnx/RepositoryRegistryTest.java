package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.onnx.memory.MemoryCosts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Identifier validation, traversal attempts and lookups of the local repository registry. */
class RepositoryRegistryTest {

  @TempDir Path tmp;
  private Path root;
  private Path outside;
  private RepositoryModelRegistry registry;

  @BeforeEach
  void setUp() throws IOException {
    root = Files.createDirectories(tmp.resolve("repo"));
    outside = Files.createDirectories(tmp.resolve("outside"));
    copyModel("iris", "1", root.resolve("iris").resolve("1"));
    copyModel("mlp-small", "1", root.resolve("mlp").resolve("3"));
    copyModel("mlp-small", "2", root.resolve("mlp").resolve("10"));
    copyModel("mlp-small", "1", outside.resolve("secret").resolve("1"));
    registry = new RepositoryModelRegistry(new LocalModelRepository(root));
  }

  private static void copyModel(String name, String version, Path dir) throws IOException {
    Files.createDirectories(dir);
    Files.copy(TestRepos.modelFile(name, version), dir.resolve(ModelRepository.MODEL_FILE));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "..",
        "../outside",
        "../outside/secret/1",
        "iris/../../outside",
        "/etc/passwd",
        "/iris",
        "iris/1/..",
        "iris/1/model.onnx",
        "iris%2F1",
        "..%2Foutside",
        "%2e%2e",
        "iris\\1",
        "..\\outside",
        "iris/",
        "/",
        "",
        ".hidden",
        "iris/01",
        "iris/0",
        "iris/-1",
        "iris/1 ",
        "iris /1",
        "iris/1?x=1",
        "a\u0000b",
        "iris/+1",
        "C:\\models\\iris",
        "~/iris",
        "iris/1234567890"
      })
  void getModel_malformedOrEscapingId_throwsInvalidModelId(String id) {
    assertThatThrownBy(() -> registry.getModel(id, null))
        .isInstanceOf(InvalidModelIdException.class);
  }

  @Test
  void getModel_nullId_throwsInvalidModelId() {
    assertThatThrownBy(() -> registry.getModel(null, null))
        .isInstanceOf(InvalidModelIdException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"nosuch", "nosuch/1", "iris/2", "secret", "secret/1"})
  void getModel_validUnknownId_throwsModelNotFound(String id) {
    assertThatThrownBy(() -> registry.getModel(id, null))
        .isInstanceOf(ModelNotFoundException.class);
  }

  @Test
  void getModel_symlinkedModelFolderOutsideRoot_throwsInvalidModelId() throws IOException {
    Files.createSymbolicLink(root.resolve("escape"), outside.resolve("secret"));
    assertThatThrownBy(() -> registry.getModel("escape/1", null))
        .isInstanceOf(InvalidModelIdException.class)
        .hasMessageContaining("outside the repository root");
    assertThatThrownBy(() -> registry.getModel("escape", null))
        .isInstanceOf(InvalidModelIdException.class);
    assertThat(registry.list()).extracting(RepositoryEntry::name).doesNotContain("escape");
  }

  @Test
  void getModel_symlinkedModelFileOutsideRoot_throwsInvalidModelId() throws IOException {
    Path dir = Files.createDirectories(root.resolve("linked").resolve("1"));
    Files.createSymbolicLink(
        dir.resolve(ModelRepository.MODEL_FILE),
        outside.resolve("secret").resolve("1").resolve(ModelRepository.MODEL_FILE));
    assertThatThrownBy(() -> registry.getModel("linked/1", null))
        .isInstanceOf(InvalidModelIdException.class);
  }

  @Test
  void getModel_symlinkInsideRoot_loads() throws Exception {
    Files.createSymbolicLink(root.resolve("flowers"), root.resolve("iris"));
    ModelFactory f = registry.getModel("flowers/1", null);
    OnnxModel m = (OnnxModel) f.create("flowers/1", null);
    try {
      assertThat(m.metadata().id()).isEqualTo("flowers/1");
    } finally {
      m.clearCache();
    }
  }

  @Test
  void create_bareName_loadsHighestVersionNumerically() throws Exception {
    OnnxModel m = (OnnxModel) registry.getModel("mlp", null).create("mlp", null);
    try {
      assertThat(m.metadata().version()).isEqualTo("10"); // 10 > 3 numerically, not as text
    } finally {
      m.clearCache();
    }
  }

  @Test
  void predictedSizeBytes_isTheEstimatedLoadPeakOfTheFileOrConfiguredSize() throws IOException {
    ModelFactory f = registry.getModel("iris/1", null);
    assertThat(f.predictedSizeBytes("iris/1"))
        .isEqualTo(
            MemoryCost.estimate(Files.size(root.resolve("iris/1/model.onnx"))).loadPeakBytes());
    Files.writeString(
        root.resolve("iris/1/config.json"),
        "{\"description\": \"d\", \"expected_size_bytes\": 123456}");
    assertThat(f.predictedSizeBytes("iris/1"))
        .isEqualTo(MemoryCost.estimate(123456).loadPeakBytes());
    assertThat(f.predictedSizeBytes("../x")).isNegative();
  }

  @Test
  void predictedSizeBytes_onceTheModelWasMeasured_isItsMeasuredLoadPeak() throws Exception {
    MemoryCosts costs = MemoryCosts.inMemory();
    RepositoryModelRegistry measured =
        new RepositoryModelRegistry(
            new LocalModelRepository(root), OnnxModelOptions.defaults().withMemoryCosts(costs));
    costs.recordLoad("iris/1", Files.size(root.resolve("iris/1/model.onnx")), 900_000, 500_000);

    assertThat(measured.getModel("iris/1", null).predictedSizeBytes("iris/1")).isEqualTo(900_000);
  }

  @Test
  void create_brokenConfig_throwsModelLoadException() throws IOException {
    Files.writeString(root.resolve("iris/1/config.json"), "{\"labels\": [1, 2]}");
    ModelFactory f = registry.getModel("iris/1", null);
    assertThatThrownBy(() -> f.create("iris/1", null))
        .isInstanceOf(ModelLoadException.class)
        .hasMessageContaining("config.json");
    assertThat(registry.list()).extracting(RepositoryEntry::id).contains("iris/1");
  }

  @Test
  void create_configLabelsAndDescription_reachMetadata() throws Exception {
    Files.writeString(
        root.resolve("iris/1/config.json"),
        "{\"description\": \"flowers \\\"quoted\\\"\", \"labels\": [\"a\", \"b\", \"c\"], \"x\": null}");
    OnnxModel m = (OnnxModel) registry.getModel("iris/1", null).create("iris/1", null);
    try {
      assertThat(m.metadata().description()).isEqualTo("flowers \"quoted\"");
      assertThat(m.metadata().labels()).containsExactly("a", "b", "c");
    } finally {
      m.clearCache();
    }
  }

  @Test
  void addModel_throughManager_traversalIsRejectedWithItsType() {
    BaseModelManager manager = new BaseModelManager(registry);
    assertThatThrownBy(() -> manager.addModel("../outside/secret/1", null))
        .isInstanceOf(InvalidModelIdException.class);
    assertThatThrownBy(() -> manager.addModel("nosuch/1", null))
        .isInstanceOf(ModelNotFoundException.class);
    assertThat(manager.size()).isZero();
  }

  @Test
  void list_ignoresFoldersThatAreNotModels() throws IOException {
    Files.createDirectories(root.resolve(".git"));
    Files.createDirectories(root.resolve("empty").resolve("1"));
    Files.createDirectories(root.resolve("iris").resolve("notaversion"));
    assertThat(registry.list())
        .extracting(RepositoryEntry::id)
        .containsExactly("iris/1", "mlp/3", "mlp/10");
  }

  @Test
  void configJson_roundTrips() {
    ModelConfig c = new ModelConfig("a \"b\"\n\u0001", List.of("x", "y"), 42);
    assertThat(ModelConfig.parse(c.toJson())).isEqualTo(c);
    assertThatThrownBy(() -> ModelConfig.parse("{\"a\": 1,}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ModelConfig.parse("[1]")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void configJson_executionSettings_parseAndRoundTrip() {
    ModelConfig c =
        ModelConfig.parse(
            "{\"max_batch_size\": 32, \"max_queue_delay\": 500, \"preferred_batch_sizes\": [8, 16],"
                + " \"max_concurrency\": 2, \"intra_op_threads\": 3, \"inter_op_threads\": 4}");
    assertThat(c.execution())
        .isEqualTo(new ModelConfig.Execution(32, 500, List.of(8, 16), 2, 3, 4));
    assertThat(ModelConfig.parse(c.toJson())).isEqualTo(c);
    assertThat(ModelConfig.parse("{}").execution()).isEqualTo(ModelConfig.Execution.DEFAULTS);
    // 0 is Triton's "no batch dimension"; below that is refused
    assertThat(ModelConfig.parse("{\"max_batch_size\": 0}").maxBatchSize()).isZero();
    assertThatThrownBy(() -> ModelConfig.parse("{\"max_batch_size\": -2}"))
        .hasMessageContaining("max_batch_size");
    assertThatThrownBy(() -> ModelConfig.parse("{\"max_concurrency\": \"two\"}"))
        .hasMessageContaining("max_concurrency");
    assertThatThrownBy(() -> ModelConfig.parse("{\"preferred_batch_sizes\": [0]}"))
        .hasMessageContaining("preferred_batch_sizes");
  }

  @Test
  void getModel_afterALoadFailedForItsFiles_answersTheSameFailureWithoutLoading_untilTheyChange()
      throws Exception {
    Path file = root.resolve("iris/1/model.onnx");
    byte[] good = Files.readAllBytes(file);
    Files.write(file, Arrays.copyOf(good, good.length / 2));
    ModelFactory factory = registry.getModel("iris/1", null);
    ModelUnservableException first =
        catchThrowableOfType(ModelUnservableException.class, () -> factory.create("iris/1", null));
    assertThat(first).isNotNull().hasMessageContaining("Protobuf parsing failed");
    for (int i = 0; i < 3; i++) { // answered from memory: the very same failure, nothing loaded
      assertThatThrownBy(() -> registry.getModel("iris/1", null)).isSameAs(first);
      assertThatThrownBy(() -> registry.getModel("iris", null)).isSameAs(first);
    }
    Files.write(file, good);
    Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
    InferenceModel loaded =
        (InferenceModel) registry.getModel("iris/1", null).create("iris/1", null);
    assertThat(loaded.metadata().id()).isEqualTo("iris/1");
    loaded.clearCache();
  }
}
