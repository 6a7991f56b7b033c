package dev.modelkeeper.onnx;

import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelFactory;
import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.onnx.memory.MemoryCost;
import java.util.List;
import java.util.Objects;

/**
 * A {@link ModelRegistry} over a {@link ModelRepository}: identifiers are {@code name} (the highest
 * version, resolved when the model loads) or {@code name/version}, and factories build {@link
 * OnnxModel}s. Thread-safe.
 *
 * <p>{@link #getModel} validates the identifier ({@link InvalidModelIdException} when malformed)
 * and checks that the repository holds it ({@link ModelNotFoundException} otherwise). The returned
 * factory loads the identifier it is given in {@link ModelFactory#create}, and predicts what its
 * load needs at the peak (measured before, or estimated from the repository's size of it) without
 * loading or downloading it.
 *
 * <p>Aliases: core asks the registry for the resolved identifier (the alias when one is given), so
 * an alias must itself be a repository identifier (e.g. {@code iris} for {@code iris/1}); the model
 * that is loaded is always the one the caller requested.
 */
public final class RepositoryModelRegistry implements ModelRegistry {

  private final ModelRepository repository;
  private final OnnxModelOptions options;
  private final ModelFactory factory = new Factory();

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
    repository.locate(ModelId.parse(resolvedModelId));
    return factory;
  }

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

  /** Builds {@link OnnxModel}s; stateless. */
  private final class Factory implements ModelFactory {

    @Override
    public Model create(String modelId, String apiKey) {
      return OnnxModel.load(repository.fetch(ModelId.parse(modelId)), options);
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
            .orElseGet(() -> MemoryCost.estimate(entry.sizeBytes()))
            .loadPeakBytes();
      } catch (ModelKeeperException e) {
        return -1;
      }
    }
  }
}
