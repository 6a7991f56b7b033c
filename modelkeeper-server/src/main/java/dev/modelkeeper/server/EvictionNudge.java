package dev.modelkeeper.server;

import dev.modelkeeper.core.EvictionOutcome;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelManagerDecorator;
import dev.modelkeeper.core.ModelState;
import dev.modelkeeper.core.RemovalCause;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A work-around, placed between the base manager and its budget, for a lost wake-up in core's
 * {@code WithFixedSizeCache}: a budget waiting for room may try to evict a model whose constructor
 * has returned but which is not READY yet (its {@code loaded} event is published just before it
 * becomes leasable). {@code evictIfIdle} then answers BUSY without asking for an idle report, and
 * nothing is published when the model becomes READY, so the waiter could sleep until its capacity
 * timeout while the model sits idle. This decorator waits, briefly and boundedly, for such a model
 * to leave LOADING and tries once more. Transparent otherwise; thread-safe.
 *
 * <p>Remove it when core publishes the LOADING to READY transition to waiting budgets.
 */
final class EvictionNudge extends ModelManagerDecorator {

  /** The window is a few listener calls long; this bound only guards against a stuck listener. */
  private static final long SETTLE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  EvictionNudge(ModelManager delegate) {
    super(delegate);
  }

  @Override
  public EvictionOutcome evictIfIdle(String modelId, RemovalCause cause) {
    EvictionOutcome outcome = delegate.evictIfIdle(modelId, cause);
    if (outcome != EvictionOutcome.BUSY || state(modelId) != ModelState.LOADING) {
      return outcome;
    }
    long deadline = System.nanoTime() + SETTLE_NANOS;
    while (state(modelId) == ModelState.LOADING) {
      if (System.nanoTime() - deadline > 0) {
        return outcome;
      }
      LockSupport.parkNanos(50_000);
    }
    return delegate.evictIfIdle(modelId, cause);
  }

  private ModelState state(String modelId) {
    for (ModelDescription d : delegate.describeModels()) {
      if (d.modelId().equals(modelId)) {
        return d.state();
      }
    }
    return null;
  }
}
