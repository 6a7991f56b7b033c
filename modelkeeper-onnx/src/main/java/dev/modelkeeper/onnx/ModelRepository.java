package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelNotFoundException;
import java.util.List;
import java.util.Map;

/**
 * A store of ONNX models laid out as {@code <root>/<name>/<version>/model.onnx} with an optional
 * {@code config.json} beside each model file. Implementations are thread-safe.
 */
public interface ModelRepository {

  /** The file name of a version's model inside its folder. */
  String MODEL_FILE = "model.onnx";

  /** Every model version, sorted by name and then numerically by version. */
  List<RepositoryEntry> list();

  /**
   * Finds a version without fetching its model file: the highest version when {@code id} has none.
   *
   * @throws ModelNotFoundException when the model or version does not exist
   */
  RepositoryEntry locate(ModelId id);

  /**
   * Makes the model's files available on local disk (downloading and verifying them for a remote
   * repository) and returns them.
   *
   * @throws ModelNotFoundException when the model or version does not exist
   */
  ModelArtifact fetch(ModelId id);

  /** Where the repository lives, for messages (a folder or a URL). */
  String location();

  /**
   * The models whose configuration file the listings so far found broken, with the problem (they
   * are listed, and fail to load); empty when there are none or the repository does not tell.
   */
  default Map<ModelId, String> configProblems() {
    return Map.of();
  }
}
