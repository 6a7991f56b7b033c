package dev.modelkeeper.server.control;

import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.OverridingRepository;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.errors.Failure;
import dev.modelkeeper.server.errors.PermissionDeniedException;
import dev.modelkeeper.server.request.ModelTarget;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Loads and unloads models on request, with the overrides of Triton's repository extension: a load
 * whose {@code config} parameter (the model configuration in JSON) replaces the model's
 * configuration until the next load, and whose {@code file:} parameters carry the model's files; an
 * unload with {@code unload_dependents}. Thread-safe.
 *
 * <p>A load with overrides is checked first (the JSON reads as a model configuration that
 * ModelKeeper serves, the file paths stay inside the model's folder), then applied: resident
 * versions of the model are unloaded and the model is loaded with them, so the configuration API
 * and every request answer what was applied. When that load fails the previous configuration is put
 * back and the failure answered. A load without parameters loads the model as before (a no-op when
 * it is resident), and puts the repository's own configuration back when an override applied.
 *
 * <p>Model files sent over the network are a way to run code of one's choosing in the server, so
 * {@code file:} parameters are taken only when the server requires a token ({@code --auth-token}),
 * and refused with 403 otherwise. Their size is bounded by the request size limit of each
 * transport.
 *
 * <p>Loads with overrides of one model name are serialized here (a lock per name, never one shared
 * by two names, kept for the names that had an override: a bounded set, since a configuration alone
 * needs a repository model and files need the token); different models load in parallel.
 */
public final class ModelControl {

  /** The load parameter that carries the model configuration in JSON. */
  public static final String CONFIG = "config";

  /** The prefix of the load parameters that carry model files: {@code file:<path>}. */
  public static final String FILE_PREFIX = "file:";

  /** The unload parameter that asks to unload the models that depend on this one too. */
  public static final String UNLOAD_DEPENDENTS = "unload_dependents";

  private final Engine engine;
  private final OverridingRepository overrides;
  private final boolean filesAllowed;
  private final Map<String, Object> locks = new ConcurrentHashMap<>();

  /**
   * Control over {@code engine}'s models, whose repository is {@code overrides}; {@code
   * filesAllowed} when the server requires a token.
   */
  public ModelControl(Engine engine, OverridingRepository overrides, boolean filesAllowed) {
    this.engine = engine;
    this.overrides = overrides;
    this.filesAllowed = filesAllowed;
  }

  /**
   * What a load request asks for beyond loading.
   *
   * @param config the model configuration in JSON, or null
   * @param files each model file's path inside the model's folder and its content
   */
  public record Load(String config, Map<String, byte[]> files) {
    /** A load with nothing to override. */
    public static final Load PLAIN = new Load(null, Map.of());

    public Load {
      files = Map.copyOf(files);
    }

    /**
     * The load that {@code parameters} ask for: {@code config} a string, each {@code file:<path>}
     * the file's bytes (a transport decodes base64 first).
     *
     * @throws BadRequestException naming a parameter of the wrong type or an unknown one
     */
    public static Load of(Map<String, Object> parameters) {
      String config = null;
      Map<String, byte[]> files = new LinkedHashMap<>();
      for (Map.Entry<String, Object> p : parameters.entrySet()) {
        String key = p.getKey();
        Object value = p.getValue();
        if (key.equals(CONFIG)) {
          if (!(value instanceof String)) {
            throw new BadRequestException(
                "load parameter 'config' must be a string: the model configuration in JSON");
          }
          config = (String) value;
        } else if (key.startsWith(FILE_PREFIX)) {
          if (!(value instanceof byte[])) {
            throw new BadRequestException(
                "load parameter '" + key + "' must carry the file's bytes");
          }
          files.put(key.substring(FILE_PREFIX.length()), (byte[]) value);
        } else {
          throw new BadRequestException(
              "unknown load parameter '"
                  + key
                  + "'; a load takes 'config' (the model configuration in JSON) and"
                  + " 'file:<path>' (a model file)");
        }
      }
      return new Load(config, files);
    }
  }

  /**
   * Loads model {@code name} as {@code load} asks; blocks until it is READY.
   *
   * @throws PermissionDeniedException when files are given and the server requires no token
   * @throws BadRequestException when the configuration or a file path is refused, with the reason
   */
  public ModelTarget load(String name, Load load) {
    if (!load.files().isEmpty() && !filesAllowed) {
      throw new PermissionDeniedException(
          "file: load parameters put model files on the server and are taken only when it"
              + " requires a token: start it with --auth-token");
    }
    boolean overriding = load.config() != null || !load.files().isEmpty();
    if (!overriding && overrides.current(name) == null) {
      return engine.load(name);
    }
    if (load.files().isEmpty()) { // a name the repository has, before a lock is kept for it
      overrides.locate(new ModelId(name, null));
    }
    synchronized (locks.computeIfAbsent(name, n -> new Object())) {
      OverridingRepository.Given next = null;
      if (overriding) {
        try {
          next = overrides.prepare(name, load.config(), load.files());
        } catch (IllegalArgumentException e) {
          throw new BadRequestException(
              Failure.FAILED_LOAD + " '" + name + "': " + e.getMessage(), e);
        }
      }
      OverridingRepository.Given before = overrides.install(name, next);
      try {
        ModelTarget t = engine.reload(name);
        overrides.discard(before);
        return t;
      } catch (RuntimeException e) {
        overrides.install(name, before);
        overrides.discard(next);
        throw e;
      }
    }
  }

  /**
   * Unloads every resident version of {@code name}; the identifiers it unloaded. {@code
   * unloadDependents} changes nothing: the models that could depend on another (ensembles) are not
   * served. An override stays until the next load, as in Triton.
   */
  public List<String> unload(String name, boolean unloadDependents) {
    return engine.unload(name);
  }
}
