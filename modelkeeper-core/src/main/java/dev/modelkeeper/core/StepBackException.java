package dev.modelkeeper.core;

/**
 * A run that would have waited for working memory while holding its model's lease, when another run
 * already waits holding one (see {@link WithFixedSizeCache#reserveWorkingOrStepBack}): the caller
 * steps back, closes its lease, calls {@link #awaitRoom} with no lease held and tries again. Were
 * two such runs to wait holding their leases, each might need the room the other's model takes, and
 * neither could go on. A caller that does not know this exception treats it as the {@link
 * CapacityExceededException} it is (a retryable refusal). Thread-safe.
 */
public final class StepBackException extends CapacityExceededException {
  private static final long serialVersionUID = 1L;

  private final transient WithFixedSizeCache budget;
  private final String modelId;
  private final long bytes;

  StepBackException(WithFixedSizeCache budget, String modelId, long bytes, String message) {
    super(message);
    this.budget = budget;
    this.modelId = modelId;
    this.bytes = bytes;
  }

  /** The resolved identifier of the model whose run stepped back. */
  public String modelId() {
    return modelId;
  }

  /**
   * Waits, holding no lease, until the budget has room for the run or no run waits holding its
   * lease any longer (then trying again may wait in its place), or up to the capacity timeout. Call
   * it after closing the lease; then try again.
   *
   * @throws CapacityExceededException when neither came before the capacity timeout
   */
  public void awaitRoom() {
    awaitRoom(Long.MAX_VALUE);
  }

  /**
   * As {@link #awaitRoom()}, waiting at most {@code maxNanos} (and at most the capacity timeout).
   */
  public void awaitRoom(long maxNanos) {
    budget.awaitRoomAfterStepBack(modelId, bytes, maxNanos);
  }
}
