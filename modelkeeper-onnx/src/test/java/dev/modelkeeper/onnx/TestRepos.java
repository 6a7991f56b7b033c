package dev.modelkeeper.onnx;

import dev.modelkeeper.onnx.demo.DemoRepository;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** One demo repository per test JVM, deleted at exit. */
public final class TestRepos {

  private static Path demo;

  private TestRepos() {}

  public static synchronized Path demo() {
    if (demo == null) {
      try {
        Path dir = Files.createTempDirectory("mk-demo-");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
        demo = DemoRepository.materialize(dir);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return demo;
  }

  public static Path modelFile(String name, String version) {
    return demo().resolve(name).resolve(version).resolve(ModelRepository.MODEL_FILE);
  }

  public static OnnxModel load(String name, String version) {
    return OnnxModel.load(
        modelFile(name, version), name, version, ModelConfig.EMPTY, OnnxModelOptions.defaults());
  }

  public static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // best effort at exit
        }
      });
    } catch (IOException ignored) {
      // best effort at exit
    }
  }
}
