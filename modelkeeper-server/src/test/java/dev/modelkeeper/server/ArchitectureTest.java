package dev.modelkeeper.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The rooms of the server and who may use whom, as the package map in docs/ARCHITECTURE.md and
 * {@code docs/ARCHITECTURE.md} states it (each package's {@code package-info.java} says it too):
 * core needs only the JDK; the rooms below the transports use no transport and no wire library;
 * each transport reaches the models through the engine and never uses another transport; only the
 * observability room imports Micrometer and OpenTelemetry; no package cycles; no package grows past
 * what a reader can hold.
 */
class ArchitectureTest {

  private static final String SERVER = "dev.modelkeeper.server";
  private static final String CORE = "dev.modelkeeper.core..";

  /**
   * The most lines one source file of the library or the server may hold: about 1,000, what a
   * reader takes in at a sitting. Packages are shaped by what belongs together, not by a size.
   */
  static final int MAX_CLASS_LINES = 1_100;

  private static final List<String> TRANSPORTS =
      List.of("oip", "management", "repository", "grpc", "status", "docs", "modelstats", "metrics");

  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    // the project's own code only: not test classes, nor the test fixtures other modules ship
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("dev.modelkeeper");
  }

  private static String room(String name) {
    return SERVER + "." + name + "..";
  }

  @Test
  void core_needsOnlyTheJdk() {
    classes()
        .that()
        .resideInAPackage(CORE)
        .should()
        .onlyDependOnClassesThat()
        // @GuardedBy, @Nullable and friends: annotations for the compiler's checks, not needed at
        // run time
        .resideInAnyPackage(
            CORE, "java..", "com.google.errorprone.annotations..", "org.jspecify.annotations..")
        .check(classes);
  }

  @Test
  void rooms_useOnlyTheRoomsBelowThem() {
    layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("errors")
        .definedBy(room("errors"))
        .layer("auth")
        .definedBy(room("auth"))
        .layer("request")
        .definedBy(room("request"))
        .layer("config")
        .definedBy(room("config"))
        .layer("admission")
        .definedBy(room("admission"))
        .layer("execution")
        .definedBy(room("execution"))
        .layer("memory")
        .definedBy(room("memory"))
        .layer("statistics")
        .definedBy(room("statistics"))
        .layer("engine")
        .definedBy(room("engine"))
        .layer("control")
        .definedBy(room("control"))
        .layer("observability")
        .definedBy(room("observability"))
        .layer("sharedmemory")
        .definedBy(room("sharedmemory"))
        .layer("http")
        .definedBy(room("http"))
        .layer("transports")
        .definedBy(TRANSPORTS.stream().map(ArchitectureTest::room).toArray(String[]::new))
        .layer("server")
        .definedBy(SERVER)
        .whereLayer("errors")
        .mayNotAccessAnyLayer()
        .whereLayer("auth")
        .mayOnlyAccessLayers("errors")
        .whereLayer("request")
        .mayOnlyAccessLayers("errors")
        .whereLayer("config")
        .mayOnlyAccessLayers("errors", "request")
        .whereLayer("admission")
        .mayOnlyAccessLayers("errors")
        .whereLayer("execution")
        .mayOnlyAccessLayers("errors", "request", "admission")
        .whereLayer("memory")
        .mayOnlyAccessLayers("errors", "config")
        .whereLayer("statistics")
        .mayOnlyAccessLayers("execution")
        .whereLayer("engine")
        .mayOnlyAccessLayers(
            "errors", "request", "config", "admission", "execution", "memory", "statistics")
        .whereLayer("control")
        .mayOnlyAccessLayers("errors", "request", "engine")
        .whereLayer("observability")
        .mayOnlyAccessLayers(
            "errors",
            "request",
            "config",
            "admission",
            "execution",
            "memory",
            "statistics",
            "engine")
        .whereLayer("sharedmemory")
        .mayOnlyAccessLayers("errors", "request")
        .whereLayer("http")
        .mayOnlyAccessLayers(
            "errors", "auth", "request", "admission", "execution", "engine", "observability")
        .whereLayer("transports")
        .mayOnlyAccessLayers(
            "errors",
            "auth",
            "request",
            "admission",
            "execution",
            "statistics",
            "engine",
            "control",
            "observability",
            "sharedmemory",
            "http")
        .check(classes);
  }

  @Test
  void serverPackages_haveNoCycles() {
    slices().matching(SERVER + ".(*)..").should().beFreeOfCycles().check(classes);
  }

  @Test
  void onlyObservability_importsMicrometerAndOpenTelemetry() {
    noClasses()
        .that()
        .resideInAPackage(SERVER + "..")
        .and()
        .resideOutsideOfPackage(room("observability"))
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.micrometer..", "io.opentelemetry..")
        .because("metrics and traces sit behind the execution listener and the request trace")
        .check(classes);
  }

  @Test
  void onlyTheRestRooms_importJavalinAndJetty() {
    noClasses()
        .that()
        .resideInAnyPackage(
            room("errors"),
            room("auth"),
            room("request"),
            room("config"),
            room("admission"),
            room("execution"),
            room("memory"),
            room("statistics"),
            room("engine"),
            room("control"),
            room("observability"),
            room("sharedmemory"),
            room("grpc"),
            room("metrics"))
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.javalin..", "org.eclipse.jetty..")
        .check(classes);
  }

  /**
   * The server and the repositories reach models through the model API and the {@code ModelBackend}
   * seam only: none of their classes uses ONNX Runtime or a backend's own classes, so a backend
   * plugs in without a change to them.
   */
  @Test
  void serverAndRepositories_useNoBackendsOwnClasses() {
    noClasses()
        .that()
        .resideInAPackage(SERVER + "..")
        .or()
        .resideInAPackage("dev.modelkeeper.onnx.remote..")
        .or()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.LocalModelRepository")
        .or()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.OverridingRepository")
        .or()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.ModelRepositories")
        .or()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.RepositoryModelRegistry")
        .or()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.TritonConfig")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("ai.onnxruntime..", "dev.modelkeeper.python..")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.OnnxModel")
        .check(classes);
  }

  @Test
  void onlyTheGrpcRoom_importsGrpcJava() {
    noClasses()
        .that()
        .resideInAPackage(SERVER + "..")
        .and()
        .resideOutsideOfPackages(room("grpc"))
        .and()
        .resideOutsideOfPackage(SERVER)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.grpc..")
        .check(classes);
  }

  @Test
  void roomsBelowTheTransports_useNoWireFormat() {
    noClasses()
        .that()
        .resideInAnyPackage(
            room("errors"),
            room("auth"),
            room("request"),
            room("config"),
            room("admission"),
            room("execution"),
            room("memory"),
            room("statistics"),
            room("engine"),
            room("control"),
            room("observability"),
            room("sharedmemory"))
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "com.fasterxml.jackson..", "com.google.protobuf..", "dev.modelkeeper.onnx.triton..")
        .check(classes);
  }

  @Test
  void transports_neverUseOneAnother() {
    for (String from : TRANSPORTS) {
      String[] others =
          TRANSPORTS.stream()
              .filter(t -> !t.equals(from))
              .map(ArchitectureTest::room)
              .toArray(String[]::new);
      noClasses()
          .that()
          .resideInAPackage(room(from))
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(others)
          .because("a transport maps its wire format to the engine and nothing else")
          .check(classes);
    }
  }

  @Test
  void grpc_usesNoRestOrJsonClass() {
    noClasses()
        .that()
        .resideInAPackage(room("grpc"))
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(room("http"), "com.fasterxml.jackson..")
        .check(classes);
  }

  @Test
  void transports_reachModelsOnlyThroughTheEngine() {
    String[] transports =
        Stream.concat(TRANSPORTS.stream(), Stream.of("http"))
            .map(ArchitectureTest::room)
            .toArray(String[]::new);
    noClasses()
        .that()
        .resideInAnyPackage(transports)
        .should()
        .dependOnClassesThat()
        .haveFullyQualifiedName("dev.modelkeeper.core.ModelManager")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("dev.modelkeeper.core.WithFixedSizeCache")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("dev.modelkeeper.core.ModelLease")
        .orShould()
        .dependOnClassesThat()
        .haveFullyQualifiedName("dev.modelkeeper.onnx.InferenceModel")
        .check(classes);
  }

  @Test
  void everyPackage_hasAPackageInfo_andEveryClassFitsInAReadersHead() throws IOException {
    Map<String, Integer> lines = new TreeMap<>();
    for (String module :
        List.of(
            "modelkeeper-core", "modelkeeper-onnx", "modelkeeper-python", "modelkeeper-server")) {
      Path sources = Path.of("..", module, "src/main/java");
      try (Stream<Path> files = Files.walk(sources)) {
        for (Path f :
            (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
          assertThat(f.resolveSibling("package-info.java"))
              .as("the package-info.java of the package of %s", f)
              .exists();
          lines.put(sources.relativize(f).toString(), Files.readAllLines(f).size());
        }
      }
    }
    assertThat(lines).as("classes of the library and the server").hasSizeGreaterThan(100);
    Map<String, Integer> over = new TreeMap<>(lines);
    over.values().removeIf(n -> n <= MAX_CLASS_LINES);
    assertThat(over).as("source files over %d lines", MAX_CLASS_LINES).isEmpty();
  }
}
