package dev.modelkeeper.core;

import static dev.modelkeeper.core.ModelState.DRAINING;
import static dev.modelkeeper.core.ModelState.LOADING;
import static dev.modelkeeper.core.ModelState.READY;
import static dev.modelkeeper.core.ModelState.UNLOADING;
import static java.lang.System.Logger.Level.DEBUG;
import static java.lang.System.Logger.Level.WARNING;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
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
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

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
 *   <li>Recency: the LRU order ({@link AccessOrder}) holds exactly the entries whose model is
 *       registered: linked by the loading caller before any policy hears {@code loaded} (so before
 *       the entry becomes READY), unlinked by the unloading caller once {@code clearCache()}
 *       returned and every policy heard {@code removed}. So whatever a policy counts as resident is
 *       listed by {@link Residents#leastRecentFirst} (an entry listed outside that span is LOADING
 *       or UNLOADING and evicts as BUSY). Reads reach it through the lossy {@link ReadBuffer},
 *       drained under {@link #evictionLock} before every victim choice and snapshot, so victims are
 *       exact LRU over the recorded reads; a lost read costs accuracy only.
 * </ol>
 *
 * <h2>Lock order</h2>
 *
 * Map bin of an identifier, then that identifier's entry monitor. Never the reverse, and never two
 * identifiers at once. The eviction lock is a leaf: held only to drain the read buffer and to edit
 * or copy the LRU order, with no other lock taken and nothing called inside. Policies and listeners
 * (for example a budget's lock) are called with none of these held.
 *
 * <h2>Hot path</h2>
 *
 * Leasing a READY model is a {@code ConcurrentHashMap.get}, an increment of the calling thread's
 * stripe of the entry's lease count and a read of its flags, a plain store of the entry into the
 * calling thread's stripe of the read buffer (a drain under {@code tryLock} when that stripe is
 * full) and the lease allocation; closing it is one CAS on the lease and one decrement of the same
 * stripe. No word shared by all threads or all models is written: two threads leasing any models
 * write different cache lines.
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
  private final Residents residents = new ResidentModels();

  private final ConcurrentHashMap<String, LifecycleEntry> entries = new ConcurrentHashMap<>();

  /** Guards {@link #order} and drains {@link #reads}; a leaf lock (see the header). */
  private final ReentrantLock evictionLock = new ReentrantLock();

  /** The registered entries, least recently used first. */
  @GuardedBy("evictionLock")
  private final AccessOrder order = new AccessOrder();

  private final ReadBuffer reads =
      new ReadBuffer(ReadBuffer.stripesForProcessors(Runtime.getRuntime().availableProcessors()));

  private final List<ResidencyPolicy> policies = new CopyOnWriteArrayList<>();
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
    synchronized (e) { // not yet shared; the lock states whose fields these are
      e.model = Objects.requireNonNull(model, "model of " + id);
      e.requestedId = id;
      e.sizeBytes = model.sizeBytes();
    }
    link(e);
    e.phase = READY;
    e.openLeases();
    entries.put(id, e);
  }

  // ---------------------------------------------------------------- adding and leasing

  @Override
  public void addModel(String modelId, @Nullable String apiKey) {
    addModel(modelId, apiKey, null);
  }

  /** Builds the key and delegates; {@code apiKey} is ignored. */
  @Override
  public void addModel(String modelId, @Nullable String apiKey, @Nullable String modelIdAlias) {
    addModel(ModelKey.of(modelId, modelIdAlias));
  }

  @Override
  public void addModel(ModelKey key) {
    obtain(key, false);
  }

  @Override
  public ModelLease acquire(String modelId, @Nullable String apiKey) {
    return acquire(modelId, apiKey, null);
  }

  /**
   * As {@link #acquire(ModelKey)}; the key is built only when the model is not leasable at once.
   */
  @Override
  public ModelLease acquire(
      String modelId, @Nullable String apiKey, @Nullable String modelIdAlias) {
    Objects.requireNonNull(modelId, "modelId");
    LifecycleEntry e = entries.get(modelIdAlias != null ? modelIdAlias : modelId);
    int stripe = e == null ? LifecycleEntry.NO_LEASE : tryLease(e);
    if (e != null && stripe >= 0) {
      return lease(e, stripe);
    }
    return lease(obtainLeased(ModelKey.of(modelId, modelIdAlias)), callersStripe());
  }

  @Override
  public ModelLease acquire(ModelKey key) {
    LifecycleEntry e = entries.get(key.resolvedId());
    int stripe = e == null ? LifecycleEntry.NO_LEASE : tryLease(e);
    if (e != null && stripe >= 0) {
      return lease(e, stripe);
    }
    return lease(obtainLeased(key), callersStripe());
  }

  /** Builds the key and delegates; {@code apiKey} is ignored. */
  @Override
  public CompletableFuture<ModelLease> acquireAsync(
      String modelId, @Nullable String apiKey, @Nullable String modelIdAlias) {
    ModelKey key;
    try {
      key = ModelKey.of(modelId, modelIdAlias);
    } catch (RuntimeException bad) {
      return CompletableFuture.failedFuture(bad);
    }
    return acquireAsync(key);
  }

  @Override
  public CompletableFuture<ModelLease> acquireAsync(ModelKey key) {
    LifecycleEntry e = entries.get(key.resolvedId());
    int stripe = e == null ? LifecycleEntry.NO_LEASE : tryLease(e);
    if (e != null && stripe >= 0) {
      return CompletableFuture.completedFuture(lease(e, stripe));
    }
    return CompletableFuture.supplyAsync(() -> lease(obtainLeased(key), callersStripe()), executor);
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

  /**
   * Hands out the lease counted in {@code stripe} of {@code e}. Every acquire ends here, after its
   * fast and slow paths have joined: with one allocation site, and leak detection off, the compiler
   * can replace a lease that does not leave the caller's frame by its fields.
   */
  private Lease lease(LifecycleEntry e, int stripe) {
    recordRead(e);
    return leaks.open(this, e, stripe, Objects.requireNonNull(e.model, "a leased entry's model"));
  }

  /** The stripe in which the slow path ({@link #obtain}) counts the lease it takes. */
  private static int callersStripe() {
    return LifecycleEntry.stripeOf(Thread.currentThread().getId());
  }

  /**
   * Records a use of {@code e} in the calling thread's stripe of the read buffer. When the stripe
   * is full, drains that stripe if the eviction lock is free at once, else drops the read.
   */
  private void recordRead(LifecycleEntry e) {
    int s = reads.stripe();
    if (!reads.offer(s, e.node.serial)) {
      drainFullStripe(s, e);
    }
  }

  /** Drains stripe {@code s} and records {@code e} if the eviction lock is free at once. */
  private void drainFullStripe(int s, LifecycleEntry e) {
    if (evictionLock.tryLock()) {
      try {
        long now = ticker.read();
        reads.drain(s, order, now);
        order.touch(e.node, reads.leaseStripe(s), now);
      } finally {
        evictionLock.unlock();
      }
    }
  }

  /** Applies every recorded read to the LRU order; returns the ticker time it stamped them with. */
  @GuardedBy("evictionLock")
  private long drainReadsLocked() {
    long now = ticker.read();
    reads.drainAll(order, now);
    return now;
  }

  /** Adds a newly registered entry to the LRU order as its most recent. */
  private void link(LifecycleEntry e) {
    evictionLock.lock();
    try {
      order.link(e.node, drainReadsLocked());
    } finally {
      evictionLock.unlock();
    }
  }

  private void unlink(LifecycleEntry e) {
    evictionLock.lock();
    try {
      order.unlink(e.node);
    } finally {
      evictionLock.unlock();
    }
  }

  /** The registered entries, least recently used first, after draining the recorded reads. */
  private List<LifecycleEntry> leastRecentFirst() {
    evictionLock.lock();
    try {
      drainReadsLocked();
      return order.snapshot();
    } finally {
      evictionLock.unlock();
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
   * Tells every policy of {@code event} of {@code id}; one that throws is logged and the others
   * still hear it.
   */
  private void tellPolicies(String event, String id, Consumer<ResidencyPolicy> tell) {
    for (ResidencyPolicy p : policies) {
      try {
        tell.accept(p);
      } catch (RuntimeException ex) {
        LOG.log(WARNING, "policy failed on " + event + " '" + id + "'", ex);
      }
    }
  }

  /**
   * Tells every listener of {@code event} of {@code id}; one that throws is logged and the others
   * still hear it.
   */
  private void tellListeners(String event, String id, Consumer<LifecycleListener> tell) {
    for (LifecycleListener l : listeners) {
      try {
        tell.accept(l);
      } catch (RuntimeException ex) {
        LOG.log(WARNING, "listener failed on " + event + " '" + id + "'", ex);
      }
    }
  }

  /**
   * Tells policies and listeners that {@code e} may be evictable now: its last lease closed, or it
   * entered READY (a budget may have found it BUSY while it was loading, draining or unloading).
   */
  private void announceIdle(LifecycleEntry e) {
    tellPolicies("idle of", e.id, p -> p.idle(e.id));
    tellListeners("idle of", e.id, l -> l.idle(e.id));
  }

  /** {@link #obtain} asked for a lease: the entry, a lease counted in {@link #callersStripe()}. */
  private LifecycleEntry obtainLeased(ModelKey key) {
    return Objects.requireNonNull(obtain(key, true));
  }

  /**
   * The slow path of add and acquire: waits for transitions of the identifier, loads it when
   * absent, and when asked for a lease returns the entry with one counted in {@link
   * #callersStripe()} (else null).
   */
  private @Nullable LifecycleEntry obtain(ModelKey key, boolean wantLease) {
    String id = key.resolvedId();
    LifecycleEntry e = reserve(id);
    try {
      long deadline = System.nanoTime() + lifecycleTimeoutNanos;
      boolean waited = false;
      for (; ; ) {
        if (wantLease) {
          // lock-free first: after a load, its waiting acquires do not queue on the monitor
          if (tryLease(e) >= 0) {
            return leased(e, waited);
          }
        }
        CompletableFuture<Void> transition;
        synchronized (e) {
          ModelState phase = e.phase;
          if (phase == READY) {
            if (!wantLease) {
              recordRead(e);
              return null;
            }
            // it became READY after the lock-free attempt; under the monitor READY means open
            if (e.tryLease() < 0) {
              throw new IllegalStateException("READY '" + id + "' is closed to leases");
            }
            return leased(e, waited);
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
          return load(e, key, wantLease);
        } else {
          waited = true;
          await(e, transition, deadline, true);
        }
      }
    } finally {
      release(e);
    }
  }

  private LifecycleEntry leased(LifecycleEntry e, boolean waited) {
    if (waited) {
      leaseWaits.increment();
    }
    return e;
  }

  /**
   * Constructs the model of {@code e}, which the caller moved to LOADING; when asked for a lease,
   * counts one (in {@link #callersStripe()}) in the same step that makes it READY, so nothing can
   * evict it between the load and the lease, and returns {@code e} (else null).
   */
  private @Nullable LifecycleEntry load(LifecycleEntry e, ModelKey key, boolean wantLease) {
    String modelId = key.modelId();
    long start = ticker.read();
    @Nullable Model model = null;
    long size = -1;
    RuntimeException failure = null;
    boolean announced = false;
    try {
      ModelFactory factory = registry.getModel(e.id, null);
      if (factory == null) {
        throw new ModelNotFoundException("no model '" + e.id + "' in the registry");
      }
      long predicted = factory.predictedSizeBytes(modelId);
      announced = true;
      for (ResidencyPolicy p : policies) {
        p.admit(e.id, predicted);
      }
      for (LifecycleListener l : listeners) {
        l.loading(e.id, predicted);
      }
      model = factory.create(modelId, null);
      if (model == null) {
        throw new ModelLoadException("the factory of '" + e.id + "' returned null");
      }
      size = model.sizeBytes() >= 0 ? model.sizeBytes() : predicted;
    } catch (Throwable t) {
      failure = Failures.toUnchecked(t, "loading '" + e.id + "' failed");
    }
    long took = ticker.read() - start;
    if (failure == null) {
      // Link before any policy hears loaded: a budget that counts the model as resident must find
      // it in the LRU order (while LOADING, evict answers BUSY and READY announces idle), else a
      // load asking for room in between sees a full budget with no victim and is refused.
      link(e);
      Model loaded = Objects.requireNonNull(model);
      long bytes = size;
      tellPolicies("loaded", e.id, p -> p.loaded(e.id, bytes));
      tellListeners("loaded", e.id, l -> l.loaded(e.id, loaded, bytes, took));
    } else if (announced) {
      RuntimeException cause = failure;
      tellPolicies("loadFailed", e.id, p -> p.loadFailed(e.id));
      tellListeners("loadFailed", e.id, l -> l.loadFailed(e.id, cause));
    }
    CompletableFuture<Void> done;
    int stripe = LifecycleEntry.NO_LEASE;
    synchronized (e) {
      if (failure == null) {
        e.model = model;
        e.requestedId = modelId;
        e.sizeBytes = size;
        e.loadNanos = took;
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
      return stripe >= 0 ? e : null;
    } else {
      if (!(failure instanceof ModelNotFoundException)) {
        loadFailures.increment();
      }
      boolean news = failures.failed(e.id, failure);
      if (failure instanceof ModelLoadException) {
        // the model's own files or configuration: one line per streak, no stack trace
        String line = "cannot load '" + e.id + "': " + LoadFailures.describe(failure);
        boolean logged =
            failure instanceof ModelUnservableException
                && ((ModelUnservableException) failure).logged();
        if (news && !logged) {
          LOG.log(WARNING, line);
        } else {
          LOG.log(DEBUG, () -> line + " (again)");
        }
      }
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
        @Nullable Model model = null;
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
        unload(
            e, Objects.requireNonNull(model, "an UNLOADING entry's model"), RemovalCause.EXPLICIT);
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
    @Nullable Model model;
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
    return Objects.requireNonNull(model, "an UNLOADING entry's model");
  }

  @Override
  @Deprecated
  public EvictionOutcome evictIfIdle(String modelId, RemovalCause cause) {
    return evict(modelId, cause);
  }

  /** Clears {@code modelId} only if it is READY and unleased; never waits. */
  private EvictionOutcome evict(String modelId, RemovalCause cause) {
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
        model = Objects.requireNonNull(e.model, "a READY entry's model");
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
      tellPolicies("removed", e.id, p -> p.removed(e.id, cause));
      // Unlink only after every policy freed its slot (the mirror of load): until then the model
      // stays listed, and evict answers BUSY for it (UNLOADING); removed has moved the budget's
      // version, so a load that saw the slot taken does not take it for unevictable.
      unlink(e);
      tellListeners("removed", e.id, l -> l.removed(e.id, model, cause));
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
    (cause.isEviction() ? Objects.requireNonNull(evictions.get(cause)) : removals).increment();
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
    Map<LifecycleEntry, Long> stamps = new IdentityHashMap<>();
    evictionLock.lock();
    try {
      drainReadsLocked();
      for (LifecycleEntry e : order.snapshot()) {
        stamps.put(e, e.lastStamp());
      }
    } finally {
      evictionLock.unlock();
    }
    List<ModelDescription> out = new ArrayList<>();
    for (LifecycleEntry e : entries.values()) {
      synchronized (e) {
        if (e.phase != null) {
          long lastUsed = stamps.getOrDefault(e, 0L);
          out.add(
              new ModelDescription(
                  e.id, e.requestedId, e.phase, e.sizeBytes, e.leases(), lastUsed, e.loadNanos));
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
  public Residents attachPolicy(ResidencyPolicy policy) {
    policies.add(Objects.requireNonNull(policy, "policy"));
    return residents;
  }

  @Override
  public Diagnostics diagnostics() {
    return new View();
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

  /** Diagnostic; see {@link Diagnostics#lifecycleTable()}. */
  public Set<String> lifecycleTable() {
    return diagnostics().lifecycleTable();
  }

  /** Diagnostic; see {@link Diagnostics#reservations(String)}. */
  public int reservations(String modelId) {
    return diagnostics().reservations(modelId);
  }

  /** What a policy may do with the resident models (see {@link Residents}). */
  private final class ResidentModels implements Residents {

    @Override
    public List<String> leastRecentFirst() {
      List<String> ids = new ArrayList<>();
      for (LifecycleEntry e : BaseModelManager.this.leastRecentFirst()) {
        ids.add(e.id);
      }
      return ids;
    }

    @Override
    public EvictionOutcome evict(String resolvedId, RemovalCause cause) {
      return BaseModelManager.this.evict(resolvedId, cause);
    }

    @Override
    public int expire(Duration idle, Predicate<String> exempt) {
      long idleNanos = idle.toNanos();
      List<LifecycleEntry> expired = new ArrayList<>();
      evictionLock.lock();
      try {
        long now = drainReadsLocked();
        for (LifecycleEntry e : order.snapshot()) {
          if (now - e.lastUsedAt() < idleNanos) {
            break; // the rest were used more recently
          }
          if (e.leases() > 0) {
            order.touch(e.node, now); // in use now: its idle time starts again
          } else if (!exempt.test(e.id)) {
            expired.add(e);
          }
        }
      } finally {
        evictionLock.unlock();
      }
      int evicted = 0;
      for (LifecycleEntry e : expired) {
        EvictionOutcome outcome = evict(e.id, RemovalCause.IDLE);
        if (outcome == EvictionOutcome.EVICTED) {
          evicted++;
          LOG.log(DEBUG, () -> "expired '" + e.id + "' after " + idle + " idle");
        }
      }
      return evicted;
    }
  }

  /** The read-only view of this manager's bookkeeping. */
  private final class View implements Diagnostics {

    @Override
    public List<String> lruOrder() {
      return residents.leastRecentFirst();
    }

    @Override
    public Set<String> lifecycleTable() {
      return Set.copyOf(entries.keySet());
    }

    @Override
    public int reservations(String resolvedId) {
      LifecycleEntry e = entries.get(resolvedId);
      return e == null ? 0 : e.refs;
    }

    @Override
    public int usedSlots() {
      int n = 0;
      for (LifecycleEntry e : entries.values()) {
        if (e.phase != null) {
          n++;
        }
      }
      return n;
    }

    @Override
    public long usedBytes() {
      long n = 0;
      for (LifecycleEntry e : entries.values()) {
        if (e.phase != null) {
          n += Math.max(0, e.sizeBytes);
        }
      }
      return n;
    }

    @Override
    public Set<String> pinned() {
      return Set.of();
    }
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

  private static Executor defaultExecutor() {
    return Executors.newCachedThreadPool(
        r -> {
          Thread t = new Thread(r, "modelkeeper-acquire-" + POOL_IDS.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }
}
