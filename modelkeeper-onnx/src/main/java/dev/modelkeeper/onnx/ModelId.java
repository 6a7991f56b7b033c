package dev.modelkeeper.onnx;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A validated repository model identifier: {@code name} (the highest version) or {@code
 * name/version}. Names match {@code [A-Za-z0-9][A-Za-z0-9_.-]{0,63}}, versions are decimal integers
 * from 1 without sign or leading zeros (at most 9 digits); nothing else is accepted, so an
 * identifier can never name a path outside a repository root. Immutable and thread-safe.
 *
 * @param name the model name
 * @param version the version, or null for "the highest version"
 */
public record ModelId(String name, String version) {

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}");
  private static final Pattern VERSION = Pattern.compile("[1-9][0-9]{0,8}");

  public ModelId {
    checkName(name);
    if (version != null) {
      checkVersion(name, version);
    }
  }

  /**
   * Parses {@code name} or {@code name/version}.
   *
   * @throws InvalidModelIdException when {@code id} is not of that form
   */
  public static ModelId parse(String id) {
    if (id == null || id.isEmpty()) {
      throw new InvalidModelIdException("model id is empty");
    }
    int slash = id.indexOf('/');
    if (slash < 0) {
      return new ModelId(id, null);
    }
    if (id.indexOf('/', slash + 1) >= 0) {
      throw new InvalidModelIdException(
          "invalid model id '" + printable(id) + "': expected 'name' or 'name/version'");
    }
    return new ModelId(id.substring(0, slash), id.substring(slash + 1));
  }

  /** True when no version was given and the highest one is meant. */
  public boolean isLatest() {
    return version == null;
  }

  /** This model's identifier at a concrete version. */
  public ModelId withVersion(String v) {
    return new ModelId(name, Objects.requireNonNull(v, "version"));
  }

  /** {@code name} or {@code name/version}. */
  @Override
  public String toString() {
    return version == null ? name : name + "/" + version;
  }

  /** Parses the version as a number, for ordering. */
  public long versionNumber() {
    if (version == null) {
      throw new IllegalStateException("'" + name + "' has no version");
    }
    return Long.parseLong(version);
  }

  private static void checkName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new InvalidModelIdException(
          "invalid model name '"
              + printable(name)
              + "': use 1-64 letters, digits, '_', '.', '-', starting with a letter or digit");
    }
  }

  private static void checkVersion(String name, String version) {
    if (!VERSION.matcher(version).matches()) {
      throw new InvalidModelIdException(
          "failed to get model version from specified version string '"
              + printable(version)
              + "' (model '"
              + name
              + "'): use a decimal number without leading zeros");
    }
  }

  /** The identifier as it can be shown in a message: control characters escaped, length capped. */
  static String printable(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length() && sb.length() < 120; i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    if (sb.length() >= 120) {
      sb.append("...");
    }
    return sb.toString();
  }
}
