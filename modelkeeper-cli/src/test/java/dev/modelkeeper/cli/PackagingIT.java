package dev.modelkeeper.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.onnx.OnnxModel;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.ModelKeeperServer;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * What the packaged jars hold: the library jars (core, onnx, server) carry no demo or writer class,
 * and the runnable jar stays within its size budget without ONNX Runtime debug symbols, and by
 * default with the natives of ONNX Runtime and JNA for linux-x64 only. Runs after {@code package},
 * in {@code mvn verify}.
 */
class PackagingIT {

  private static final List<String> DEMO_PACKAGES =
      List.of("dev/modelkeeper/onnx/demo/", "dev/modelkeeper/onnx/writer/");
  private static final Path RUNNABLE = Path.of("target", "modelkeeper.jar").toAbsolutePath();

  @Test
  void libraryJars_holdNoDemoOrWriterClass() throws Exception {
    for (Class<?> library :
        List.of(BaseModelManager.class, OnnxModel.class, ModelKeeperServer.class)) {
      Path location = location(library);
      assertThat(entries(location))
          .as("entries of %s", location)
          .isNotEmpty()
          .noneMatch(e -> DEMO_PACKAGES.stream().anyMatch(e::startsWith));
    }
    assertThat(location(DemoRepository.class)).isNotEqualTo(location(OnnxModel.class));
  }

  @Test
  void runnableJar_withinBudget_withoutDebugSymbolsOrOtherPlatforms() throws Exception {
    long budget = Long.parseLong(System.getProperty("modelkeeper.jar.budget.bytes"));
    assertThat(Files.size(RUNNABLE)).as("size of %s", RUNNABLE).isLessThanOrEqualTo(budget);
    List<String> entries = entries(RUNNABLE);
    assertThat(entries).noneMatch(e -> e.endsWith(".pdb") || e.contains(".dSYM/"));
    assertThat(entries)
        .contains(
            "ai/onnxruntime/native/linux-x64/libonnxruntime.so",
            "com/sun/jna/linux-x86-64/libjnidispatch.so");
    if (!Boolean.getBoolean("modelkeeper.jar.allPlatforms")) {
      assertThat(entries)
          .filteredOn(e -> e.startsWith("ai/onnxruntime/native/") && !e.endsWith("/"))
          .allMatch(e -> e.startsWith("ai/onnxruntime/native/linux-x64/"));
      assertThat(entries)
          .filteredOn(e -> e.startsWith("com/sun/jna/") && e.contains("jnidispatch"))
          .containsExactly("com/sun/jna/linux-x86-64/libjnidispatch.so");
    }
  }

  private static Path location(Class<?> type) throws URISyntaxException {
    return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  private static List<String> entries(Path jarOrFolder) throws IOException {
    List<String> names = new ArrayList<>();
    if (Files.isDirectory(jarOrFolder)) {
      try (Stream<Path> walk = Files.walk(jarOrFolder)) {
        walk.filter(Files::isRegularFile)
            .forEach(p -> names.add(jarOrFolder.relativize(p).toString().replace('\\', '/')));
      }
      return names;
    }
    try (ZipFile zip = new ZipFile(jarOrFolder.toFile())) {
      zip.stream().map(ZipEntry::getName).forEach(names::add);
    }
    return names;
  }
}
