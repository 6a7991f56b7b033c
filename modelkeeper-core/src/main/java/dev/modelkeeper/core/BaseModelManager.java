package dev.modelkeeper.core;

import static dev.modelkeeper.core.ModelState.DRAINING;
import static dev.modelkeeper.core.ModelState.LOADING;
import static dev.modelkeeper.core.ModelState.READY;
import static dev.modelkeeper.core.ModelState.UNLOADING;
import static java.lang.System.Logger.Level.DEBUG;
import static java.lang.System.Logger.Level.WARNING;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The lifecycle manager: keeps models resident by resolved identifier and serializes every load and
 * unload of one identifier. Thread-safe.
 *
 * <h2>State machine (one {@link LifecycleEntry} per resolved identifier and generation)</h2>
 *
 * <pre>
 *   absent --load--> LOADING --ok--> READY --remove--> DRAINING --leases drained--> UNLOADING
 *      ^               |               |  ^                |                          |   |
 *      |            failed             |  +--drain timeout-+                          |   |
 *      +---------------+               +--evict (no lease)--------------------------->+   |
 *      |                                           ^------ clearCache() threw ------------+
 *      +--------------------------------------------------- clearCache() returned --------+
 * </pre>
 *
 * Only the caller that moves an entry out of READY or out of absent performs the slow work of that
 * transition (construct, drain, clear); everyone else waits on the transition's future, bounded by
 * the lifecycle timeout, and then re-reads the state. Waiters of a load share its outcome, failure
 * included (single flight).
 *
 * <h2>Invariants</h2>
 *
 * <ol>
 *   <li>One lifecycle per identifier: a constructor or {@code clearCache()} runs only in LOADING or
 *       UNLOADING, and a phase is left only by the caller that entered it, so they never overlap.
 *   <li>One generation: an entry is created and reserved inside {@code entries.compute}, and
 *       retired there only when no caller holds a reservation ({@code refs == 0}) and it is absent.
 *       Every caller that may wait, hold or fail reserves first and releases in {@code finally}, so
 *       the entry it waits on is the one the next caller finds.
 *   <li>No global guard across slow work: the map's bin lock and the entry monitor are held for
 *       O(1) bookkeeping only; construction, clearing, listener calls and waits run with no lock.
 *   <li>Leases: the entry is open to leases only in READY; it closes (under the entry monitor)
 *       before a model is cleared, and a removal drains open leases first. A leased model is never
 *       cleared.
 *   <li>Events: listeners hear loading/loaded/loadFailed/removed while the announcing caller still
 *       owns the identifier's lifecycle, so a listener's view follows the registry exactly; a
 *       failed {@code clearCache()} publishes nothing.
 * </ol>
 *
 * <h2>Lock order</h2>
 *
 * Map bin of an identifier, then that identifier's entry monitor. Never the reverse, and never two
 * identifiers at once. Listeners (for example a budget's lock) are called with neither held.
 *
 * <h2>Hot path</h2>
 *
 * Leasing a READY model is a {@code ConcurrentHashMap.get}, an increment of the calling thread's
 * stripe of the entry's lease count and a read of its flags, a read of the recency clock (advanced
 * only when the model was not already the most recent) and the lease allocation; closing it is one
 * CAS on the lease and one decrement of the same stripe. No cache line is written by two threads
 * leasing the same model.
 */
public class BaseModelManager implements ModelManager {

  private static final System.Logger LOG = System.getLogger(BaseModelManager.class.getName());
  private static final AtomicInteger POOL_IDS = new AtomicInteger();

  private final ModelRegistry registry;
  private final Ticker ticker;
  private final long lifecycleTimeoutNanos;
  private final long drainTimeoutNanos;
  private final LoadFailures failures;
  private final LeakDetector leaks;
  private final Executor executor;

  private final ConcurrentHashMap<String, LifecycleEntry> entries = new ConcurrentHashMap<>();

  /**
   * The recency clock: a logical time that moves only when a model other than the most recently
   * used one is touched. Touching the most recently used model again reads it and writes nothing.
   */
  private final AtomicLong recency = new AtomicLong();

  private final List<LifecycleListener> listeners = new CopyOnWriteArrayList<>();

  private final LongAdder loads = new LongAdder();
  private final LongAdder loadFailures = new LongAdder();
  private final LongAdder loadNanos = new LongAdder();
  private final LongAdder removals = new LongAdder();
  private final LongAdder leaseWaits = new LongAdder();
  private final Map<RemovalCause, LongAdder> evictions = new EnumMap<>(RemovalCause.class);

  public BaseModelManager(ModelRegistry registry) {
    this(registry, Map.of(), ManagerOptions.defaults());
  }

  public BaseModelManager(ModelRegistry registry, Map<String, ? extends Model> models) {
    this(registry, models, ManagerOptions.defaults());
  }

  public BaseModelManager(ModelRegistry registry, ManagerOptions options) {
    this(registry, Map.of(), options);
  }

  /** A manager that starts with {@code models} resident (keys are resolved identifiers). */
  public BaseModelManager(
      ModelRegistry registry, Map<String, ? extends Model> models, ManagerOptions options) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.ticker = options.ticker();
    this.lifecycleTimeoutNanos = options.lifecycleTimeout().toNanos();
    this.drainTimeoutNanos = options.drainTimeout().toNanos();
    this.failures = new LoadFailures(ticker, options.failureBackoff(), options.maxFailureBackoff());
    this.leaks =
        options.leakThreshold().isZero()
            ? LeakDetector.DISABLED
            : new LeakDetector(ticker, options.leakThreshold());
    this.executor = options.executor() != null ? options.executor() : defaultExecutor();
    for (RemovalCause cause : RemovalCause.values()) {
      evictions.put(cause, new LongAdder());
    }
    models.forEach(this::install);
    if (leaks != LeakDetector.DISABLED) {
      leaks.sweepPeriodically();
    }
  }

  private void install(String id, Model model) {
    LifecycleEntry e = new LifecycleEntry(id);
    e.model = Objects.requireNonNull(model, "model of " + id);
    e.requestedId = id;
    e.sizeBytes = model.sizeBytes();
    e.lastUsed = recency.incrementAndGet();
    e.phase = READY;
    e.openLeases();
    entries.put(id, e);
  }

  // ---------------------------------------------------------------- adding and leasing

  @Override
  public void addModel(String modelId, String apiKey) {
    addModel(modelId, apiKey, null);
  }

  @Override
  public void addModel(String modelId, String apiKey, String modelIdAlias) {
    String id = resolve(modelId, modelIdAlias);
    obtain(id, modelId, apiKey, false);
  }

  @Override
  public ModelLease acquire(String modelId, String apiKey) {
    return acquire(modelId, apiKey, null);
  }

  @Override
  public ModelLease acquire(String modelId, String apiKey, String modelIdAlias) {
    String id = resolve(modelId, modelIdAlias);
    LifecycleEntry e = entries.get(id);
    int stripe = e == null ? LifecycleEntry.NO_LEASE : tryLease(e);
    return stripe >= 0 ? lease(e, stripe, false) : obtain(id, modelId, apiKey, true);
  }

  @Override
  public CompletableFuture<ModelLease> acquireAsync(
      String modelId, String apiKey, String modelIdAlias) {
    String id;
    try {
      id = resolve(modelId, modelIdAlias);
    } catch (RuntimeException bad) {
      return CompletableFuture.failedFuture(bad);
    }
    LifecycleEntry e = entries.get(id);
    int stripe = e == null ? LifecycleEntry.NO_LEASE : tryLease(e);
    if (stripe >= 0) {
      return CompletableFuture.completedFuture(lease(e, stripe, false));
    }
    return CompletableFuture.supplyAsync(() -> obtain(id, modelId, apiKey, true), executor);
  }

  /**
   * Tries the lock-free lease of {@code e}; returns its stripe or a negative value (no lease), and
   * passes on an idle report the attempt owes (it may have been the last to leave a draining
   * entry).
   */
  private int tryLease(LifecycleEntry e) {
    int stripe = e.tryLease();
    if (stripe == LifecycleEntry.REPORT_IDLE) {
      becameIdle(e);
    }
    return stripe;
  }

  /** Hands out the lease counted in {@code stripe} of {@code e}. */
  private Lease lease(LifecycleEntry e, int stripe, boolean waited) {
    if (waited) {
      leaseWaits.increment();
    }
    touch(e);
    Lease lease = new Lease(this, e, stripe, e.model);
    leaks.opened(lease);
    return lease;
  }

  /**
   * Records a use of {@code e}: exact LRU order, and no shared write when {@code e} is already the
   * most recent.
   */
  private void touch(LifecycleEntry e) {
    if (e.lastUsed != recency.get()) {
      e.lastUsed = recency.incrementAndGet();
    }
  }

  /** Called once per lease by {@link Lease#close()}. */
  void released(Lease lease) {
    leaks.closed(lease);
    if (lease.entry.releaseLease(lease.stripe)) {
      becameIdle(lease.entry);
    }
  }

  private void becameIdle(LifecycleEntry e) {
    CompletableFuture<Void> drained = null;
    synchronized (e) {
      // A report may be stale: it may come from before the current drain began, while a lease
      // taken since is still open. Complete the drain only if nothing is open now (no lease can be
      // granted while draining); otherwise ask again, so the closer of that lease reports.
      if (e.drained != null) {
        e.requestIdleReport();
        if (e.leases() == 0) {
          drained = e.drained;
          e.drained = null;
        }
      }
    }
    if (drained != null) {
      drained.complete(null);
    }
    announceIdle(e);
  }

  /**
   * Tells listeners that {@code e} may be evictable now: its last lease closed, or it entered READY
   * (a budget may have found it BUSY while it was loading, draining or unloading).
   */
  private void announceIdle(LifecycleEntry e) {
    for (LifecycleListener l : listeners) {
      try {
        l.idle(e.id);
      } catch (RuntimeException ex) {
        LOG.log(WARNING, "listener failed on idle of '" + e.id + "'", ex);
      }
    }
  }

  /**
   * The slow path of add and acquire: waits for transitions of the identifier, loads it when
   * absent, and returns a lease when asked for one (else null).
   */
  private Lease obtain(String id, String modelId, String apiKey, boolean wantLease) {
    LifecycleEntry e = reserve(id);
    try {
      long deadline = System.nanoTime() + lifecycleTimeoutNanos;
      boolean waited = false;
      for (; ; ) {
        if (wantLease) {
          // lock-free first: after a load, its waiting acquires do not queue on the monitor
          int stripe = tryLease(e);
          if (stripe >= 0) {
            return lease(e, stripe, waited);
          }
        }
        CompletableFuture<Void> transition;
        synchronized (e) {
          ModelState phase = e.phase;
          if (phase == READY) {
            if (!wantLease) {
              touch(e);
              return null;
            }
            // it became READY after the lock-free attempt; under the monitor READY means open
            int stripe = e.tryLease();
            if (stripe < 0) {
              throw new IllegalStateException("READY '" + id + "' is closed to leases");
            }
            return lease(e, stripe, waited);
          }
          if (phase == null) {
            failures.check(id);
            e.begin(LOADING, "load");
            transition = null;
          } else {
            transition = e.transition;
          }
        }
        if (transition == null) {
          return load(e, modelId, apiKey, wantLease);
        } else {
          waited = true;
          await(e, transition, deadline, true);
        }
      }
    } finally {
      release(e);
    }
  }

  /**
   * Constructs the model of {@code e}, which the caller moved to LOADING; returns a lease taken in
   * the same step that makes it READY when asked for one (else null), so nothing can evict it
   * between the load and the lease.
   */
  private Lease load(LifecycleEntry e, String modelId, String apiKey, boolean wantLease) {
    long start = ticker.read();
    Model model = null;
    long size = -1;
    RuntimeException failure = null;
    boolean announced = false;
    try {
      ModelFactory factory = registry.getModel(e.id, apiKey);
      if (factory == null) {
        throw new ModelNotFoundException("no model '" + e.id + "' in the registry");
      }
      long predicted = factory.predictedSizeBytes(modelId);
      announced = true;
      for (LifecycleListener l : listeners) {
        l.loading(e.id, predicted);
      }
      model = factory.create(modelId, apiKey);
      if (model == null) {
        throw new ModelLoadException("the factory of '" + e.id + "' returned null");
      }
      size = model.sizeBytes() >= 0 ? model.sizeBytes() : predicted;
    } catch (Throwable t) {
      failure = Failures.toUnchecked(t, "loading '" + e.id + "' failed");
    }
    long took = ticker.read() - start;
    if (failure == null) {
      for (LifecycleListener l : listeners) {
        try {
          l.loaded(e.id, model, size, took);
        } catch (RuntimeException ex) {
          LOG.log(WARNING, "listener failed on loaded '" + e.id + "'", ex);
        }
      }
    } else if (announced) {
      for (LifecycleListener l : listeners) {
        try {
          l.loadFailed(e.id, failure);
        } catch (RuntimeException ex) {
          LOG.log(WARNING, "listener failed on loadFailed '" + e.id + "'", ex);
        }
      }
    }
    CompletableFuture<Void> done;
    int stripe = LifecycleEntry.NO_LEASE;
    synchronized (e) {
      if (failure == null) {
        e.model = model;
        e.requestedId = modelId;
        e.sizeBytes = size;
        e.loadNanos = took;
        e.lastUsed = recency.incrementAndGet();
        done = e.end(READY);
        e.openLeases();
        if (wantLease && (stripe = e.tryLease()) < 0) {
          throw new IllegalStateException("READY '" + e.id + "' is closed to leases");
        }
      } else {
        done = e.end(null);
      }
    }
    if (failure == null) {
      loads.increment();
      loadNanos.add(took);
      failures.succeeded(e.id);
      LOG.log(DEBUG, () -> "loaded '" + e.id + "' in " + took / 1_000_000 + " ms");
      done.complete(null);
      announceIdle(e);
      return stripe >= 0 ? lease(e, stripe, false) : null;
    } else {
      if (!(failure instanceof ModelNotFoundException)) {
        loadFailures.increment();
      }
      failures.failed(e.id, failure);
      done.completeExceptionally(failure);
      throw failure;
    }
  }

  // ---------------------------------------------------------------- removing

  @Override
  public void remove(String modelId) {
    LifecycleEntry e = reserve(modelId);
    try {
      long deadline = System.nanoTime() + lifecycleTimeoutNanos;
      for (; ; ) {
        CompletableFuture<Void> transition = null;
        CompletableFuture<Void> drained = null;
        Model model = null;
        synchronized (e) {
          ModelState phase = e.phase;
          if (phase == null) {
            LOG.log(DEBUG, () -> "remove of '" + modelId + "' ignored: not loaded");
            return;
          }
          if (phase == READY) {
            e.begin(DRAINING, "remove");
            if (e.closeLeases() == 0) {
              e.phase = UNLOADING;
              model = e.model;
            } else {
              drained = new CompletableFuture<>();
              e.drained = drained;
              e.requestIdleReport();
              if (e.leases() == 0) {
                // the last lease closed between closing the word and asking for the report
                e.drained = null;
                drained = null;
                e.phase = UNLOADING;
                model = e.model;
              }
            }
          } else {
            transition = e.transition;
          }
        }
        if (transition != null) {
          await(e, transition, deadline, false);
          continue;
        }
        if (drained != null) {
          model = drain(e, drained);
        }
        unload(e, model, RemovalCause.EXPLICIT);
        return;
      }
    } finally {
      release(e);
    }
  }

  /** Waits for the leases of a DRAINING entry; reopens it and throws on timeout or interrupt. */
  private Model drain(LifecycleEntry e, CompletableFuture<Void> drained) {
    RuntimeException failure;
    try {
      drained.get(drainTimeoutNanos, TimeUnit.NANOSECONDS);
      failure = null;
    } catch (TimeoutException timeout) {
      failure =
          new LeaseDrainTimeoutException(
              "remove of '"
                  + e.id
                  + "' timed out after "
                  + Duration.ofNanos(drainTimeoutNanos)
                  + " waiting for "
                  + e.leases()
                  + " open lease(s) to close; the model stays registered and leasable");
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      failure =
          new LifecycleInterruptedException(
              "interrupted while remove of '" + e.id + "' waited for leases to close");
    } catch (ExecutionException impossible) {
      throw new IllegalStateException(impossible);
    }
    CompletableFuture<Void> reopened = null;
    Model model;
    synchronized (e) {
      if (failure != null && e.drained == drained) {
        e.drained = null;
        reopened = e.end(READY);
        e.openLeases();
        model = null;
      } else {
        // drained (possibly just as the wait gave up): proceed to clear
        e.phase = UNLOADING;
        model = e.model;
      }
    }
    if (reopened != null) {
      reopened.complete(null);
      announceIdle(e);
      throw failure;
    }
    return model;
  }

  @Override
  public EvictionOutcome evictIfIdle(String modelId, RemovalCause cause) {
    LifecycleEntry e = reserve(modelId);
    try {
      Model model;
      synchronized (e) {
        if (e.phase == null) {
          return EvictionOutcome.ABSENT;
        }
        if (e.phase != READY || !e.closeIfIdle()) {
          return EvictionOutcome.BUSY;
        }
        e.begin(UNLOADING, "evict");
        model = e.model;
      }
      try {
        unload(e, model, cause);
        return EvictionOutcome.EVICTED;
      } catch (ModelUnloadException failed) {
        LOG.log(WARNING, failed.getMessage(), failed.getCause());
        return EvictionOutcome.FAILED;
      }
    } finally {
      release(e);
    }
  }

  /** Clears the model of an UNLOADING entry; on failure it returns to READY where it was. */
  private void unload(LifecycleEntry e, Model model, RemovalCause cause) {
    Throwable failure = null;
    try {
      model.clearCache();
    } catch (Throwable t) {
      failure = t;
    }
    if (failure == null) {
      for (LifecycleListener l : listeners) {
        try {
          l.removed(e.id, model, cause);
        } catch (RuntimeException ex) {
          LOG.log(WARNING, "listener failed on removed '" + e.id + "'", ex);
        }
      }
    }
    CompletableFuture<Void> done;
    synchronized (e) {
      if (failure == null) {
        e.model = null;
        e.sizeBytes = -1;
        done = e.end(null);
      } else {
        done = e.end(READY);
        e.openLeases();
      }
    }
    done.complete(null);
    if (failure != null) {
      announceIdle(e);
      if (failure instanceof Error) {
        throw (Error) failure;
      }
      if (failure instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ModelUnloadException(
          "clearCache() of '" + e.id + "' failed; the model stays registered", failure);
    }
    (cause.isEviction() ? evictions.get(cause) : removals).increment();
    LOG.log(DEBUG, () -> "removed '" + e.id + "' (" + cause + ")");
  }

  @Override
  public void clear() {
    List<RuntimeException> failed = new ArrayList<>();
    for (String id : keys()) {
      try {
        remove(id);
      } catch (RuntimeException ex) {
        failed.add(ex);
      }
    }
    if (!failed.isEmpty()) {
      ModelUnloadException ex =
          new ModelUnloadException(
              "clear() left "
                  + failed.size()
                  + " model(s) registered: "
                  + failed.get(0).getMessage(),
              failed.get(0));
      failed.stream().skip(1).forEach(ex::addSuppressed);
      throw ex;
    }
  }

  // ---------------------------------------------------------------- queries

  @Override
  public boolean contains(String modelId) {
    LifecycleEntry e = entries.get(modelId);
    return e != null && e.model != null;
  }

  @Override
  public Model get(String modelId) {
    LifecycleEntry e = entries.get(modelId);
    Model m = e == null ? null : e.model;
    if (m == null) {
      throw new ModelNotLoadedException("model '" + modelId + "' is not loaded");
    }
    return m;
  }

  @Override
  public Set<String> keys() {
    Set<String> keys = new HashSet<>();
    for (LifecycleEntry e : entries.values()) {
      if (e.model != null) {
        keys.add(e.id);
      }
    }
    return keys;
  }

  @Override
  public int size() {
    int n = 0;
    for (LifecycleEntry e : entries.values()) {
      if (e.model != null) {
        n++;
      }
    }
    return n;
  }

  @Override
  public List<ModelDescription> describeModels() {
    List<ModelDescription> out = new ArrayList<>();
    for (LifecycleEntry e : entries.values()) {
      synchronized (e) {
        if (e.phase != null) {
          out.add(
              new ModelDescription(
                  e.id, e.requestedId, e.phase, e.sizeBytes, e.leases(), e.lastUsed, e.loadNanos));
        }
      }
    }
    return out;
  }

  @Override
  public void addListener(LifecycleListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  @Override
  public ManagerStats stats() {
    int resident = 0;
    long bytes = 0;
    long leases = 0;
    for (LifecycleEntry e : entries.values()) {
      if (e.model != null) {
        resident++;
        bytes += Math.max(0, e.sizeBytes);
      }
      leases += e.leases();
    }
    Map<RemovalCause, Long> evicted = new EnumMap<>(RemovalCause.class);
    evictions.forEach(
        (cause, n) -> {
          if (cause.isEviction()) {
            evicted.put(cause, n.sum());
          }
        });
    return new ManagerStats(
        loads.sum(),
        loadFailures.sum(),
        loadNanos.sum(),
        removals.sum(),
        evicted,
        leaseWaits.sum(),
        0,
        0,
        resident,
        bytes,
        leases);
  }

  /** Reports leases held past the leak threshold (once each); returns their model IDs. */
  public List<String> detectLeaks() {
    return leaks.sweep();
  }

  /**
   * Diagnostic: identifiers that have a lifecycle entry now, in use or not (nothing leaks when
   * idle).
   */
  public Set<String> lifecycleTable() {
    return Set.copyOf(entries.keySet());
  }

  /**
   * Diagnostic: callers now reserving the lifecycle of {@code modelId} (holder and waiters), 0 when
   * it has no entry.
   */
  public int reservations(String modelId) {
    LifecycleEntry e = entries.get(modelId);
    return e == null ? 0 : e.refs;
  }

  // ---------------------------------------------------------------- generations

  private LifecycleEntry reserve(String id) {
    return entries.compute(
        id,
        (k, e) -> {
          LifecycleEntry g = e == null ? new LifecycleEntry(k) : e;
          g.refs++;
          return g;
        });
  }

  private void release(LifecycleEntry e) {
    entries.computeIfPresent(
        e.id,
        (k, g) -> {
          if (g != e) {
            throw new IllegalStateException("generation of '" + k + "' replaced while reserved");
          }
          return --g.refs == 0 && g.phase == null ? null : g;
        });
  }

  private void await(
      LifecycleEntry e, CompletableFuture<Void> transition, long deadline, boolean shareFailure) {
    try {
      transition.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException timeout) {
      throw lifecycleTimeout(e);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new LifecycleInterruptedException(
          "interrupted while waiting for the lifecycle of '" + e.id + "'");
    } catch (ExecutionException failed) {
      if (shareFailure) {
        Throwable cause = failed.getCause();
        if (cause instanceof Error) {
          throw (Error) cause;
        }
        throw (RuntimeException) cause;
      }
    }
  }

  private LockTimeoutException lifecycleTimeout(LifecycleEntry e) {
    String holder;
    synchronized (e) {
      holder = e.holder;
    }
    return new LockTimeoutException(
        "timed out after "
            + Duration.ofNanos(lifecycleTimeoutNanos)
            + " waiting for the lifecycle of '"
            + e.id
            + "' (holder: "
            + holder
            + ", waiters: "
            + Math.max(0, e.refs - 1)
            + ", leases: "
            + e.leases()
            + ")");
  }

  private static String resolve(String modelId, String modelIdAlias) {
    Objects.requireNonNull(modelId, "modelId");
    return modelIdAlias != null ? modelIdAlias : modelId;
  }

  private static Executor defaultExecutor() {
    return Executors.newCachedThreadPool(
        r -> {
          Thread t = new Thread(r, "modelkeeper-acquire-" + POOL_IDS.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }
}
