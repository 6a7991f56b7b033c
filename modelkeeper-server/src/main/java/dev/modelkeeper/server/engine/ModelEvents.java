package dev.modelkeeper.server.engine;

import dev.modelkeeper.core.LifecycleListener;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.InvalidModelIdException;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.server.errors.PathRedaction;
import dev.modelkeeper.server.request.Classification;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers, per resolved identifier, why a model is not resident (for the repository index's
 * {@code reason}) and the metadata of its last load (so metadata requests do not reload evicted
 * models). Thread-safe; events arrive on the threads that load and unload models.
 *
 * <p>Both maps hold only identifiers the registry accepted (events start after the registry
 * lookup), so they are bounded by the repository and the alias table.
 */
public final class ModelEvents implements LifecycleListener {

  static final String NOT_LOADED = "not loaded; the first inference or a load request loads it";

  private final Map<String, String> reasons = new ConcurrentHashMap<>();

  /** The identifiers whose last load failed. */
  private final Set<String> failed = ConcurrentHashMap.newKeySet();

  /** The identifiers unloaded on request (not evicted) and not loaded since. */
  private final Set<String> unloaded = ConcurrentHashMap.newKeySet();

  private final ModelRepository repository;
  private final Map<String, ModelMetadata> metadata = new ConcurrentHashMap<>();
  private final Map<String, Classification> classes = new ConcurrentHashMap<>();

  private final PathRedaction redaction;

  /** Events of the models of {@code repository}, whose config problems explain a model too. */
  public ModelEvents(ModelRepository repository) {
    this.repository = repository;
    this.redaction = PathRedaction.of(repository.localFolders());
  }

  /** What takes the repository's folders out of answers to clients. */
  public PathRedaction redaction() {
    return redaction;
  }

  @Override
  public void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {
    reasons.remove(modelId);
    failed.remove(modelId);
    unloaded.remove(modelId);
    if (model instanceof InferenceModel) {
      InferenceModel m = (InferenceModel) model;
      metadata.put(modelId, m.metadata());
      classes.put(modelId, Classification.of(m));
    }
  }

  @Override
  public void loadFailed(String modelId, Throwable cause) {
    String reason = "load failed: " + cause.getMessage();
    reasons.put(modelId, reason);
    failed.add(modelId);
  }

  /**
   * Ends what an unload on request held of {@code modelId} (a load of its name was requested); a
   * failed load still holds it.
   */
  void released(String modelId) {
    unloaded.remove(modelId);
  }

  /** Marks {@code modelId} unloaded on request: not ready until it loads again. */
  void unloaded(String modelId) {
    unloaded.add(modelId);
  }

  /**
   * Why {@code modelId}, which is not resident, is not ready, for a client: it was unloaded on
   * request, its last load failed, or its config does not read or names what is not served; null
   * when it will load on its next request (never loaded, or evicted).
   */
  String refusal(String modelId) {
    if (failed.contains(modelId) || unloaded.contains(modelId)) {
      String reason = reasons.get(modelId);
      return reason != null ? redaction.apply(reason) : "unloaded";
    }
    String problem = configProblem(modelId);
    return problem == null ? null : redaction.apply(problem);
  }

  @Override
  public void removed(String modelId, Model model, RemovalCause cause) {
    if (!cause.isEviction()) { // unloaded on request: not ready until loaded again, as in Triton
      unloaded.add(modelId);
    }
    reasons.put(
        modelId,
        cause.isEviction()
            ? "evicted to make room ("
                + cause.name().toLowerCase(Locale.ROOT).replace('_', ' ')
                + ")"
            : "unloaded");
  }

  /**
   * Why {@code modelId} is not resident, for a client (no server paths): its last event, else a
   * problem of its config.
   */
  String reason(String modelId) {
    return redaction.apply(rawReason(modelId));
  }

  private String rawReason(String modelId) {
    String reason = reasons.get(modelId);
    if (reason != null) {
      return reason;
    }
    String problem = configProblem(modelId);
    return problem != null ? problem : NOT_LOADED;
  }

  private String configProblem(String modelId) {
    Map<ModelId, String> problems = repository.configProblems();
    if (!problems.isEmpty()) {
      try {
        String problem = problems.get(ModelId.parse(modelId));
        if (problem != null) {
          return problem + "; it is refused until its config changes";
        }
      } catch (InvalidModelIdException e) {
        // an alias: its target's reason applies
      }
    }
    return null;
  }

  /** The metadata of the last load of {@code modelId}, or null when it never loaded. */
  ModelMetadata metadata(String modelId) {
    return metadata.get(modelId);
  }

  /** How the outputs of the last load of {@code modelId} are classified. */
  Classification classes(String modelId) {
    return classes.getOrDefault(modelId, Classification.NONE);
  }

  /** Forgets what was known about {@code modelId} (an alias that now names nothing). */
  void forget(String modelId) {
    reasons.remove(modelId);
    failed.remove(modelId);
    unloaded.remove(modelId);
    metadata.remove(modelId);
    classes.remove(modelId);
  }
}
