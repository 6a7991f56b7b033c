package dev.modelkeeper.server.memory;

import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.memory.WorkingMemory;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The server's working memory: runs reserve from its budget, and step back (throwing {@link
 * dev.modelkeeper.core.StepBackException}, which a model's executor handles by closing the lease,
 * waiting and trying again) rather than wait while another run already waits holding its lease.
 * Thread-safe.
 */
public final class BudgetWorkingMemory implements WorkingMemory {

  private final Supplier<WithFixedSizeCache> budget;

  /**
   * @param budget the server's budget, read at each reservation (it is built after the models'
   *     options)
   */
  public BudgetWorkingMemory(Supplier<WithFixedSizeCache> budget) {
    this.budget = budget;
  }

  @Override
  public WithFixedSizeCache.Reservation reserve(String modelId, long bytes) {
    return budget.get().reserveWorkingOrStepBack(modelId, bytes);
  }

  @Override
  public Optional<WithFixedSizeCache.Reservation> tryReserve(String modelId, long bytes) {
    return budget.get().tryReserveWorking(modelId, bytes);
  }

  @Override
  public long modelRoom() {
    long room = budget.get().options().maxBytes();
    return room > 0 ? room : Long.MAX_VALUE;
  }
}
