package dev.modelkeeper.benchmarks.memory;

import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.demo.DemoRepository;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Model repositories for the memory benchmark, laid out as the server reads them ({@code
 * <root>/<name>/<version>/model.onnx}, optional {@code config.json}): copies of the demo's {@code
 * convnet} under new names beside the demo's small models. Files are hard links where the file
 * system allows, else copies, except the convnet copies, which are always real copies: a copy
 * shares no page of the file system's cache with another, as distinct models would not. Stateless
 * and thread-safe.
 */
final class BenchRepository {

  /** The demo's heavy model, copied under new names. */
  static final String CONVNET = "convnet";

  private static final String MODEL_FILE = "model.onnx";

  private BenchRepository() {}

  /**
   * One model version of a repository.
   *
   * @param name its name
   * @param version its version folder's name
   * @param fileBytes the size of its {@code model.onnx}
   * @param maxBatchSize {@code max_batch_size} of its {@code config.json}; -1 when unset
   */
  record Model(String name, String version, long fileBytes, int maxBatchSize) {
    String id() {
      return name + "/" + version;
    }

    /** Rows a request carries at this model's largest batch; {@code fallback} when it sets none. */
    int rows(int fallback) {
      return maxBatchSize > 0 ? maxBatchSize : fallback;
    }
  }

  /** The demo repository in {@code dir}, written there first if it is missing or incomplete. */
  static Path demo(Path dir) {
    return DemoRepository.materialize(dir);
  }

  /**
   * Builds in {@code root} (which must not exist) {@code copies} copies of the demo's convnet,
   * named {@code convnet-a}, {@code convnet-b}, ..., and, when {@code small}, every other model of
   * {@code demo}.
   */
  static Path build(Path demo, Path root, int copies, boolean small) throws IOException {
    if (copies < 0 || copies > 26) {
      throw new IllegalArgumentException("--copies must be 0 to 26, was " + copies);
    }
    Files.createDirectories(root);
    for (Model m : models(demo)) {
      if (m.name().equals(CONVNET)) {
        for (int i = 0; i < copies; i++) {
          mirror(demo.resolve(m.name()), root.resolve(CONVNET + "-" + (char) ('a' + i)), false);
        }
      } else if (small) {
        mirror(
            demo.resolve(m.name()).resolve(m.version()),
            root.resolve(m.name()).resolve(m.version()),
            true);
      }
    }
    return root;
  }

  /** Every model version of repository {@code root}, by name then version. */
  static List<Model> models(Path root) throws IOException {
    List<Model> out = new ArrayList<>();
    try (Stream<Path> names = Files.list(root)) {
      for (Path name : names.filter(Files::isDirectory).sorted().toList()) {
        try (Stream<Path> versions = Files.list(name)) {
          for (Path v :
              versions
                  .filter(p -> Files.isRegularFile(p.resolve(MODEL_FILE)))
                  .sorted(Comparator.comparing(p -> p.getFileName().toString()))
                  .toList()) {
            Path config = v.resolve(ModelConfig.FILE_NAME);
            int batch =
                Files.exists(config)
                    ? ModelConfig.parse(Files.readString(config, StandardCharsets.UTF_8))
                        .execution()
                        .maxBatchSize()
                    : -1;
            out.add(
                new Model(
                    name.getFileName().toString(),
                    v.getFileName().toString(),
                    Files.size(v.resolve(MODEL_FILE)),
                    batch));
          }
        }
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("no models (<name>/<version>/model.onnx) in " + root);
    }
    return out;
  }

  /**
   * Mirrors the files of {@code from} (two levels deep at most) into {@code to}, as hard links when
   * {@code link} and the file system allows, else as copies.
   */
  private static void mirror(Path from, Path to, boolean link) throws IOException {
    try (Stream<Path> files = Files.walk(from, 2)) {
      for (Path f : files.toList()) {
        Path target = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(target);
        } else if (!link) {
          Files.copy(f, target);
        } else {
          try {
            Files.createLink(target, f);
          } catch (IOException | UnsupportedOperationException e) {
            Files.copy(f, target); // another file system, or no hard links there
          }
        }
      }
    }
  }
}
