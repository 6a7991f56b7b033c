package dev.modelkeeper.onnx.memory;

import dev.modelkeeper.core.WithFixedSizeCache;
import java.util.Optional;

/**
 * Where a run reserves its working memory before it starts (a server passes its budget's {@link
 * WithFixedSizeCache#reserveWorking}). Implementations are thread-safe; {@link #reserve} runs on
 * the thread about to run the model, which holds a lease on it, and may wait (bounded).
 */
@FunctionalInterface
public interface WorkingMemory {

  /** Reserves nothing. */
  WorkingMemory NONE = (modelId, bytes) -> WithFixedSizeCache.Reservation.NONE;

  /**
   * Reserves {@code bytes} for one run of {@code modelId}; the run closes the result when it ends.
   *
   * @throws dev.modelkeeper.core.CapacityExceededException when no room came in time
   */
  WithFixedSizeCache.Reservation reserve(String modelId, long bytes);

  /**
   * Reserves {@code bytes} for work on {@code modelId} only if there is room now, evicting nothing
   * and never waiting (a server passes {@link WithFixedSizeCache#tryReserveWorking}); empty when
   * there is none. By default, {@link #reserve}.
   */
  default Optional<WithFixedSizeCache.Reservation> tryReserve(String modelId, long bytes) {
    return Optional.of(reserve(modelId, bytes));
  }

  /**
   * The most one model may take, loaded and running, at its peak: the whole room the memory cap
   * leaves for models (a server's budget capacity). A model measured to need more is refused at
   * once rather than kept. Unbounded by default.
   */
  default long modelRoom() {
    return Long.MAX_VALUE;
  }
}
