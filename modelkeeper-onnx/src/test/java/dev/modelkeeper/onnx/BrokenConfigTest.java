package dev.modelkeeper.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.ModelLoadException;
import dev.modelkeeper.core.testkit.LogCapture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A broken {@code config.json} is named by its path, line and column; listings warn about it once
 * per problem, not on every look; a load fails with the same words.
 */
class BrokenConfigTest {

  @TempDir Path root;

  @Test
  void aBrokenConfig_isNamedWithItsLineAndColumn_andWarnedAboutOncePerProblem() throws Exception {
    Path dir = Files.createDirectories(root.resolve("iris/1"));
    Files.copy(TestRepos.modelFile("iris", "1"), dir.resolve("model.onnx"));
    Path config = dir.resolve("config.json");
    Files.writeString(config, "{\n  \"max_batch_size\": 4,,\n}", StandardCharsets.UTF_8);
    LocalModelRepository repo = new LocalModelRepository(root);
    ModelId id = new ModelId("iris", "1");

    try (LogCapture log = LogCapture.of(LocalModelRepository.class)) {
      repo.list();
      repo.locate(id);
      repo.list();
      assertThatThrownBy(() -> repo.fetch(id))
          .isInstanceOf(ModelLoadException.class)
          .hasMessageContaining(config.toString())
          .hasMessageContaining("line 2, column 23");

      assertThat(log.entries())
          .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.message()).contains(config.toString()).contains("line 2, column 23");
                assertThat(e.thrown()).isNull();
              });

      Files.writeString(config, "{\"max_batch_size\": 4}", StandardCharsets.UTF_8);
      assertThat(repo.fetch(id).config().maxBatchSize()).isEqualTo(4);
      Files.writeString(config, "{\"max_batch_size\": 4,,}", StandardCharsets.UTF_8);
      repo.list();
      assertThat(log.entries())
          .as("broken again after a fix: warned again")
          .filteredOn(e -> e.level().intValue() >= Level.WARNING.intValue())
          .hasSize(2);
    }
  }
}
