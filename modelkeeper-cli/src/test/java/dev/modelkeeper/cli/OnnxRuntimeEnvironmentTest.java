package dev.modelkeeper.cli;

import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.type;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import ai.onnxruntime.OrtEnvironment;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import org.junit.jupiter.api.Test;

/**
 * ONNX Runtime's environment is created in one place, {@link OnnxRuntimeState#environment()}: its
 * native log reaches the server's log only when it is created there first, so no other code of the
 * server (core, onnx, server, demo, cli) asks ONNX Runtime's Java API for it.
 */
class OnnxRuntimeEnvironmentTest {

  @Test
  void onlyOnnxRuntimeState_createsOnnxRuntimesEnvironment() {
    noClasses()
        .that()
        .doNotHaveFullyQualifiedName(OnnxRuntimeState.class.getName() + "$Environment")
        .should()
        .callMethodWhere(
            target(name("getEnvironment")).and(target(owner(type(OrtEnvironment.class)))))
        .because("OnnxRuntimeState.environment() creates it with ONNX Runtime's log routed")
        .check(
            new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                .importPackages("dev.modelkeeper"));
  }
}
