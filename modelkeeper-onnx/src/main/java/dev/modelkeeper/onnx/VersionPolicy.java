package dev.modelkeeper.onnx;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Which versions of a model a repository serves, as Triton's {@code version_policy} states it.
 * Immutable and thread-safe.
 *
 * @param kind which rule applies
 * @param latest for {@link Kind#LATEST}, how many of the highest versions are served
 * @param specific for {@link Kind#SPECIFIC}, the versions served
 */
public record VersionPolicy(Kind kind, int latest, List<Long> specific) {

  /** The rules of a version policy. */
  public enum Kind {
    /** Every version. */
    ALL,
    /** The {@code latest} highest-numbered versions. */
    LATEST,
    /** The versions listed in {@code specific}. */
    SPECIFIC
  }

  /** Every version: the policy of a model folder without {@code config.pbtxt}. */
  public static final VersionPolicy ALL = new VersionPolicy(Kind.ALL, 0, List.of());

  /** The highest version only: Triton's default. */
  public static final VersionPolicy LATEST_ONE = latest(1);

  public VersionPolicy {
    Objects.requireNonNull(kind, "kind");
    specific = List.copyOf(specific);
    if (kind == Kind.LATEST && latest < 1) {
      throw new IllegalArgumentException(
          "version_policy latest needs num_versions of at least 1, was " + latest);
    }
  }

  /** The {@code n} highest versions. */
  public static VersionPolicy latest(int n) {
    return new VersionPolicy(Kind.LATEST, n, List.of());
  }

  /** Exactly {@code versions}. */
  public static VersionPolicy specific(List<Long> versions) {
    return new VersionPolicy(Kind.SPECIFIC, 0, versions);
  }

  /**
   * The versions this policy serves out of {@code available}, which is sorted ascending by number;
   * the result keeps that order.
   */
  public List<String> select(List<String> available) {
    switch (kind) {
      case LATEST:
        return available.subList(Math.max(0, available.size() - latest), available.size());
      case SPECIFIC:
        List<String> out = new ArrayList<>();
        for (String v : available) {
          if (specific.contains(Long.parseLong(v))) {
            out.add(v);
          }
        }
        return out;
      default:
        return available;
    }
  }

  /** The policy in a configuration's words, for messages. */
  public String describe() {
    switch (kind) {
      case LATEST:
        return "version_policy serves the latest " + latest;
      case SPECIFIC:
        return "version_policy serves versions " + specific;
      default:
        return "every version is served";
    }
  }
}
