package dev.modelkeeper.onnx;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * One copy per test JVM of the small committed test repository ({@code test-repository/} in the
 * test resources: {@code iris/1}, {@code mlp-small/1}, {@code mlp-small/2}, {@code types/1}, as
 * written by the demo module's {@code DemoRepository}), deleted at exit.
 */
public final class TestRepos {

  private static Path demo;

  private TestRepos() {}

  public static synchronized Path demo() {
    if (demo == null) {
      try {
        Path dir = Files.createTempDirectory("mk-demo-");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
        demo = copyTree(Path.of(TestRepos.class.getResource("/test-repository").toURI()), dir);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (URISyntaxException e) {
        throw new IllegalStateException(e);
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

  private static Path copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
    return to;
  }

  public static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
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
