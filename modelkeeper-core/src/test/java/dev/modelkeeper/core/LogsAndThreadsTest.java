package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.modelkeeper.core.testkit.Async;
import dev.modelkeeper.core.testkit.Evictions;
import dev.modelkeeper.core.testkit.FakeTicker;
import dev.modelkeeper.core.testkit.LifecycleMonitor;
import dev.modelkeeper.core.testkit.LogCapture;
import dev.modelkeeper.core.testkit.TestModel;
import dev.modelkeeper.core.testkit.TestRegistry;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * What an operator sees: the library's log lines (debug trail of loads and removals, warnings for
 * failures it absorbs, leak reports) and the threads it starts (daemons, named, sweeping by
 * themselves).
 */
class LogsAndThreadsTest {

  private final TestRegistry registry = TestRegistry.of("a", "b", "c", "leaky");
  private final FakeTicker ticker = FakeTicker.manual();

  private BaseModelManager manager() {
    return new BaseModelManager(registry, ManagerOptions.builder().ticker(ticker).build());
  }

  @Test
  void debugLog_tracesLoadsAndRemovalsWithTheirCause() {
    registry.duringLoad(() -> ticker.advance(Duration.ofMillis(7)));
    BaseModelManager manager = manager();
    try (LogCapture log = LogCapture.of(BaseModelManager.class)) {
      manager.addModel("a", "key");
      manager.remove("never-loaded");
      manager.remove("a");
      manager.addModel("a", "key");
      Evictions.of(manager).evict("a", RemovalCause.COUNT_BUDGET);

      assertThat(log.messages(Level.FINE))
          .containsExactly(
              "loaded 'a' in 7 ms",
              "remove of 'never-loaded' ignored: not loaded",
              "removed 'a' (EXPLICIT)",
              "loaded 'a' in 7 ms",
              "removed 'a' (COUNT_BUDGET)");
      assertThat(log.messages(Level.WARNING)).isEmpty();
    }
  }

  @Test
  void failingListener_isLoggedWithItsException_andTheLifecycleGoesOn() {
    BaseModelManager manager = manager();
    manager.addListener(
        new LifecycleListener() {
          @Override
          public void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {
            throw new IllegalStateException("broken on loaded");
          }

          @Override
          public void loadFailed(String modelId, Throwable cause) {
            throw new IllegalStateException("broken on loadFailed");
          }

          @Override
          public void removed(String modelId, Model model, RemovalCause cause) {
            throw new IllegalStateException("broken on removed");
          }

          @Override
          public void idle(String modelId) {
            throw new IllegalStateException("broken on idle");
          }
        });
    registry.failNextLoads("b", 1);
    try (LogCapture log = LogCapture.of(BaseModelManager.class)) {
      manager.addModel("a", "key");
      assertThatThrownBy(() -> manager.addModel("b", "key")).isInstanceOf(ModelLoadException.class);
      manager.remove("a");

      assertThat(manager.contains("a")).isFalse();
      assertThat(registry.last("a").clears()).isEqualTo(1);
      assertThat(log.entries())
          .filteredOn(e -> e.level() == Level.WARNING)
          .extracting(
              e -> e.message() + (e.thrown() == null ? "" : " <- " + e.thrown().getMessage()))
          .containsExactly(
              "listener failed on loaded 'a' <- broken on loaded",
              "listener failed on idle of 'a' <- broken on idle",
              "listener failed on loadFailed 'b' <- broken on loadFailed",
              "cannot load 'b': loading 'b' failed: java.lang.Exception: injected constructor"
                  + " failure of 'b'",
              "listener failed on removed 'a' <- broken on removed");
    }
  }

  @Test
  void unservableModel_opensNoBackoffWindow_andIsWarnedOncePerStreak() {
    ModelUnservableException broken = new ModelUnservableException("a: bad file", null, false);
    registry.duringLoad(
        () -> {
          throw broken;
        });
    BaseModelManager manager = manager();
    try (LogCapture log = LogCapture.of(BaseModelManager.class)) {
      for (int i = 0; i < 5; i++) { // no time passes: a back-off window would still be open
        assertThatThrownBy(() -> manager.addModel("a", "key")).isSameAs(broken);
      }
      assertThat(registry.constructions("a")).isEqualTo(5); // each tried, none answered by a window
      assertThat(log.messages(Level.WARNING)).containsExactly("cannot load 'a': a: bad file");
    }
  }

  @Test
  void failedEviction_isLoggedWithTheClearCacheFailure() {
    registry.failFirstClears("a", 1);
    BaseModelManager manager = manager();
    manager.addModel("a", "key");
    try (LogCapture log = LogCapture.of(BaseModelManager.class)) {
      assertThat(Evictions.of(manager).evict("a", RemovalCause.COUNT_BUDGET))
          .isEqualTo(EvictionOutcome.FAILED);

      LogCapture.Entry warning = log.first(e -> e.level() == Level.WARNING);
      assertThat(warning.message())
          .isEqualTo("clearCache() of 'a' failed; the model stays registered");
      assertThat(warning.thrown()).hasMessageContaining("injected failure of a first clearCache()");
    }
  }

  @Test
  void budgetWrappingAManagerAlreadyOverIt_warns() {
    LifecycleMonitor monitor = new LifecycleMonitor();
    Map<String, Model> present = new LinkedHashMap<>();
    for (String id : new String[] {"a", "b", "c"}) {
      present.put(id, new TestModel(id, id, 10, monitor));
    }
    BaseModelManager populated = new BaseModelManager(registry, present, ManagerOptions.defaults());
    try (LogCapture log = LogCapture.of(WithFixedSizeCache.class)) {
      WithFixedSizeCache cache = new WithFixedSizeCache(populated, 2);
      assertThat(cache.usedSlots()).isEqualTo(3);
      assertThat(log.messages(Level.WARNING))
          .containsExactly(
              "starting over budget (maxSize=2): models 3/2 of which 0 loading, pinned []");
    }
    try (LogCapture log = LogCapture.of(WithFixedSizeCache.class)) {
      new WithFixedSizeCache(populated, 3);
      assertThat(log.entries()).isEmpty();
    }
  }

  @Test
  void loadLargerThanPredicted_warnsTrimsAndReleasesTheBudgetLock() throws Exception {
    registry.size("a", 60).size("b", 10).actualSize("b", 90);
    WithFixedSizeCache cache =
        new WithFixedSizeCache(
            manager(),
            CacheOptions.builder(5).maxBytes(100).lockTimeout(Duration.ofMillis(500)).build());
    cache.addModel("a", "key");
    try (LogCapture log = LogCapture.of(WithFixedSizeCache.class)) {
      cache.addModel("b", "key");
      assertThat(log.messages(Level.WARNING))
          .containsExactly("'b' is larger than predicted; evicting idle models to fit");
    }
    assertThat(cache.keys()).containsExactly("b");
    // the trimming thread left the budget's lock: another thread can read it
    assertThat(Async.call("reader", cache::usedBytes).join()).isEqualTo(90);
  }

  @Test
  void leakSweeper_reportsByItself_onANamedDaemonThread_withTheHeldTimeAndTaker() throws Exception {
    BaseModelManager manager =
        new BaseModelManager(
            registry,
            ManagerOptions.builder().ticker(ticker).leakThreshold(Duration.ofMillis(20)).build());
    try (LogCapture log = LogCapture.of(LeakDetector.class)) {
      ModelLease lease = manager.acquire("leaky", "key");
      ticker.advance(Duration.ofMillis(1500));
      LogCapture.Entry report =
          await()
              .atMost(10, TimeUnit.SECONDS)
              .until(
                  () ->
                      log.entries().stream()
                          .filter(e -> e.message().contains("'leaky'"))
                          .findFirst(),
                  found -> found.isPresent())
              .orElseThrow();

      assertThat(report.level()).isEqualTo(Level.WARNING);
      assertThat(report.message())
          .isEqualTo("possible lease leak: lease of 'leaky' open for 1500 ms");
      assertThat(report.thrown())
          .hasMessage("lease of 'leaky' taken by thread " + Thread.currentThread().getName());
      assertThat(report.thread().getName()).isEqualTo("modelkeeper-leak-detector");
      assertThat(report.thread().isDaemon()).isTrue();
      lease.close();
    }
  }

  @Test
  void acquireAsync_withTheDefaultExecutor_loadsOnANamedDaemonThread() throws Exception {
    AtomicReference<Thread> loader = new AtomicReference<>();
    registry.duringLoad(() -> loader.set(Thread.currentThread()));
    BaseModelManager manager = new BaseModelManager(registry);

    try (ModelLease lease = manager.acquireAsync("a", "key", null).get(10, TimeUnit.SECONDS)) {
      assertThat(lease.modelId()).isEqualTo("a");
    }
    assertThat(loader.get().getName()).startsWith("modelkeeper-acquire-");
    assertThat(loader.get().isDaemon()).isTrue();
  }

  @Test
  void acquireAsync_withoutAnId_failsTheFutureInsteadOfThrowing() {
    CompletableFuture<ModelLease> future = manager().acquireAsync(null, "key", null);
    assertThat(future).isCompletedExceptionally();
    assertThatThrownBy(future::join).hasCauseInstanceOf(NullPointerException.class);
  }

  @Test
  void leasesFromThreadsOfEveryStripe_allCloseSoRemoveDoesNotWait() throws Exception {
    BaseModelManager manager =
        new BaseModelManager(
            registry,
            ManagerOptions.builder().ticker(ticker).drainTimeout(Duration.ofMillis(200)).build());
    manager.addModel("a", "key");
    // one thread per lease-count stripe (thread IDs decide the stripe)
    Map<Integer, Thread> byStripe = new TreeMap<>();
    for (int i = 0; i < 10_000 && byStripe.size() < LifecycleEntry.STRIPES; i++) {
      Thread t =
          new Thread(
              () -> {
                try (ModelLease sync = manager.acquire("a", "key");
                    ModelLease async =
                        manager.acquireAsync("a", "key", null).get(10, TimeUnit.SECONDS)) {
                  assertThat(async.model()).isSameAs(sync.model());
                } catch (Exception e) {
                  throw new AssertionError(e);
                }
              });
      t.setDaemon(true);
      byStripe.putIfAbsent(LifecycleEntry.stripeOf(t.getId()), t);
    }
    assertThat(byStripe).hasSize(LifecycleEntry.STRIPES);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    for (Thread t : byStripe.values()) {
      t.setUncaughtExceptionHandler((th, e) -> failure.set(e));
      t.start();
      t.join(10_000);
      assertThat(t.isAlive()).isFalse();
    }
    assertThat(failure.get()).isNull();
    assertThat(manager.stats().activeLeases()).isZero();
    manager.remove("a"); // a lease counted but never handed out would time this out
    assertThat(manager.contains("a")).isFalse();
  }

  @Test
  void lease_toString_namesTheModelAndWhetherItIsClosed() {
    ModelLease lease = manager().acquire("a", "key");
    assertThat(lease).hasToString("ModelLease[a]");
    lease.close();
    assertThat(lease).hasToString("ModelLease[a, closed]");
  }
}
