package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.ModelNotFoundException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OverridingRepositoryTest {

  @TempDir Path folder;

  private OverridingRepository repository;

  @BeforeEach
  void setUp() {
    repository = new OverridingRepository(new LocalModelRepository(TestRepos.demo()), folder);
  }

  @Test
  void configOverride_appliesToTheRepositorysFiles_untilRemoved() {
    ModelId iris = new ModelId("iris", "1");
    String before = repository.revision(iris);
    OverridingRepository.Given given =
        repository.prepare("iris", "{\"max_batch_size\": 16}", Map.of());
    assertThat(repository.fetch(iris).config().maxBatchSize()).isEqualTo(-1);
    repository.install("iris", given);
    ModelArtifact a = repository.fetch(iris);
    assertThat(a.config().maxBatchSize()).isEqualTo(16);
    assertThat(a.modelFile())
        .isEqualTo(new LocalModelRepository(TestRepos.demo()).fetch(iris).modelFile());
    assertThat(repository.revision(iris)).isNotEqualTo(before);
    assertThat(repository.install("iris", null)).isSameAs(given);
    assertThat(repository.fetch(iris).config().maxBatchSize()).isEqualTo(-1);
    assertThat(repository.revision(iris)).isEqualTo(before);
  }

  @Test
  void configOverride_malformedOrUnservedOrForAnUnknownModel_isRefused() {
    assertThatThrownBy(() -> repository.prepare("iris", "{\"max_batch_size\": ", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("not a valid model configuration in JSON")
        .hasMessageNotContaining("Exception");
    assertThatThrownBy(() -> repository.prepare("iris", "{\"colour\": 1}", Map.of()))
        .hasMessageContaining("colour");
    assertThatThrownBy(() -> repository.prepare("iris", "{\"name\": \"other\"}", Map.of()))
        .hasMessageContaining("name 'other'");
    assertThatThrownBy(() -> repository.prepare("iris", "{\"platform\": \"ensemble\"}", Map.of()))
        .isInstanceOf(UnsupportedFeatureException.class);
    assertThatThrownBy(() -> repository.prepare("nothere", "{}", Map.of()))
        .isInstanceOf(ModelNotFoundException.class);
  }

  @Test
  void fileOverride_servesTheFilesSent_fromTheFolder() throws Exception {
    byte[] onnx = Files.readAllBytes(TestRepos.modelFile("iris", "1"));
    OverridingRepository.Given given =
        repository.prepare("uploaded", "{\"max_batch_size\": 4}", Map.of("3/model.onnx", onnx));
    repository.install("uploaded", given);
    assertThat(repository.list()).extracting(RepositoryEntry::id).contains("uploaded/3", "iris/1");
    ModelArtifact a = repository.fetch(new ModelId("uploaded", null));
    assertThat(a.version()).isEqualTo("3");
    assertThat(a.modelFile()).startsWith(folder.toRealPath());
    assertThat(Files.readAllBytes(a.modelFile())).isEqualTo(onnx);
    assertThat(a.config().maxBatchSize()).isEqualTo(4);
    repository.install("uploaded", null);
    repository.discard(given);
    assertThat(given.dir()).doesNotExist();
    assertThatThrownBy(() -> repository.locate(new ModelId("uploaded", null)))
        .isInstanceOf(ModelNotFoundException.class);
  }

  @Test
  void fileOverride_outsideTheModelsFolder_orWithoutConfig_isRefused_andWritesNothing()
      throws Exception {
    for (String path :
        new String[] {"../escape/model.onnx", "/abs/model.onnx", "1/../../x", "1//model.onnx"}) {
      assertThatThrownBy(() -> repository.prepare("m", "{}", Map.of(path, new byte[] {1})))
          .as(path)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not a path inside the model's folder");
    }
    assertThatThrownBy(() -> repository.prepare("m", null, Map.of("1/model.onnx", new byte[1])))
        .hasMessageContaining("config parameter");
    assertThatThrownBy(() -> repository.prepare("m", "{}", Map.of("model.onnx", new byte[1])))
        .hasMessageContaining("numbered version folder");
    try (var left = Files.list(folder)) {
      assertThat(left).isEmpty();
    }
  }
}
