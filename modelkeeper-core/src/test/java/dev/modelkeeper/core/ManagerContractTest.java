package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.Gate;
import dev.modelkeeper.core.testkit.Invariants;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * One contract, run against every composition of managers: the base manager, a transparent
 * decorator, the budget, and the budget over a decorator over the base.
 */
class ManagerContractTest {

  @Nested
  class Base extends Contract {
    @Override
    ModelManager wrap(BaseModelManager base) {
      return base;
    }
  }

  @Nested
  class TransparentDecorator extends Contract {
    @Override
    ModelManager wrap(BaseModelManager base) {
      return new ModelManagerDecorator(base) {};
    }
  }

  @Nested
  class FixedSizeCache extends Contract {
    @Override
    ModelManager wrap(BaseModelManager base) {
      cache = new WithFixedSizeCache(base, 8);
      return cache;
    }
  }

  @Nested
  class NestedComposition extends Contract {
    @Override
    ModelManager wrap(BaseModelManager base) {
      cache = new WithFixedSizeCache(new ModelManagerDecorator(base) {}, 8);
      return cache;
    }
  }

  abstract static class Contract {
    final TestRegistry registry = TestRegistry.of("a", "b", "c");
    BaseModelManager base;
    WithFixedSizeCache cache;
    ModelManager manager;

    abstract ModelManager wrap(BaseModelManager base);

    @BeforeEach
    void setUp() {
      base =
          new BaseModelManager(
              registry,
              ManagerOptions.builder()
                  .ticker(FakeTicker.autoAdvancing())
                  .failureBackoff(Duration.ZERO, Duration.ZERO)
                  .build());
      manager = wrap(base);
    }

    @AfterEach
    void invariantsHold() {
      assertThat(Invariants.check(manager, base, cache, registry)).isEmpty();
    }

    @Test
    void addModel_cold_constructsOnceAndRegisters() {
      manager.addModel("a", "key");

      assertThat(manager.contains("a")).isTrue();
      assertThat(manager.keys()).containsExactly("a");
      assertThat(manager.size()).isEqualTo(1);
      assertThat(manager.get("a")).isSameAs(registry.last("a"));
      assertThat(registry.constructions("a")).isEqualTo(1);
    }

    @Test
    void addModel_warm_doesNotConstructAgain() {
      manager.addModel("a", "key");
      manager.addModel("a", "key");

      assertThat(registry.constructions("a")).isEqualTo(1);
    }

    @Test
    void addModel_withAlias_registersUnderAliasAndBuildsFromModelId() {
      registry.add("alias");

      manager.addModel("a", "key", "alias");

      assertThat(manager.keys()).containsExactly("alias");
      assertThat(manager.contains("a")).isFalse();
      assertThat(registry.lookups()).containsExactly("alias");
      assertThat(registry.requestedIds()).containsExactly("a");
      assertThat(manager.describeModels())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.modelId()).isEqualTo("alias");
                assertThat(d.requestedModelId()).isEqualTo("a");
                assertThat(d.state()).isEqualTo(ModelState.READY);
              });
    }

    @Test
    void addModel_unknownId_throwsModelNotFoundAndLeavesNoTrace() {
      assertThatThrownBy(() -> manager.addModel("nope", "key"))
          .isInstanceOf(ModelNotFoundException.class)
          .hasMessageContaining("nope");

      assertThat(manager.keys()).isEmpty();
      assertThat(base.lifecycleTable()).isEmpty();
    }

    @Test
    void addModel_constructorThrowsChecked_wrapsInModelLoadExceptionWithCause() {
      registry.failNextLoads("a", 1);

      assertThatThrownBy(() -> manager.addModel("a", "key"))
          .isInstanceOf(ModelLoadException.class)
          .hasRootCauseMessage("injected constructor failure of 'a'");
      assertThat(manager.contains("a")).isFalse();
      assertThat(base.lifecycleTable()).isEmpty();
    }

    @Test
    void get_absent_throwsModelNotLoaded() {
      assertThatThrownBy(() -> manager.get("a"))
          .isInstanceOf(ModelNotLoadedException.class)
          .hasMessageContaining("'a'");
    }

    @Test
    void remove_absent_isNoOp() {
      manager.remove("a");

      assertThat(manager.keys()).isEmpty();
      assertThat(base.lifecycleTable()).isEmpty();
    }

    @Test
    void remove_loaded_clearsOnceAndUnregisters() {
      manager.addModel("a", "key");
      TestModel a = registry.last("a");

      manager.remove("a");

      assertThat(manager.contains("a")).isFalse();
      assertThat(a.clears()).isEqualTo(1);
      assertThat(base.lifecycleTable()).isEmpty();
    }

    @Test
    void remove_whenClearCacheThrows_keepsModelRegistered() {
      manager.addModel("a", "key");
      registry.last("a").failClearWith(new IllegalStateException("boom"));

      assertThatThrownBy(() -> manager.remove("a"))
          .isInstanceOf(ModelUnloadException.class)
          .hasMessageContaining("'a'")
          .hasRootCauseMessage("boom");

      assertThat(manager.contains("a")).isTrue();
      assertThat(manager.get("a")).isSameAs(registry.last("a"));
      registry.last("a").failClearWith(null);
    }

    @Test
    void clear_withOneFailingClearCache_removesTheOthersAndReports() {
      manager.addModel("a", "key");
      manager.addModel("b", "key");
      manager.addModel("c", "key");
      registry.last("b").failClearWith(new IllegalStateException("stuck"));

      assertThatThrownBy(manager::clear)
          .isInstanceOf(ModelUnloadException.class)
          .hasMessageContaining("1 model(s)")
          .hasMessageContaining("'b'");

      assertThat(manager.keys()).containsExactly("b");
      assertThat(registry.last("a").clears()).isEqualTo(1);
      assertThat(registry.last("c").clears()).isEqualTo(1);
      registry.last("b").failClearWith(null);
    }

    @Test
    void acquire_cold_loadsAndLeasesUnderResolvedId() {
      registry.add("alias");
      try (ModelLease lease = manager.acquire("a", "key", "alias")) {
        assertThat(lease.modelId()).isEqualTo("alias");
        assertThat(lease.model()).isSameAs(registry.last("alias"));
        assertThat(manager.stats().activeLeases()).isEqualTo(1);
      }
      assertThat(manager.stats().activeLeases()).isZero();
    }

    @Test
    void leaseClose_calledTwice_releasesOnce() {
      ModelLease first = manager.acquire("a", "key");
      ModelLease second = manager.acquire("a", "key");

      first.close();
      first.close();

      assertThat(manager.stats().activeLeases()).isEqualTo(1);
      second.close();
      assertThat(manager.stats().activeLeases()).isZero();
    }

    @Test
    void addModel_concurrentColdCalls_constructOnce() throws Exception {
      Gate gate = new Gate();
      registry.pauseNextLoad("a", gate);
      List<Async<Void>> callers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        callers.add(Async.run("add-" + i, () -> manager.addModel("a", "key")));
      }
      gate.awaitEntered();
      Awaitility.await().until(() -> base.reservations("a") == 4);
      gate.open();
      for (Async<Void> c : callers) {
        c.join();
      }

      assertThat(registry.constructions("a")).isEqualTo(1);
      assertThat(manager.keys()).isEqualTo(Set.of("a"));
      if (cache != null) {
        assertThat(cache.lruOrder()).containsExactly("a");
      }
    }

    @Test
    void addModel_loadFailsWithJoiners_allSeeTheSameFailureAndOneConstructorRan() throws Exception {
      Gate gate = new Gate();
      registry.pauseNextLoad("a", gate).failNextLoads("a", 1);
      Async<Void> loader = Async.run("loader", () -> manager.addModel("a", "key"));
      gate.awaitEntered();
      Async<Void> joiner1 = Async.run("joiner-1", () -> manager.addModel("a", "key"));
      Async<ModelLease> joiner2 = Async.call("joiner-2", () -> manager.acquire("a", "key"));
      Awaitility.await().until(() -> base.reservations("a") == 3);
      gate.open();

      Throwable f0 = loader.joinFailure();
      assertThat(f0).isInstanceOf(ModelLoadException.class);
      assertThat(joiner1.joinFailure()).isSameAs(f0);
      assertThat(joiner2.joinFailure()).isSameAs(f0);
      assertThat(registry.constructions("a")).isEqualTo(1);
      assertThat(base.lifecycleTable()).isEmpty();

      manager.addModel("a", "key"); // a later call retries (back-off disabled here)
      assertThat(registry.constructions("a")).isEqualTo(2);
    }

    @Test
    void describeModels_whileLoading_reportsLoadingState() throws Exception {
      Gate gate = new Gate();
      registry.pauseNextLoad("a", gate);
      Async<Void> loader = Async.run("loader", () -> manager.addModel("a", "key"));
      gate.awaitEntered();

      assertThat(manager.describeModels())
          .extracting(ModelDescription::state)
          .containsExactly(ModelState.LOADING);
      assertThat(manager.contains("a")).isFalse();
      gate.open();
      loader.join();
      assertThat(manager.describeModels())
          .extracting(ModelDescription::state)
          .containsExactly(ModelState.READY);
    }
  }
}
