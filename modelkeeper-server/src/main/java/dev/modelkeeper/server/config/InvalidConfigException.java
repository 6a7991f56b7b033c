package dev.modelkeeper.server.config;

/**
 * A server setting has a value the server cannot run with; {@link #setting()} names it the way the
 * command line does (for example {@code max-models}). Immutable and thread-safe.
 */
public final class InvalidConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String setting;

  public InvalidConfigException(String setting, String message) {
    super(setting + ": " + message);
    this.setting = setting;
  }

  /** The setting's name without dashes in front, e.g. {@code port} or {@code max-bytes}. */
  public String setting() {
    return setting;
  }

  /** The explanation without the setting's name in front. */
  public String reason() {
    return getMessage().substring(setting.length() + 2);
  }
}
