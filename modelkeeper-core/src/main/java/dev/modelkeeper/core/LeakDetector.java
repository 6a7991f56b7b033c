package dev.modelkeeper.core;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Remembers where open leases were taken and reports each lease held past a threshold once.
 * Thread-safe. {@link #DISABLED} is the null object used when detection is off: it costs one
 * virtual call per lease.
 */
class LeakDetector {

  private static final System.Logger LOG = System.getLogger(LeakDetector.class.getName());

  static final LeakDetector DISABLED = new LeakDetector(Ticker.system(), Duration.ZERO);

  private final Ticker ticker;
  private final long thresholdNanos;
  private final Map<Lease.Tracked, Site> open = new ConcurrentHashMap<>();

  LeakDetector(Ticker ticker, Duration threshold) {
    this.ticker = ticker;
    this.thresholdNanos = threshold.toNanos();
  }

  /**
   * Sweeps every half threshold on the shared daemon thread, until this detector is garbage: the
   * schedule holds it weakly, so a discarded manager stops being swept and costs no thread.
   */
  void sweepPeriodically() {
    long periodMillis = Math.max(1, thresholdNanos / 2_000_000);
    Sweep sweep = new Sweep(this);
    sweep.schedule =
        Sweeper.THREAD.scheduleAtFixedRate(
            sweep, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
  }

  /** A new lease of {@code entry}: a plain one when detection is off, else a tracked one. */
  Lease open(BaseModelManager owner, LifecycleEntry entry, int stripe, Model model) {
    if (thresholdNanos == 0) {
      return new Lease(owner, entry, stripe, model);
    }
    Lease.Tracked lease = new Lease.Tracked(owner, entry, stripe, model);
    Site site =
        new Site(
            ticker.read(),
            new Exception(
                "lease of '"
                    + lease.modelId()
                    + "' taken by thread "
                    + Thread.currentThread().getName()));
    lease.leakToken = site;
    open.put(lease, site);
    return lease;
  }

  void closed(Lease lease) {
    if (lease instanceof Lease.Tracked && ((Lease.Tracked) lease).leakToken != null) {
      open.remove(lease);
    }
  }

  /** Logs every lease open longer than the threshold that was not reported before; returns them. */
  List<String> sweep() {
    List<String> reported = new ArrayList<>();
    long now = ticker.read();
    for (Map.Entry<Lease.Tracked, Site> e : open.entrySet()) {
      Site site = e.getValue();
      if (!site.reported && now - site.openedAt >= thresholdNanos) {
        site.reported = true;
        long heldMs = (now - site.openedAt) / 1_000_000;
        LOG.log(
            System.Logger.Level.WARNING,
            "possible lease leak: lease of '"
                + e.getKey().modelId()
                + "' open for "
                + heldMs
                + " ms",
            site.stack);
        reported.add(e.getKey().modelId());
      }
    }
    return reported;
  }

  /** One detector's periodic sweep, holding the detector weakly. */
  private static final class Sweep implements Runnable {
    private final WeakReference<LeakDetector> detector;
    volatile @Nullable ScheduledFuture<?> schedule;

    Sweep(LeakDetector detector) {
      this.detector = new WeakReference<>(detector);
    }

    @Override
    public void run() {
      LeakDetector d = detector.get();
      if (d != null) {
        d.sweep();
      } else if (schedule != null) {
        schedule.cancel(false);
      }
    }
  }

  /** The daemon thread shared by every detector's sweeps, started on first use. */
  private static final class Sweeper {
    static final ScheduledExecutorService THREAD =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "modelkeeper-leak-detector");
              t.setDaemon(true);
              return t;
            });
  }

  private static final class Site {
    final long openedAt;
    final Exception stack;
    volatile boolean reported;

    Site(long openedAt, Exception stack) {
      this.openedAt = openedAt;
      this.stack = stack;
    }
  }
}
