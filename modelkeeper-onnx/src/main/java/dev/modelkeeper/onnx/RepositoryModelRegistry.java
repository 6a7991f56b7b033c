package dev.modelkeeper.onnx;

import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.memory.MemoryCost;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link ModelRegistry} over a {@link ModelRepository}: identifiers are {@code name} (the highest
 * version, resolved when the model loads) or {@code name/version}, and factories build models of
 * the {@link ModelBackends}. Thread-safe.
 *
 * <p>{@link #getModel} validates the identifier ({@link InvalidModelIdException} when malformed)
 * and checks that the repository holds it ({@link ModelNotFoundException} otherwise). The returned
 * factory loads the identifier it is given in {@link ModelFactory#create} with the {@link
 * ModelBackend} its configuration names, and predicts what its load needs at the peak (measured
 * before, or estimated from the repository's size of it) without loading or downloading it.
 *
 * <p>A model whose load fails for a reason in its files ({@link ModelUnservableException}) is
 * remembered with the repository's {@link ModelRepository#revision revision} of its files: {@link
 * #getModel} answers the same failure at once, without loading it again, until the files change. So
 * a client asking again gets the same answer, and the memory budget is not disturbed by loads that
 * cannot succeed.
 *
 * <p>Aliases: core asks the registry for the resolved identifier (the alias when one is given), so
 * an alias must itself be a repository identifier (e.g. {@code iris} for {@code iris/1}); the model
 * that is loaded is always the one the caller requested.
 */
public final class RepositoryModelRegistry implements ModelRegistry {

  private final ModelRepository repository;
  private final OnnxModelOptions options;
  private final ModelFactory factory = new Factory();

  /** How models loaded from now on call other models; see {@link #callModelsThrough}. */
  private volatile ModelCaller caller = ModelCaller.NONE;

  /** The last refusal of each model version (name/version), with the revision of its files. */
  private final Map<String, Refusal> refusals = new ConcurrentHashMap<>();

  public RepositoryModelRegistry(ModelRepository repository) {
    this(repository, OnnxModelOptions.defaults());
  }

  public RepositoryModelRegistry(ModelRepository repository, OnnxModelOptions options) {
    this.repository = Objects.requireNonNull(repository, "repository");
    this.options = Objects.requireNonNull(options, "options");
  }

  /**
   * The factory for {@code resolvedModelId}.
   *
   * @throws InvalidModelIdException when the identifier is malformed or leaves the root
   * @throws ModelNotFoundException when the repository does not hold it
   */
  @Override
  public ModelFactory getModel(String resolvedModelId, String apiKey) {
    RepositoryEntry entry = repository.locate(ModelId.parse(resolvedModelId));
    Refusal refused = refusals.get(entry.id());
    if (refused != null) {
      if (refused.revision().equals(repository.revision(entry.modelId()))) {
        throw refused.failure();
      }
      refusals.remove(entry.id(), refused); // its files changed: the next load tries again
    }
    return factory;
  }

  /** Models loaded from now on call other models through {@code caller} (the server's engine). */
  public void callModelsThrough(ModelCaller caller) {
    this.caller = Objects.requireNonNull(caller, "caller");
  }

  /**
   * Why {@code modelId} (name or name/version) is refused until its files change, when it is; the
   * revision is not checked.
   */
  public Optional<ModelUnservableException> refusal(String modelId) {
    try {
      Refusal r = refusals.get(repository.locate(ModelId.parse(modelId)).id());
      return r == null ? Optional.empty() : Optional.of(r.failure());
    } catch (ModelKeeperException e) {
      return Optional.empty();
    }
  }

  /** A load that failed for a reason in the files of the revision it was read from. */
  private record Refusal(String revision, ModelUnservableException failure) {}

  /** Every model version in the repository, for the repository index endpoint. */
  public List<RepositoryEntry> list() {
    return repository.list();
  }

  /**
   * The repository entry {@code modelId} names (the highest version for a bare name).
   *
   * @throws InvalidModelIdException when the identifier is malformed
   * @throws ModelNotFoundException when the repository does not hold it
   */
  public RepositoryEntry locate(String modelId) {
    return repository.locate(ModelId.parse(modelId));
  }

  public ModelRepository repository() {
    return repository;
  }

  /** Builds models with their backends. */
  private final class Factory implements ModelFactory {

    @Override
    public Model create(String modelId, String apiKey) {
      ModelId id = ModelId.parse(modelId);
      RepositoryEntry entry = repository.locate(id);
      // read before the files are: a change while it loads makes the next request try again
      String revision = repository.revision(entry.modelId());
      try {
        ModelArtifact artifact = repository.fetch(id);
        return ModelBackends.of(artifact.config()).load(artifact, options, caller);
      } catch (ModelUnservableException e) {
        if (revision != null) {
          refusals.put(entry.id(), new Refusal(revision, e));
        }
        throw e;
      }
    }

    /**
     * What the load will need at its peak: the measured figure of this model when there is one,
     * else the conservative estimate from its size in the repository.
     */
    @Override
    public long predictedSizeBytes(String modelId) {
      try {
        RepositoryEntry entry = repository.locate(ModelId.parse(modelId));
        return options
            .memoryCosts()
            .known(entry.id())
            .filter(MemoryCost::measured)
            .map(MemoryCost::loadPeakBytes)
            .orElseGet(
                () -> repository.backend(entry.modelId()).estimatedPeakBytes(entry.sizeBytes()));
      } catch (ModelKeeperException e) {
        return -1;
      }
    }
  }
}
