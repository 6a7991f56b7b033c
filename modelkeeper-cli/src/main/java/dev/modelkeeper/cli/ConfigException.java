package dev.modelkeeper.cli;

/**
 * A setting of the command line or environment has a value the server cannot run with; the message
 * names the flag and, when it came from there, the environment variable. Immutable and thread-safe.
 */
final class ConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
