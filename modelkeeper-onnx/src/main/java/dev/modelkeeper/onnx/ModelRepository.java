package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelNotFoundException;
import java.nio.file.Path;
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
   * The backend that serves {@code id} (a concrete version), as far as the repository can tell
   * without fetching it: its {@code config.pbtxt}'s choice where it reads one, else ONNX Runtime.
   * Used to predict the first load of a model that was never measured.
   */
  default ModelBackend backend(ModelId id) {
    return ModelBackends.of("", "");
  }

  /**
   * A token that changes whenever the files of the version {@code id} names change (its model file
   * and its configuration), read without downloading anything; null when the repository cannot
   * tell. A model refused for a reason in its files is refused the same way, without another load,
   * until its token changes.
   *
   * @throws ModelNotFoundException when the model or version does not exist
   */
  default String revision(ModelId id) {
    return null;
  }

  /**
   * The folders on this machine that hold the repository's files (its root, a mirror, a download
   * cache): answers to clients name files relative to them, never by the server's own paths.
   */
  default List<Path> localFolders() {
    return List.of();
  }

  /**
   * The models whose configuration file the listings so far found broken, with the problem (they
   * are listed, and fail to load); empty when there are none or the repository does not tell.
   */
  default Map<ModelId, String> configProblems() {
    return Map.of();
  }
}
