package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestRegistry;
import org.junit.jupiter.api.Test;

/** The typed identity: built once, leased and loaded under its resolved ID through every layer. */
class ModelKeyTest {

  private final TestRegistry registry = TestRegistry.of("a", "x");
  private final BaseModelManager base = new BaseModelManager(registry);
  private final WithFixedSizeCache cache =
      new WithFixedSizeCache(new ModelManagerDecorator(base) {}, 4);

  @Test
  void acquireByKey_withAlias_registersUnderTheAlias_andBuildsFromTheId() throws Exception {
    ModelKey key = ModelKey.of("a", "x");
    try (ModelLease lease = cache.acquire(key)) {
      assertThat(lease.modelId()).isEqualTo("x");
    }
    cache.addModel(ModelKey.of("a"));
    assertThat(cache.acquireAsync(key).get().modelId()).isEqualTo("x");
    assertThat(cache.keys()).containsExactlyInAnyOrder("a", "x");
    assertThat(registry.requestedIds()).containsExactly("a", "a");
    assertThat(base.acquire(key).modelId()).isEqualTo("x");
  }

  @Test
  void key_valueSemantics() {
    assertThat(ModelKey.of("a", "x"))
        .isEqualTo(ModelKey.of("a", "x"))
        .hasSameHashCodeAs(ModelKey.of("a", "x"));
    assertThat(ModelKey.of("a")).isNotEqualTo(ModelKey.of("a", "x")).isNotEqualTo(ModelKey.of("b"));
    assertThat(ModelKey.of("a", "x").resolvedId()).isEqualTo("x");
    assertThat(ModelKey.of("a").resolvedId()).isEqualTo("a");
    assertThat(ModelKey.of("a").alias()).isNull();
    assertThat(ModelKey.of("a", "x")).hasToString("a as x");
    assertThat(ModelKey.of("a")).hasToString("a");
    assertThatThrownBy(() -> ModelKey.of(null, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("modelId");
  }

  @Test
  void diagnostics_ofTheBase_countSlotsAndBytesOfResidentModels() {
    registry.size("a", 10);
    base.addModel("a", null);
    assertThat(base.diagnostics().usedSlots()).isEqualTo(1);
    assertThat(base.diagnostics().usedBytes()).isEqualTo(10);
    assertThat(base.diagnostics().pinned()).isEmpty();
    assertThat(cache.diagnostics().lifecycleTable()).containsExactly("a");
    assertThat(cache.diagnostics().reservations("a")).isZero();
    assertThat(Invariants.check(cache, base, cache, registry)).isEmpty();
  }
}
