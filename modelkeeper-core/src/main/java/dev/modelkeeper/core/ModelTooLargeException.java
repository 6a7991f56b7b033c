package dev.modelkeeper.core;

/**
 * The model needs more bytes than the whole byte budget holds, so no amount of waiting or evicting
 * can make room for it; retrying is pointless until the budget changes. Immutable and thread-safe.
 */
public class ModelTooLargeException extends CapacityExceededException {
  private static final long serialVersionUID = 1L;

  public ModelTooLargeException(String message) {
    super(message);
  }
}
