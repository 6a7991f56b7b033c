package dev.modelkeeper.server.request;

/**
 * Where a request's model name leads: the repository model to build and, for aliases, the name it
 * is registered under. Immutable and thread-safe.
 *
 * @param name the name the client used (a repository model name or an alias)
 * @param version the concrete repository version
 * @param modelId the repository identifier {@code name/version} the model is built from
 * @param alias the alias the model is registered under, or null
 */
public record ModelTarget(String name, String version, String modelId, String alias) {

  /** The resolved identifier the manager registers, locks and leases the model under. */
  public String key() {
    return alias != null ? alias : modelId;
  }
}
