package dev.modelkeeper.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layering the package map in README and {@code docs/ARCHITECTURE.md} states: core needs only
 * the JDK; the engine needs no transport and no wire library; each transport reaches the models
 * through the engine and never uses another transport; the REST transports share the HTTP plumbing
 * of {@code server.http}, which gRPC does not use.
 */
class ArchitectureTest {

  private static final String CORE = "dev.modelkeeper.core..";
  private static final String ENGINE = "dev.modelkeeper.server.engine..";
  private static final String MEMORY = "dev.modelkeeper.server.memory..";
  private static final String HTTP = "dev.modelkeeper.server.http..";
  private static final String OIP = "dev.modelkeeper.server.oip..";
  private static final String MANAGEMENT = "dev.modelkeeper.server.management..";
  private static final String REPOSITORY = "dev.modelkeeper.server.repository..";
  private static final String GRPC = "dev.modelkeeper.server.grpc..";
  private static final String STATUS = "dev.modelkeeper.server.status..";
  private static final String DOCS = "dev.modelkeeper.server.docs..";

  /** The libraries that carry a wire format or a transport. */
  private static final String[] WIRE = {
    "io.javalin..",
    "org.eclipse.jetty..",
    "io.grpc..",
    "com.fasterxml.jackson..",
    "com.google.protobuf..",
    "dev.modelkeeper.onnx.triton.."
  };

  private static final List<String> TRANSPORTS =
      List.of(OIP, MANAGEMENT, REPOSITORY, GRPC, STATUS, DOCS);

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

  @Test
  void core_needsOnlyTheJdk() {
    classes()
        .that()
        .resideInAPackage(CORE)
        .should()
        .onlyDependOnClassesThat()
        // @GuardedBy and friends: annotations for the compiler's checks, not needed at run time
        .resideInAnyPackage(CORE, "java..", "com.google.errorprone.annotations..")
        .check(classes);
  }

  @Test
  void engine_usesNoTransportAndNoWireLibrary() {
    ArchRule rule =
        noClasses()
            .that()
            .resideInAnyPackage(ENGINE, MEMORY)
            .should()
            .dependOnClassesThat()
            .resideInAnyPackage(
                concat(
                    WIRE,
                    HTTP,
                    OIP,
                    MANAGEMENT,
                    REPOSITORY,
                    GRPC,
                    STATUS,
                    DOCS,
                    "dev.modelkeeper.server"));
    rule.check(classes);
  }

  @Test
  void transports_neverUseOneAnother() {
    for (String from : TRANSPORTS) {
      String[] others = TRANSPORTS.stream().filter(t -> !t.equals(from)).toArray(String[]::new);
      noClasses()
          .that()
          .resideInAPackage(from)
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
        .resideInAPackage(GRPC)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(HTTP, "io.javalin..", "org.eclipse.jetty..", "com.fasterxml.jackson..")
        .check(classes);
  }

  @Test
  void rest_usesNoGrpcClass() {
    noClasses()
        .that()
        .resideInAnyPackage(HTTP, OIP, MANAGEMENT, REPOSITORY, STATUS, DOCS)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(GRPC, "io.grpc..")
        .check(classes);
  }

  @Test
  void httpPlumbing_servesTheRestTransports_withoutKnowingThem() {
    noClasses()
        .that()
        .resideInAPackage(HTTP)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            OIP, MANAGEMENT, REPOSITORY, GRPC, STATUS, DOCS, "dev.modelkeeper.server")
        .check(classes);
  }

  @Test
  void transports_reachModelsOnlyThroughTheEngine() {
    noClasses()
        .that()
        .resideInAnyPackage(HTTP, OIP, MANAGEMENT, REPOSITORY, GRPC, STATUS, DOCS)
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

  private static String[] concat(String[] first, String... rest) {
    String[] all = new String[first.length + rest.length];
    System.arraycopy(first, 0, all, 0, first.length);
    System.arraycopy(rest, 0, all, first.length, rest.length);
    return all;
  }
}
