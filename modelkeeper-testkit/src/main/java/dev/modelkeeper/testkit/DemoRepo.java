package dev.modelkeeper.testkit;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.demo.DemoRepository;
import java.nio.file.Path;

/** The demo model repository, written once per test run into {@code target/}. Thread-safe. */
public final class DemoRepo {

  private static final Path ROOT =
      DemoRepository.materialize(Path.of("target", "test-demo-repository").toAbsolutePath());

  private DemoRepo() {}

  public static Path root() {
    return ROOT;
  }

  public static LocalModelRepository repository() {
    return new LocalModelRepository(ROOT);
  }
}
