package dev.modelkeeper.onnx.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.ModelRepository;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The small models committed for the onnx module's tests ({@code
 * modelkeeper-onnx/src/test/resources/test-repository}) are what {@link DemoRepository} writes
 * today: the same model bytes and the same config.
 */
class CommittedTestModelsTest {

  private static final Path COMMITTED =
      Path.of("..", "modelkeeper-onnx", "src", "test", "resources", "test-repository");

  @TempDir Path tmp;

  @Test
  void committedTestModels_matchTheGenerator() throws Exception {
    Path generated = DemoRepository.materialize(tmp.resolve("demo"));
    List<Path> models;
    try (Stream<Path> walk = Files.walk(COMMITTED)) {
      models = walk.filter(p -> p.endsWith(ModelRepository.MODEL_FILE)).toList();
    }
    assertThat(models).hasSize(4);
    for (Path model : models) {
      Path version = COMMITTED.relativize(model.getParent());
      Path fresh = generated.resolve(version.toString());
      assertThat(Files.readAllBytes(model))
          .as("%s", version)
          .isEqualTo(Files.readAllBytes(fresh.resolve(ModelRepository.MODEL_FILE)));
      assertThat(config(model.resolveSibling(ModelConfig.FILE_NAME)))
          .as("%s", version)
          .isEqualTo(config(fresh.resolve(ModelConfig.FILE_NAME)));
    }
  }

  private static ModelConfig config(Path file) throws Exception {
    return ModelConfig.parse(Files.readString(file, StandardCharsets.UTF_8));
  }
}
