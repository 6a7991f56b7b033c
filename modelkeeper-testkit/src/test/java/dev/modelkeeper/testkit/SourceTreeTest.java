package dev.modelkeeper.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The project's sources name each class once: a reader who meets {@code Http} or {@code
 * ServerProcess} finds one of it, whichever module they are in, and the harness every module's
 * tests share is this module's.
 */
class SourceTreeTest {

  private static final Path ROOT = ServerProcess.projectRoot();

  /** Every Java source of every module's main and test code, by module. */
  private static Map<String, List<Path>> sources() throws IOException {
    Map<String, List<Path>> byModule = new TreeMap<>();
    try (Stream<Path> modules = Files.list(ROOT)) {
      for (Path module : modules.filter(m -> Files.isRegularFile(m.resolve("pom.xml"))).toList()) {
        Path src = module.resolve("src");
        if (!Files.isDirectory(src)) {
          continue;
        }
        try (Stream<Path> files = Files.walk(src)) {
          byModule.put(
              module.getFileName().toString(),
              files
                  .filter(f -> f.toString().endsWith(".java"))
                  .filter(f -> !f.getFileName().toString().equals("package-info.java"))
                  .toList());
        }
      }
    }
    return byModule;
  }

  private static String simpleName(Path source) {
    String file = source.getFileName().toString();
    return file.substring(0, file.length() - ".java".length());
  }

  @Test
  void noSimpleClassName_isDefinedInTwoModules() throws IOException {
    Map<String, Set<String>> modulesOf = new TreeMap<>();
    sources()
        .forEach(
            (module, files) ->
                files.forEach(
                    f ->
                        modulesOf
                            .computeIfAbsent(simpleName(f), n -> new TreeSet<>())
                            .add(module)));
    Map<String, Set<String>> twice =
        modulesOf.entrySet().stream()
            .filter(e -> e.getValue().size() > 1)
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    assertThat(modulesOf).as("classes found").containsKeys("ServerProcess", "Http", "FakeModels");
    assertThat(twice).as("simple class names defined in more than one module").isEmpty();
  }

  @Test
  void theServerIsStartedAsAProcessByOneClass_theTestKits() throws IOException {
    List<Path> found =
        sources().values().stream()
            .flatMap(List::stream)
            .filter(f -> simpleName(f).equals("ServerProcess"))
            .toList();
    assertThat(found)
        .containsExactly(
            ROOT.resolve(
                "modelkeeper-testkit/src/main/java/dev/modelkeeper/testkit/ServerProcess.java"));
  }
}
