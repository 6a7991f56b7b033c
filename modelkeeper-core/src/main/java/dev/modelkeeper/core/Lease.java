package dev.modelkeeper.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The lease handle of {@link BaseModelManager}. Not thread-safe, like the try-with-resources block
 * it is made for: {@link #close()} is idempotent when calls are ordered (one thread, or handed over
 * with a happens-before edge), and costs no atomic instruction of its own. Closing one lease from
 * two threads at once is supported only by {@link Tracked}, the lease handed out while leak
 * detection is on, which also frees the hot path's allocation from escaping into a tracking table
 * when detection is off: a lease that does not leave the caller's frame can then be scalar-replaced
 * by the compiler.
 */
class Lease implements ModelLease {

  private final BaseModelManager owner;
  final LifecycleEntry entry;
  final int stripe;
  private final Model model;

  private boolean closed;

  Lease(BaseModelManager owner, LifecycleEntry entry, int stripe, Model model) {
    this.owner = owner;
    this.entry = entry;
    this.stripe = stripe;
    this.model = model;
  }

  @Override
  public Model model() {
    return model;
  }

  @Override
  public String modelId() {
    return entry.id;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      owner.released(this);
    }
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public String toString() {
    return "ModelLease[" + entry.id + (isClosed() ? ", closed]" : "]");
  }

  /**
   * A lease known to the leak detector: closes exactly once even when closed concurrently.
   * Thread-safe.
   */
  static final class Tracked extends Lease {

    private static final VarHandle DONE;

    static {
      try {
        DONE = MethodHandles.lookup().findVarHandle(Tracked.class, "done", int.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** The leak detector's record of this lease. */
    @Nullable Object leakToken;

    private volatile int done;

    Tracked(BaseModelManager owner, LifecycleEntry entry, int stripe, Model model) {
      super(owner, entry, stripe, model);
    }

    @Override
    public void close() {
      if (done == 0 && DONE.compareAndSet(this, 0, 1)) {
        super.close();
      }
    }

    @Override
    boolean isClosed() {
      return done != 0;
    }
  }
}
