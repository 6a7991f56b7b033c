package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.core.Ticker;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.server.errors.ConflictException;
import dev.modelkeeper.server.request.ModelTarget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns the model names of requests into {@link ModelTarget}s and keeps the alias table.
 * Thread-safe.
 *
 * <p>Every model the server loads is registered under {@code name/version} (so {@code iris} and
 * {@code iris/1} never become two resident copies) or under an alias. A bare name means its highest
 * version; that lookup touches the repository, so its answer is cached for a second. Versioned
 * identifiers are only checked for syntax here: the registry reports unknown ones when a load is
 * attempted, before any budget or lifecycle work starts.
 *
 * <p>An alias is a durable name for one repository version, set by {@code /model/add} and forgotten
 * by {@code /model/remove} or {@code /model/clear}. While it exists, a request for the alias loads
 * its target on demand under the alias, through {@link #registry(ModelRegistry)}.
 */
public final class ModelResolver {

  private static final long LATEST_TTL_NANOS = Duration.ofSeconds(1).toNanos();

  private final ModelRepository repository;
  private final Ticker ticker;
  private final Map<String, String> aliases = new ConcurrentHashMap<>();
  private final Map<String, Latest> latest = new ConcurrentHashMap<>();

  public ModelResolver(ModelRepository repository, Ticker ticker) {
    this.repository = repository;
    this.ticker = ticker;
  }

  /** The repository this resolver reads. */
  ModelRepository repository() {
    return repository;
  }

  /**
   * The target of an Open Inference Protocol path: {@code name} alone (an alias, else the highest
   * version) or {@code name} and {@code version}.
   *
   * @throws dev.modelkeeper.onnx.InvalidModelIdException when the name or version is malformed
   * @throws ModelNotFoundException when a bare name is neither an alias nor a repository model
   */
  ModelTarget resolve(String name, String version) {
    if (version != null) {
      ModelId id = new ModelId(name, version);
      return new ModelTarget(name, version, id.toString(), null);
    }
    String target = aliases.get(name);
    if (target != null) {
      return new ModelTarget(name, ModelId.parse(target).version(), target, name);
    }
    String v = latestVersion(new ModelId(name, null));
    return new ModelTarget(name, v, name + "/" + v, null);
  }

  /**
   * As {@link #resolve} when that needs no read of the repository (a version, an alias or a
   * recently read highest version), else null.
   */
  ModelTarget resolveWithoutReading(String name, String version) {
    if (version == null && !aliases.containsKey(name)) {
      Latest cached = latest.get(name);
      if (cached == null || ticker.read() - cached.readAt >= LATEST_TTL_NANOS) {
        return null;
      }
    }
    return resolve(name, version);
  }

  /** As {@link #resolve}, and also checks that a versioned target is in the repository. */
  ModelTarget resolveKnown(String name, String version) {
    ModelTarget t = resolve(name, version);
    if (version != null) {
      repository.locate(ModelId.parse(t.modelId()));
    }
    return t;
  }

  /** The target of a management {@code model_id}: {@code name} or {@code name/version}. */
  public ModelTarget resolveId(String modelId) {
    ModelId id = ModelId.parse(modelId);
    return resolveKnown(id.name(), id.version());
  }

  /** The versions of {@code name} in the repository, ascending. */
  List<String> versions(String name) {
    List<String> out = new ArrayList<>();
    for (RepositoryEntry e : repository.list()) {
      if (e.name().equals(name)) {
        out.add(e.version());
      }
    }
    return out;
  }

  /** Every model version in the repository. */
  public List<RepositoryEntry> list() {
    return repository.list();
  }

  /** Forgets the cached highest version of {@code name}: the next lookup reads the repository. */
  void forgetLatest(String name) {
    latest.remove(name);
  }

  private String latestVersion(ModelId bare) {
    long now = ticker.read();
    Latest cached = latest.get(bare.name());
    if (cached != null && now - cached.readAt < LATEST_TTL_NANOS) {
      return cached.version;
    }
    String v = repository.locate(bare).version();
    latest.put(bare.name(), new Latest(v, now));
    return v;
  }

  // ------------------------------------------------------------------------ aliases

  /**
   * Makes {@code alias} name {@code targetId} (a {@code name/version}); returns true when the alias
   * is new and false when it already named that target.
   *
   * @throws dev.modelkeeper.onnx.InvalidModelIdException when the alias is not a plain model name
   * @throws ConflictException when the alias already names another model, or is the name of a
   *     repository model (requests for that name would run the alias's target instead)
   */
  boolean putAlias(String alias, String targetId) {
    new ModelId(alias, null);
    if (!versions(alias).isEmpty()) {
      throw new ConflictException(
          "alias '" + alias + "' is the name of a repository model; choose another alias");
    }
    String before = aliases.putIfAbsent(alias, targetId);
    if (before != null && !before.equals(targetId)) {
      throw new ConflictException(
          "alias '" + alias + "' already names '" + before + "'; remove it first");
    }
    return before == null;
  }

  /** The target of {@code alias}, or null when it is not an alias. */
  String aliasTarget(String alias) {
    return aliases.get(alias);
  }

  void forgetAlias(String alias) {
    aliases.remove(alias);
  }

  void forgetAliases() {
    aliases.clear();
  }

  /** A sorted snapshot of the alias table: alias to target. */
  public Map<String, String> aliases() {
    return new TreeMap<>(aliases);
  }

  /** {@code delegate} with aliases resolved to their targets before it is asked. */
  public ModelRegistry registry(ModelRegistry delegate) {
    return new AliasRegistry(delegate);
  }

  /** Asks the delegate for an alias's target; thread-safe. */
  private final class AliasRegistry implements ModelRegistry {
    private final ModelRegistry delegate;

    AliasRegistry(ModelRegistry delegate) {
      this.delegate = delegate;
    }

    @Override
    public ModelFactory getModel(String resolvedModelId, String apiKey) {
      String target = aliases.get(resolvedModelId);
      return delegate.getModel(target != null ? target : resolvedModelId, apiKey);
    }
  }

  /** A cached answer to "the highest version of a name". */
  private static final class Latest {
    final String version;
    final long readAt;

    Latest(String version, long readAt) {
      this.version = version;
      this.readAt = readAt;
    }
  }
}
