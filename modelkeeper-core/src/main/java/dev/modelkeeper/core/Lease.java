package dev.modelkeeper.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** The lease handle of {@link BaseModelManager}: the only allocation of a hot-path acquire. */
final class Lease implements ModelLease {

  private static final VarHandle CLOSED;

  static {
    try {
      CLOSED = MethodHandles.lookup().findVarHandle(Lease.class, "closed", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final BaseModelManager owner;
  final LifecycleEntry entry;
  final int stripe;
  private final Model model;

  /** The leak detector's record of this lease, or null when detection is off. */
  Object leakToken;

  private volatile int closed;

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
    if (closed == 0 && CLOSED.compareAndSet(this, 0, 1)) {
      owner.released(this);
    }
  }

  boolean isClosed() {
    return closed != 0;
  }

  @Override
  public String toString() {
    return "ModelLease[" + entry.id + (isClosed() ? ", closed]" : "]");
  }
}
