package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.ManagerStats;
import dev.modelkeeper.core.MemoryWait;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelState;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.NotReadyException;
import dev.modelkeeper.server.errors.PathRedaction;
import dev.modelkeeper.server.execution.Batches;
import dev.modelkeeper.server.execution.Execution;
import dev.modelkeeper.server.execution.ExecutionSettings;
import dev.modelkeeper.server.execution.ModelExecutors;
import dev.modelkeeper.server.execution.Workers;
import dev.modelkeeper.server.memory.MemoryGuard;
import dev.modelkeeper.server.memory.ModelMemory;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.server.statistics.InferenceStatistics;
import dev.modelkeeper.server.statistics.ModelStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * The protocol-neutral engine: every transport reaches the models only through here. It resolves a
 * model reference (name, version or alias) once into a {@link ModelTarget}, admits, queues or
 * batches, leases, runs and releases ({@link InferenceService}, {@link ModelExecutors}), and
 * answers metadata, readiness, configuration and the repository and management operations. It
 * returns engine types and throws the engine's typed exceptions, which each transport maps to its
 * own status codes ({@link Failure}). Thread-safe.
 *
 * <p>Calls that may load a model, wait for a lease or read the repository block; transports make
 * them on the engine's {@link #workers()}, never on their own I/O threads.
 */
public final class Engine {

  /** The server's name, as {@code GET /v2} and gRPC's server metadata answer it. */
  public static final String SERVER_NAME = "modelkeeper";

  /** The protocol extensions this server implements, as {@code GET /v2} and gRPC list them. */
  public static final List<String> EXTENSIONS =
      List.of("model_repository", "binary_tensor_data", "statistics", "system_shared_memory");

  /** See {@link Execution#ANY_RUN}. */
  public static final long ANY_RUN = Execution.ANY_RUN;

  /** See {@link Execution#NO_RUN}. */
  public static final long NO_RUN = Execution.NO_RUN;

  private final WithFixedSizeCache manager;
  private final ModelResolver resolver;
  private final ModelEvents events;
  private final InferenceService inference;
  private final ExecutionSettings defaults;
  private final ServerState state;
  private final Workers workers;
  private final InflightBytes inflight;
  private final ModelMemory modelMemory;
  private final MemoryGuard memory;
  private final InferenceStatistics statistics;

  public Engine(
      WithFixedSizeCache manager,
      ModelResolver resolver,
      ModelEvents events,
      InferenceService inference,
      ExecutionSettings defaults,
      ServerState state,
      Workers workers,
      InflightBytes inflight,
      ModelMemory modelMemory,
      MemoryGuard memory,
      InferenceStatistics statistics) {
    this.manager = manager;
    this.resolver = resolver;
    this.events = events;
    this.inference = inference;
    this.defaults = defaults;
    this.state = state;
    this.workers = workers;
    this.inflight = inflight;
    this.modelMemory = modelMemory;
    this.memory = memory;
    this.statistics = statistics;
  }

  /** What takes the server's own folders out of answers to clients. */
  public PathRedaction redaction() {
    return events.redaction();
  }

  /** The threads and the request timeout for everything that may block. */
  public Workers workers() {
    return workers;
  }

  /** The budget of request bytes in flight, which every transport admits its requests into. */
  public InflightBytes inflight() {
    return inflight;
  }

  // ------------------------------------------------------------------------ server

  /** Where the server is in its life: starting (preloading), ready or stopping. */
  public ServerState.Phase phase() {
    return state.phase();
  }

  /** Throws {@link NotReadyException} unless the server is ready. */
  public void checkReady() {
    switch (state.phase()) {
      case READY:
        return;
      case STARTING:
        throw new NotReadyException("the server is starting: preloading models");
      default:
        throw new NotReadyException("the server is shutting down");
    }
  }

  // ------------------------------------------------------------------------ inference

  /**
   * The target of model {@code name} (version {@code version}, or null for the default: an alias,
   * else the highest version); a bare name reads the repository at most once a second.
   */
  public ModelTarget resolve(String name, String version) {
    return resolver.resolve(name, version);
  }

  /** As {@link #resolve} when that needs no read of the repository, else null. */
  public ModelTarget resolveWithoutReading(String name, String version) {
    return inference.resolveWithoutReading(name, version);
  }

  /**
   * Starts {@code request} on {@code target} (which the client named {@code name}); see {@link
   * InferenceService#inferAsync}. Cancelling the future withdraws a queued request.
   */
  public CompletableFuture<InferenceService.Result> infer(
      String name,
      ModelTarget target,
      InferRequest request,
      long deadlineNanos,
      long runHereUpToNanos) {
    return inference.inferAsync(name, target, request, deadlineNanos, runHereUpToNanos);
  }

  /**
   * Runs {@code request} on {@code name} and {@code version} (or null), blocking until answered.
   */
  public InferenceService.Result infer(String name, String version, InferRequest request) {
    return inference.infer(name, version, request);
  }

  // ------------------------------------------------------------------------ models

  /**
   * A model's versions and metadata.
   *
   * @param versions the versions the name offers (the one asked for when a version was given)
   * @param metadata the metadata of the resolved version
   */
  public record ModelInfo(List<String> versions, ModelMetadata metadata) {}

  /** The metadata of {@code name} (and {@code version}, or null); may load the model. */
  public ModelInfo modelInfo(String name, String version) {
    ModelTarget t = resolver.resolveKnown(name, version);
    ModelMetadata md = events.metadata(t.key());
    if (md == null) {
      try (ModelLease lease = manager.acquire(t.modelId(), null, t.alias())) {
        md = ModelExecutors.inferenceModel(lease).metadata();
      }
    }
    List<String> versions =
        version != null || t.alias() != null ? List.of(t.version()) : resolver.versions(name);
    return new ModelInfo(versions, md);
  }

  /**
   * A model's configuration with what the server applies to it filled in.
   *
   * @param name the name the client asked for
   * @param config the model's own configuration
   * @param metadata the model's metadata
   * @param maxBatchSize the largest batch it runs; 0 when it has no batch dimension
   * @param maxQueueDelayMicros how long a batch waits to fill
   * @param preferredBatchSizes the batch sizes a batch is cut at, ascending
   * @param instances how many runs at once
   */
  public record ServedConfig(
      String name,
      ModelConfig config,
      ModelMetadata metadata,
      int maxBatchSize,
      long maxQueueDelayMicros,
      List<Integer> preferredBatchSizes,
      int instances) {}

  /** The configuration of {@code name} (and {@code version}, or null); loads the model. */
  public ServedConfig modelConfig(String name, String version) {
    ModelTarget t = resolver.resolveKnown(name, version);
    try (ModelLease lease = manager.acquire(t.modelId(), null, t.alias())) {
      InferenceModel m = ModelExecutors.inferenceModel(lease);
      ExecutionSettings s = defaults.overriddenBy(m.config().execution());
      boolean batched = Batches.batchable(m) && m.config().maxBatchSize() != 0;
      return new ServedConfig(
          name,
          m.config(),
          m.metadata(),
          batched ? s.maxBatchSize() : 0,
          s.maxQueueDelayNanos() / 1000,
          List.copyOf(new TreeSet<>(s.preferredBatchSizes())),
          s.maxConcurrency());
    }
  }

  /**
   * The target of {@code name} (and {@code version}, or null) when it is ready: resident and READY,
   * or servable on demand (see {@link #isReady}).
   */
  public ModelTarget readyModel(String name, String version) {
    ModelTarget t = resolver.resolveKnown(name, version);
    String notReady = notReadyReason(t);
    if (notReady != null) {
      throw new NotReadyException("model '" + t.key() + "' is not ready (" + notReady + ")");
    }
    return t;
  }

  /**
   * Whether {@code name} (and {@code version}, or null) is ready, as Triton's model readiness and a
   * readiness probe ask: a model is ready when it is resident, and also when it is not but will
   * load on its first request (or is loading now): its repository entry exists, its configuration
   * reads and names nothing ModelKeeper does not serve, and its last load did not fail. So every
   * servable model is ready on a fresh server without loading it. One unloaded on request is not
   * ready until it loads again, as in Triton; one evicted stays ready. The repository index still
   * tells resident models (READY) from the rest.
   */
  public boolean isReady(String name, String version) {
    return notReadyReason(resolver.resolveKnown(name, version)) == null;
  }

  private String notReadyReason(ModelTarget t) {
    for (ModelDescription d : manager.describeModels()) {
      if (d.modelId().equals(t.key()) && d.state() == ModelState.READY) {
        return null;
      }
    }
    return events.refusal(t.key());
  }

  // ------------------------------------------------------------------------ statistics

  /** The statistics of one model version, under the name and version a client knows it by. */
  public record VersionStats(String name, String version, ModelStats stats) {}

  /**
   * The inference statistics of model {@code name}, version {@code version}: every version it
   * serves when {@code version} is null; when {@code name} is null too, every model version that is
   * resident or has served requests (without reading the repository). Reads no model and loads
   * none.
   *
   * @throws ModelNotFoundException starting "Request for unknown model" for a name or version the
   *     repository does not have
   */
  public List<VersionStats> statistics(String name, String version) {
    List<VersionStats> out = new ArrayList<>();
    if (name == null) {
      Set<String> keys = new TreeSet<>(statistics.keys());
      for (ModelDescription d : manager.describeModels()) {
        if (d.state() == ModelState.READY) {
          keys.add(d.modelId());
        }
      }
      Map<String, String> aliases = resolver.aliases();
      for (String key : keys) {
        ModelId id = ModelId.parse(aliases.getOrDefault(key, key));
        if (id.version() != null) { // not an alias removed since it served
          String shown = aliases.containsKey(key) ? key : id.name();
          out.add(new VersionStats(shown, id.version(), statistics.of(key)));
        }
      }
      return out;
    }
    ModelTarget target;
    try {
      target = resolver.resolveKnown(name, version);
    } catch (ModelNotFoundException e) {
      throw new ModelNotFoundException("Request for unknown model: " + e.getMessage());
    }
    if (version != null) {
      return List.of(new VersionStats(name, version, statistics.of(target.key())));
    }
    for (IndexRow r : index(false)) {
      if (r.name().equals(name)) {
        out.add(new VersionStats(r.name(), r.version(), statistics.of(r.key())));
      }
    }
    if (out.isEmpty()) {
      out.add(new VersionStats(name, target.version(), statistics.of(target.key())));
    }
    return out;
  }

  // ------------------------------------------------------------------------ repository

  /**
   * One row of the repository index.
   *
   * @param state READY, LOADING, UNLOADING or UNAVAILABLE
   * @param reason why it is UNAVAILABLE, else empty
   * @param key the resolved identifier the model is (or would be) resident under
   * @param chargedBytes what the budget charges the model now (0 when not resident)
   * @param measured what its memory measured, when it has been measured
   */
  public record IndexRow(
      String name,
      String version,
      String state,
      String reason,
      String key,
      long chargedBytes,
      Optional<MemoryCost> measured) {}

  /** Every repository model and alias with its state; only READY ones when {@code readyOnly}. */
  public List<IndexRow> index(boolean readyOnly) {
    Map<String, ModelState> states = new HashMap<>();
    Map<String, Long> charged = new HashMap<>();
    for (ModelDescription d : manager.describeModels()) {
      states.put(d.modelId(), d.state());
      charged.put(d.modelId(), Math.max(0, d.sizeBytes()));
    }
    List<IndexRow> rows = new ArrayList<>();
    for (RepositoryEntry e : resolver.list()) {
      row(rows, e.name(), e.version(), e.id(), states, charged, readyOnly);
    }
    resolver
        .aliases()
        .forEach(
            (alias, target) ->
                row(
                    rows,
                    alias,
                    ModelId.parse(target).version(),
                    alias,
                    states,
                    charged,
                    readyOnly));
    return rows;
  }

  private void row(
      List<IndexRow> rows,
      String name,
      String version,
      String key,
      Map<String, ModelState> states,
      Map<String, Long> charged,
      boolean readyOnly) {
    ModelState s = states.get(key);
    String state = indexState(s);
    if (readyOnly && !state.equals("READY")) {
      return;
    }
    rows.add(
        new IndexRow(
            name,
            version,
            state,
            s == null ? events.reason(key) : "",
            key,
            charged.getOrDefault(key, 0L),
            modelMemory.measured(key)));
  }

  private static String indexState(ModelState s) {
    if (s == null) {
      return "UNAVAILABLE";
    }
    switch (s) {
      case READY:
        return "READY";
      case LOADING:
        return "LOADING";
      default:
        return "UNLOADING";
    }
  }

  /** Loads the highest version of {@code name} (a no-op when resident); blocks until READY. */
  public ModelTarget load(String name) {
    ModelTarget t = resolver.resolve(name, null);
    manager.addModel(t.modelId(), null, t.alias());
    if (t.alias() == null) { // the other versions of the name load on demand: ready again too
      resolver.versions(name).forEach(v -> events.released(name + "/" + v));
    }
    return t;
  }

  /**
   * Unloads every resident version of {@code name} and loads its highest version again, as the
   * repository now describes it (a configuration or files a load request gave); blocks until READY.
   */
  public ModelTarget reload(String name) {
    resolver.forgetLatest(name);
    try {
      unload(name);
    } catch (ModelNotFoundException e) {
      // nothing of that name was in the repository before: the load says whether it is now
    }
    return load(name);
  }

  /**
   * Unloads every resident version of {@code name}; the identifiers it unloaded. Every version of
   * the name is then not ready until it loads again, resident before or not (see {@link #isReady}).
   */
  public List<String> unload(String name) {
    List<String> keys = residentKeys(name);
    for (String key : keys) {
      manager.remove(key);
    }
    if (resolver.aliasTarget(name) != null) {
      events.unloaded(name);
    } else {
      resolver.versions(name).forEach(v -> events.unloaded(name + "/" + v));
    }
    return keys;
  }

  /** The registered identifiers that unloading {@code name} removes; 404 when it names nothing. */
  private List<String> residentKeys(String name) {
    List<String> keys = new ArrayList<>();
    if (resolver.aliasTarget(name) != null) {
      keys.add(name);
      return keys;
    }
    new ModelId(name, null);
    String prefix = name + "/";
    for (ModelDescription d : manager.describeModels()) {
      if (d.modelId().startsWith(prefix)) {
        keys.add(d.modelId());
      }
    }
    if (keys.isEmpty() && resolver.versions(name).isEmpty()) {
      throw new ModelNotFoundException("no model '" + name + "' in the repository");
    }
    return keys;
  }

  // ------------------------------------------------------------------------ management

  /**
   * What an add registered.
   *
   * @param key the identifier the model is resident under: its alias, else {@code name/version}
   * @param modelId the repository identifier {@code name/version}
   */
  public record Added(String key, String modelId) {}

  /**
   * Loads {@code modelId} ({@code name} or {@code name/version}), under {@code alias} when not
   * null; blocks until READY.
   */
  public Added add(String modelId, String alias, String apiKey) {
    ModelTarget t = resolver.resolveId(modelId);
    if (alias == null) {
      manager.addModel(t.modelId(), apiKey);
      return new Added(t.modelId(), t.modelId());
    }
    boolean added = resolver.putAlias(alias, t.modelId());
    try {
      manager.addModel(t.modelId(), apiKey, alias);
    } catch (RuntimeException e) {
      if (added) {
        resolver.forgetAlias(alias);
      }
      throw e;
    }
    return new Added(alias, t.modelId());
  }

  /**
   * Unloads {@code modelId}: an alias (which is forgotten), {@code name/version}, or every resident
   * version of {@code name}. The identifiers that were resident.
   */
  public List<String> remove(String modelId) {
    List<String> removed = new ArrayList<>();
    if (resolver.aliasTarget(modelId) != null) {
      removeIfPresent(modelId, removed);
      resolver.forgetAlias(modelId);
      events.forget(modelId);
      return removed;
    }
    ModelId id = ModelId.parse(modelId);
    if (id.isLatest()) {
      for (ModelDescription d : manager.describeModels()) {
        if (d.modelId().startsWith(id.name() + "/")) {
          removeIfPresent(d.modelId(), removed);
        }
      }
    } else {
      removeIfPresent(id.toString(), removed);
    }
    return removed;
  }

  private void removeIfPresent(String key, List<String> removed) {
    boolean present = manager.contains(key);
    manager.remove(key);
    if (present) {
      removed.add(key);
    }
  }

  /** Unloads every model and forgets every alias; the identifiers that were resident, sorted. */
  public List<String> clear() {
    Set<String> before = manager.keys();
    manager.clear();
    resolver.aliases().keySet().forEach(events::forget);
    resolver.forgetAliases();
    return before.stream().sorted().toList();
  }

  /**
   * One resident model in the registry.
   *
   * @param model the manager's description
   * @param aliasOf the repository identifier when {@code model} is registered under an alias
   * @param measured what its memory measured, when it has been
   * @param pinned whether it is never evicted
   * @param aliases the aliases that name it
   */
  public record Resident(
      ModelDescription model,
      String aliasOf,
      Optional<MemoryCost> measured,
      boolean pinned,
      List<String> aliases) {}

  /**
   * The process's memory as the cap sees it.
   *
   * @param residentBytes the latest RSS reading, or -1 when none
   */
  public record Memory(
      long capBytes,
      String capSource,
      long residentBytes,
      long jvmBytes,
      long modelsBytes,
      long workingBytes,
      long unaccountedBytes) {}

  /** The registry: resident models, sorted, and the budget's totals and limits. */
  public record Registry(
      List<Resident> models, ManagerStats stats, long maxModels, long maxBytes, Memory memory) {}

  /** The loads and runs waiting for room in the budget now, longest first. */
  public List<MemoryWait> memoryWaits() {
    return manager.waits();
  }

  /** What is resident now and what it costs. */
  public Registry registry() {
    Map<String, String> aliases = resolver.aliases();
    Set<String> pinned = manager.pinned();
    List<ModelDescription> models = new ArrayList<>(manager.describeModels());
    models.sort(Comparator.comparing(ModelDescription::modelId));
    List<Resident> rows = new ArrayList<>();
    for (ModelDescription d : models) {
      List<String> names = new ArrayList<>();
      aliases.forEach(
          (alias, t) -> {
            if (t.equals(d.modelId())) {
              names.add(alias);
            }
          });
      rows.add(
          new Resident(
              d,
              aliases.get(d.modelId()),
              modelMemory.measured(d.modelId()),
              pinned.contains(d.modelId()),
              names));
    }
    return new Registry(
        rows,
        manager.stats(),
        manager.options().maxSize(),
        manager.options().maxBytes(),
        new Memory(
            memory.cap().bytes(),
            memory.cap().source(),
            memory.residentBytes(),
            memory.jvmBytes(),
            manager.usedBytes(),
            manager.workingBytes(),
            manager.outsideBytes()));
  }
}
