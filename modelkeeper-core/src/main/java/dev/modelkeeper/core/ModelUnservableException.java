package dev.modelkeeper.core;

/**
 * The model's own files say it cannot be served: a corrupt or unreadable model file, a
 * configuration that does not parse or contradicts the model, a feature ModelKeeper does not serve.
 * Trying the same files again fails the same way, so the manager opens no back-off window for it (a
 * registry may remember the refusal and answer it at once until the files change) and logs it once
 * per streak of the same failure. Immutable and thread-safe.
 */
public class ModelUnservableException extends ModelLoadException {
  private static final long serialVersionUID = 1L;

  private final boolean unsupported;
  private final boolean logged;

  /**
   * @param unsupported true when the model asks for something ModelKeeper does not serve (a type, a
   *     kind of input, a backend), false when its files are broken
   */
  public ModelUnservableException(String message, Throwable cause, boolean unsupported) {
    this(message, cause, unsupported, false);
  }

  /**
   * @param unsupported as above
   * @param logged true when the problem was already logged where it was found (a repository that
   *     read a broken configuration), so that the manager does not log it again
   */
  public ModelUnservableException(
      String message, Throwable cause, boolean unsupported, boolean logged) {
    super(message, cause);
    this.unsupported = unsupported;
    this.logged = logged;
  }

  /**
   * True when the model asks for something ModelKeeper does not serve; false when its files are
   * broken (fixing them makes it servable).
   */
  public boolean unsupported() {
    return unsupported;
  }

  /** True when the problem was already logged where it was found. */
  public boolean logged() {
    return logged;
  }
}
