package dev.modelkeeper.core;

/** Why a model left the manager. */
public enum RemovalCause {
  /** {@code remove} or {@code clear} was called. */
  EXPLICIT,
  /** Evicted to make room under the count budget. */
  COUNT_BUDGET,
  /** Evicted to make room under the byte budget. */
  BYTE_BUDGET,
  /** Evicted because no one used it for the budget's idle timeout. */
  IDLE;

  public boolean isEviction() {
    return this != EXPLICIT;
  }
}
