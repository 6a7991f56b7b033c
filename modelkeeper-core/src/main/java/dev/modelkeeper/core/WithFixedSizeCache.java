package dev.modelkeeper.core;

import static java.lang.System.Logger.Level.WARNING;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A count budget (and optional byte budget, and optional time-to-idle) with least-recently-used
 * eviction over a {@link ModelManager} that owns lifecycles (a {@link BaseModelManager}, possibly
 * decorated). Thread-safe.
 *
 * <p>The budget never answers from its own view of the delegate: every call passes through, and the
 * manager consults the budget as its {@link ResidencyPolicy}. A load asks for admission while it
 * owns its identifier's lifecycle; the budget then reserves a slot, evicting idle least recently
 * used models (through the {@link Residents} the manager handed it) or waiting for room, and
 * refusing with {@link CapacityExceededException} at the deadline. The slot becomes resident on
 * {@code loaded}, and is freed on {@code loadFailed} or {@code removed}. So the slot table holds
 * each registered identifier once and nothing else, a failed {@code clearCache()} (no call) leaves
 * it in place, and resident plus loading models never exceed the budget. Recency is the manager's
 * LRU order, fed by its lossy striped read buffer: a lease writes no shared word.
 *
 * <p>With {@link CacheOptions#expireAfterIdle()} set, models unused for that long (by the manager's
 * ticker) are evicted by a periodic sweep on the options' scheduler, or at once by {@link
 * #expireIdle()}; a leased or pinned model never expires.
 *
 * <p>The byte budget also holds memory that is not a model's: {@link #reserveWorking} reserves the
 * working memory of one run (no slot, released by closing the handle), and {@link #setOutsideBytes}
 * sets aside what the rest of the process needs. Both make room the way a load does, by evicting
 * idle least recently used models; a run waits for room up to the capacity timeout, while raising
 * the outside bytes never waits.
 *
 * <p>No wait cycle: a run waits for working memory holding its model's lease, and the room it waits
 * for may be the model another waiting run holds. Two such waiters would each wait for the other
 * until the capacity timeout. So at most one run waits holding a lease: {@link
 * #reserveWorkingOrStepBack} makes a second one step back instead ({@link StepBackException}: it
 * closes its lease, which makes its model evictable, waits with nothing held until there is room or
 * no run waits holding a lease, and tries again). Loads wait holding no lease, and the one
 * lease-holding waiter can always be served by evicting models no one leases once the runs in
 * progress end. {@link #waits()} lists the waits in progress; a wait longer than a second logs one
 * line naming what holds the room.
 *
 * <p>Lock order: the delegate's per-identifier lifecycle, then {@link #lock}. The lock guards only
 * the slot table and the byte counts; the delegate is never called while it is held.
 */
public class WithFixedSizeCache extends ModelManagerDecorator {

  private static final System.Logger LOG = System.getLogger(WithFixedSizeCache.class.getName());

  private final CacheOptions options;
  private final long lockTimeoutNanos;
  private final long capacityTimeoutNanos;
  private final Set<String> pinned = ConcurrentHashMap.newKeySet();
  private final LongAdder capacityWaits = new LongAdder();
  private final LongAdder capacityRejections = new LongAdder();

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  /** Resident, unloading and loading identifiers. */
  @GuardedBy("lock")
  private final Map<String, Slot> slots = new HashMap<>();

  @GuardedBy("lock")
  private long usedBytes;

  /** Working memory reserved by runs in progress. */
  @GuardedBy("lock")
  private long workingBytes;

  /** Bytes set aside for the rest of the process. */
  @GuardedBy("lock")
  private long outsideBytes;

  /** Working memory reserved by runs in progress, by model. */
  @GuardedBy("lock")
  private final Map<String, Long> workingById = new HashMap<>();

  /** The waits for room in progress. */
  @GuardedBy("lock")
  private final RoomWaits waits = new RoomWaits();

  /** Bumped on every change that may make room. */
  @GuardedBy("lock")
  private long version;

  /** The manager's side: LRU order and eviction. */
  private final Residents residents;

  public WithFixedSizeCache(ModelManager delegate, int maxSize) {
    this(delegate, CacheOptions.builder(maxSize).build());
  }

  /** Wraps {@code delegate}; models it already holds start in the LRU order, oldest first. */
  public WithFixedSizeCache(ModelManager delegate, CacheOptions options) {
    super(delegate);
    this.options = options;
    this.lockTimeoutNanos = options.lockTimeout().toNanos();
    this.capacityTimeoutNanos = options.capacityTimeout().toNanos();
    this.residents = delegate.attachPolicy(new Budget());
    lock.lock();
    try {
      for (ModelDescription d : delegate.describeModels()) {
        if (d.state() != ModelState.LOADING && !slots.containsKey(d.modelId())) {
          Slot s = new Slot(Math.max(0, d.sizeBytes()), false);
          slots.put(d.modelId(), s);
          usedBytes += s.bytes;
        }
      }
      if (overBudget(0, 0)) {
        LOG.log(WARNING, "starting over budget (" + options + "): " + state());
      }
    } finally {
      lock.unlock();
    }
    if (!options.expireAfterIdle().isZero()) {
      IdleSweep.start(this);
    }
  }

  public CacheOptions options() {
    return options;
  }

  /**
   * Registered identifiers, least recently used first; a snapshot. See {@link
   * Diagnostics#lruOrder()}.
   */
  public List<String> lruOrder() {
    return diagnostics().lruOrder();
  }

  /**
   * Evicts now every model unused for {@link CacheOptions#expireAfterIdle()} (by the manager's
   * ticker), except leased and pinned ones; returns how many. A no-op without idle expiry. The
   * periodic sweep calls this.
   */
  public int expireIdle() {
    Duration idle = options.expireAfterIdle();
    return idle.isZero() ? 0 : residents.expire(idle, pinned::contains);
  }

  @Override
  public Diagnostics diagnostics() {
    Diagnostics inner = delegate.diagnostics();
    return new Diagnostics() {
      @Override
      public List<String> lruOrder() {
        return inner.lruOrder();
      }

      @Override
      public Set<String> lifecycleTable() {
        return inner.lifecycleTable();
      }

      @Override
      public int reservations(String resolvedId) {
        return inner.reservations(resolvedId);
      }

      @Override
      public int usedSlots() {
        lockOrTimeout();
        try {
          return slots.size();
        } finally {
          lock.unlock();
        }
      }

      @Override
      public long usedBytes() {
        lockOrTimeout();
        try {
          return usedBytes;
        } finally {
          lock.unlock();
        }
      }

      @Override
      public Set<String> pinned() {
        return Set.copyOf(pinned);
      }
    };
  }

  /** Never evicts {@code modelId} (a resolved identifier), whether loaded now or later. */
  public void pin(String modelId) {
    pinned.add(modelId);
  }

  public void unpin(String modelId) {
    if (pinned.remove(modelId)) {
      signal();
    }
  }

  /** See {@link Diagnostics#pinned()}. */
  public Set<String> pinned() {
    return diagnostics().pinned();
  }

  /**
   * Bytes reserved by resident, unloading and loading models; see {@link Diagnostics#usedBytes()}.
   */
  public long usedBytes() {
    return diagnostics().usedBytes();
  }

  /** Slots taken by resident, unloading and loading models; see {@link Diagnostics#usedSlots()}. */
  public int usedSlots() {
    return diagnostics().usedSlots();
  }

  @Override
  public ManagerStats stats() {
    return delegate.stats().plusCapacity(capacityWaits.sum(), capacityRejections.sum());
  }

  // ---------------------------------------------------------------- making room

  /**
   * Reserves working memory for one run of {@code modelId} (a resolved identifier, which the run
   * holds a lease on) against the byte budget: evicts idle least recently used models or waits for
   * room up to the capacity timeout. Without a byte budget, or for zero bytes, reserves nothing.
   * Close the returned handle when the run ends (idempotent). Thread-safe; call it with no lock
   * held.
   *
   * @throws ModelTooLargeException when {@code bytes} exceed what the budget can ever hold
   * @throws CapacityExceededException when no room came before the deadline
   */
  public Reservation reserveWorking(String modelId, long bytes) {
    return reserveWorking(modelId, bytes, false);
  }

  /**
   * As {@link #reserveWorking}, except that when the run would wait while another run already waits
   * holding its lease, it throws {@link StepBackException} instead of waiting: the caller then
   * closes its lease, calls {@link StepBackException#awaitRoom()} and tries again (see the class
   * comment: this is what keeps waits free of cycles). Thread-safe; call it with no lock held.
   *
   * @throws StepBackException when the caller is to step back and try again
   * @throws ModelTooLargeException when {@code bytes} exceed what the budget can ever hold
   * @throws CapacityExceededException when no room came before the deadline
   */
  public Reservation reserveWorkingOrStepBack(String modelId, long bytes) {
    return reserveWorking(modelId, bytes, true);
  }

  private Reservation reserveWorking(String modelId, long bytes, boolean mayStepBack) {
    if (options.maxBytes() <= 0 || bytes <= 0) {
      return Reservation.NONE;
    }
    makeRoom(modelId, bytes, false, mayStepBack);
    return new WorkingReservation(modelId, bytes);
  }

  /** See {@link StepBackException#awaitRoom()}. */
  void awaitRoomAfterStepBack(String modelId, long bytes, long maxNanos) {
    long start = System.nanoTime();
    long deadline = start + Math.min(capacityTimeoutNanos, Math.max(0, maxNanos));
    lockOrTimeout();
    try {
      awaitRoomLocked(waits.enter(modelId, false, bytes, start, false), deadline);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new LifecycleInterruptedException(
          "interrupted while '" + modelId + "' waited for room in the budget");
    } finally {
      lock.unlock();
    }
  }

  @GuardedBy("lock")
  private void awaitRoomLocked(RoomWaits.Waiter waiter, long deadline) throws InterruptedException {
    try {
      while (waits.leaseHolders() > 0 && overBudget(0, waiter.bytes)) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          throw reject(
              waiter.modelId, false, "no room after waiting", System.nanoTime() - waiter.since);
        }
        awaitChange(waiter, remaining);
      }
    } finally {
      waits.leave(waiter);
    }
  }

  /**
   * The waits for room in progress (loads, and runs waiting for working memory), longest first; a
   * snapshot. Thread-safe.
   */
  public List<MemoryWait> waits() {
    lockOrTimeout();
    try {
      return waits.snapshot(System.nanoTime());
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits for a signal up to {@code remaining} nanoseconds; a waiter that passes the stall
   * threshold logs its diagnosis first, once.
   */
  @GuardedBy("lock")
  private void awaitChange(RoomWaits.Waiter waiter, long remaining) throws InterruptedException {
    long now = System.nanoTime();
    long untilStall = waiter.since + RoomWaits.STALL_NANOS - now;
    if (!waiter.reported && untilStall <= 0) {
      waiter.reported = true;
      LOG.log(WARNING, waits.diagnosis(waiter, now, state(), Map.copyOf(workingById), loading()));
    }
    changed.awaitNanos(waiter.reported ? remaining : Math.min(remaining, untilStall));
  }

  @GuardedBy("lock")
  private List<String> loading() {
    List<String> ids = new ArrayList<>();
    slots.forEach(
        (id, s) -> {
          if (s.loading) {
            ids.add(id);
          }
        });
    return ids;
  }

  /**
   * Reserves working memory for {@code modelId} only if the byte budget has room for it now: evicts
   * nothing and never waits, for work that may as well be done later (writing a model's
   * pre-optimized form). Without a byte budget, or for zero bytes, reserves nothing. Close the
   * returned handle when the work ends (idempotent). Thread-safe; call it with no lock held.
   *
   * @return the reservation, or empty when the budget has no room for it now
   */
  public Optional<Reservation> tryReserveWorking(String modelId, long bytes) {
    if (options.maxBytes() <= 0 || bytes <= 0) {
      return Optional.of(Reservation.NONE);
    }
    lock.lock();
    try {
      if (overBudget(0, bytes)) {
        return Optional.empty();
      }
      addWorking(modelId, bytes);
    } finally {
      lock.unlock();
    }
    return Optional.of(new WorkingReservation(modelId, bytes));
  }

  /**
   * Sets aside {@code bytes} of the byte budget for what is not a model (the rest of the process);
   * when that leaves the models over budget, evicts idle least recently used models now (never
   * waits, never evicts a leased or pinned one). Thread-safe.
   */
  public void setOutsideBytes(long bytes) {
    boolean over;
    lock.lock();
    try {
      long before = outsideBytes;
      outsideBytes = Math.max(0, bytes);
      if (outsideBytes < before) {
        signalChangeLocked();
      }
      over = overBudget(0, 0);
    } finally {
      lock.unlock();
    }
    if (over) {
      trim(null);
    }
  }

  /** The bytes set aside by {@link #setOutsideBytes}. */
  public long outsideBytes() {
    lock.lock();
    try {
      return outsideBytes;
    } finally {
      lock.unlock();
    }
  }

  /** Working memory reserved by runs in progress ({@link #reserveWorking}). */
  public long workingBytes() {
    lock.lock();
    try {
      return workingBytes;
    } finally {
      lock.unlock();
    }
  }

  /** A reservation of working memory; closing it returns the bytes. Thread-safe, idempotent. */
  public interface Reservation extends AutoCloseable {

    /** A reservation of nothing. */
    Reservation NONE = () -> {};

    @Override
    void close();
  }

  @GuardedBy("lock")
  private void addWorking(String modelId, long bytes) {
    workingBytes += bytes;
    workingById.merge(modelId, bytes, Long::sum);
  }

  private final class WorkingReservation implements Reservation {
    private final String modelId;
    private final long bytes;
    private final AtomicBoolean open = new AtomicBoolean(true);

    WorkingReservation(String modelId, long bytes) {
      this.modelId = modelId;
      this.bytes = bytes;
    }

    @Override
    public void close() {
      if (open.compareAndSet(true, false)) {
        lock.lock();
        try {
          workingBytes -= bytes;
          workingById.computeIfPresent(modelId, (id, b) -> b == bytes ? null : b - bytes);
          signalChangeLocked();
        } finally {
          lock.unlock();
        }
      }
    }
  }

  /**
   * Reserves room for {@code bytes}: a slot for a load of {@code id} when {@code slot}, else
   * working memory of a run of {@code id}, which holds a lease of it (a run that {@code
   * mayStepBack} steps back rather than be a second run waiting so); runs on the caller's thread,
   * no lock held.
   */
  private void makeRoom(String id, long bytes, boolean slot, boolean mayStepBack) {
    long own = slot ? 0 : residentBytesOf(id);
    if (options.maxBytes() > 0 && own + bytes > options.maxBytes()) {
      capacityRejections.increment();
      throw new ModelTooLargeException(
          (slot ? "cannot load '" : "cannot run '")
              + id
              + "': it needs "
              + mib(own + bytes)
              + (own > 0 ? " (" + mib(own) + " loaded and " + mib(bytes) + " to run)" : "")
              + ", more than the whole byte budget of "
              + mib(options.maxBytes())
              + "; waiting cannot make room for it");
    }
    long deadline = System.nanoTime() + capacityTimeoutNanos;
    RoomWaits.Waiter waiter = null;
    Set<String> failedVictims = new HashSet<>(); // their clearCache() threw: not tried again here
    try {
      for (; ; ) {
        long seen;
        RemovalCause cause;
        lockOrTimeout();
        try {
          if (!overBudget(slot ? 1 : 0, bytes)) {
            if (slot) {
              slots.put(id, new Slot(bytes, true));
              usedBytes += bytes;
            } else {
              addWorking(id, bytes);
            }
            return;
          }
          // the first pass always looks for a victim: a zero timeout refuses only a load that
          // finds none
          if (waiter != null && System.nanoTime() - deadline > 0) {
            throw reject(id, slot, "no room before the deadline", capacityTimeoutNanos);
          }
          cause =
              slot && slots.size() + 1 > options.maxSize()
                  ? RemovalCause.COUNT_BUDGET
                  : RemovalCause.BYTE_BUDGET;
          seen = version;
        } finally {
          lock.unlock();
        }
        boolean mayFree = false;
        boolean evicted = false;
        List<String> leased = new ArrayList<>();
        for (String victim : residents.leastRecentFirst()) {
          if (victim.equals(id) || pinned.contains(victim) || failedVictims.contains(victim)) {
            continue;
          }
          EvictionOutcome outcome = residents.evict(victim, cause);
          if (outcome == EvictionOutcome.EVICTED) {
            evicted = true;
            break;
          }
          if (outcome == EvictionOutcome.FAILED) {
            failedVictims.add(victim);
          }
          if (outcome == EvictionOutcome.BUSY) {
            mayFree = true;
            leased.add(victim);
          }
        }
        if (evicted) {
          continue;
        }
        lockOrTimeout();
        try {
          mayFree |= workingBytes > 0 || slots.values().stream().anyMatch(s -> s.loading);
          if (!mayFree && version == seen) {
            throw reject(id, slot, "nothing can be evicted", 0);
          }
          if (waiter == null) {
            if (mayStepBack && waits.leaseHolders() > 0) {
              throw new StepBackException(
                  this,
                  id,
                  bytes,
                  "no working memory to run '"
                      + id
                      + "' now: another run waits for room holding its lease ("
                      + state()
                      + ")");
            }
            waiter = waits.enter(id, slot, bytes, System.nanoTime(), !slot);
            capacityWaits.increment();
          }
          waiter.leased = leased;
          while (version == seen) {
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
              throw reject(id, slot, "no room after waiting", capacityTimeoutNanos);
            }
            awaitChange(waiter, remaining);
          }
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new LifecycleInterruptedException(
              "interrupted while '" + id + "' waited for room in the budget");
        } finally {
          lock.unlock();
        }
      }
    } finally {
      if (waiter != null) {
        lock.lock();
        try {
          waits.leave(waiter);
          if (waiter.holdsLease) {
            signalChangeLocked(); // a run that stepped back may now wait in its place
          }
        } finally {
          lock.unlock();
        }
      }
    }
  }

  /** The bytes the budget charges resident model {@code id} (0 when it holds none). */
  private long residentBytesOf(String id) {
    lockOrTimeout();
    try {
      Slot s = slots.get(id);
      return s == null ? 0 : s.bytes;
    } finally {
      lock.unlock();
    }
  }

  /** {@code bytes} in MiB with one decimal, and exactly. */
  static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB (%d bytes)", bytes / 1048576.0, bytes);
  }

  /**
   * Evicts idle models, except {@code loadedId} (may be null), while the budget is exceeded (a load
   * turned out larger than predicted, or the outside bytes grew); never waits.
   */
  private void trim(@Nullable String loadedId) {
    for (String victim : residents.leastRecentFirst()) {
      lockOrTimeout();
      try {
        if (!overBudget(0, 0)) {
          return;
        }
      } finally {
        lock.unlock();
      }
      if (!victim.equals(loadedId) && !pinned.contains(victim)) {
        residents.evict(victim, RemovalCause.BYTE_BUDGET);
      }
    }
  }

  @GuardedBy("lock")
  private boolean overBudget(int moreSlots, long moreBytes) {
    return slots.size() + moreSlots > options.maxSize()
        || (options.maxBytes() > 0
            && usedBytes + workingBytes + outsideBytes + moreBytes > options.maxBytes());
  }

  @GuardedBy("lock")
  private CapacityExceededException reject(String id, boolean slot, String why, long waitedNanos) {
    capacityRejections.increment();
    return new CapacityExceededException(
        (slot ? "cannot load '" : "no working memory to run '")
            + id
            + "': "
            + why
            + (waitedNanos > 0 ? " for " + Duration.ofNanos(waitedNanos) : "")
            + " ("
            + state()
            + ")");
  }

  @GuardedBy("lock")
  private String state() {
    long loading = slots.values().stream().filter(s -> s.loading).count();
    return "models "
        + slots.size()
        + "/"
        + options.maxSize()
        + " of which "
        + loading
        + " loading"
        + (options.maxBytes() > 0
            ? ", bytes "
                + usedBytes
                + (workingBytes > 0 ? " + " + workingBytes + " working" : "")
                + (outsideBytes > 0 ? " + " + outsideBytes + " outside the models" : "")
                + "/"
                + options.maxBytes()
            : "")
        + ", pinned "
        + pinned;
  }

  private void signal() {
    lock.lock();
    try {
      signalChangeLocked();
    } finally {
      lock.unlock();
    }
  }

  /** Wakes every load waiting for room. */
  @GuardedBy("lock")
  private void signalChangeLocked() {
    version++;
    changed.signalAll();
  }

  private void lockOrTimeout() {
    boolean locked;
    try {
      locked = lock.tryLock(lockTimeoutNanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw new LifecycleInterruptedException("interrupted while waiting for the LRU lock");
    }
    if (!locked) {
      throw new LockTimeoutException(
          "timed out after " + options.lockTimeout() + " waiting for the LRU lock");
    }
  }

  /** The policy the manager consults; see the class comment. */
  private final class Budget implements ResidencyPolicy {

    @Override
    public void admit(String modelId, long predictedBytes) {
      makeRoom(modelId, Math.max(0, predictedBytes), true, false);
    }

    @Override
    public void loaded(String modelId, long sizeBytes) {
      boolean over;
      lock.lock();
      try {
        Slot s = slots.get(modelId);
        if (s == null) {
          s = new Slot(0, true);
          slots.put(modelId, s);
        }
        long bytes = Math.max(0, sizeBytes);
        usedBytes += bytes - s.bytes;
        s.bytes = bytes;
        s.loading = false;
        signalChangeLocked();
        over = overBudget(0, 0);
      } finally {
        lock.unlock();
      }
      if (over) {
        LOG.log(WARNING, "'" + modelId + "' is larger than predicted; evicting idle models to fit");
        trim(modelId);
      }
    }

    @Override
    public void loadFailed(String modelId) {
      lock.lock();
      try {
        Slot s = slots.get(modelId);
        if (s != null && s.loading) {
          slots.remove(modelId);
          usedBytes -= s.bytes;
        }
        signalChangeLocked();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void removed(String modelId, RemovalCause cause) {
      lock.lock();
      try {
        Slot s = slots.remove(modelId);
        if (s != null) {
          usedBytes -= s.bytes;
        }
        signalChangeLocked();
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void idle(String modelId) {
      signal();
    }
  }

  /**
   * The periodic idle sweep of one budget, holding it weakly: a discarded budget stops being swept
   * and costs no thread.
   */
  private static final class IdleSweep implements Runnable {
    private final WeakReference<WithFixedSizeCache> cache;
    volatile @Nullable ScheduledFuture<?> schedule;

    private IdleSweep(WithFixedSizeCache cache) {
      this.cache = new WeakReference<>(cache);
    }

    /** Sweeps every tenth of the idle timeout (at least every millisecond). */
    static void start(WithFixedSizeCache cache) {
      ScheduledExecutorService scheduler =
          cache.options.scheduler() != null ? cache.options.scheduler() : SharedScheduler.THREAD;
      long periodNanos = Math.max(1_000_000, cache.options.expireAfterIdle().toNanos() / 10);
      IdleSweep sweep = new IdleSweep(cache);
      sweep.schedule =
          scheduler.scheduleAtFixedRate(sweep, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void run() {
      WithFixedSizeCache c = cache.get();
      if (c == null) {
        if (schedule != null) {
          schedule.cancel(false);
        }
        return;
      }
      try {
        c.expireIdle();
      } catch (RuntimeException e) {
        LOG.log(WARNING, "idle sweep failed; it runs again next period", e);
      }
    }
  }

  /** The daemon thread shared by every budget's idle sweep, started on first use. */
  private static final class SharedScheduler {
    static final ScheduledExecutorService THREAD =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "modelkeeper-idle-sweep");
              t.setDaemon(true);
              return t;
            });
  }

  /** One reserved place in the budget; guarded by {@link #lock}. */
  private static final class Slot {
    long bytes;
    boolean loading;

    Slot(long bytes, boolean loading) {
      this.bytes = bytes;
      this.loading = loading;
    }
  }
}
