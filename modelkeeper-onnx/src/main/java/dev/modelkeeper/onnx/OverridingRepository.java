package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * A repository whose models a load request may give another configuration, and other files, until
 * the next load: Triton's repository extension, whose load carries a {@code config} parameter (the
 * model configuration in JSON) and {@code file:} parameters (the model's files, named by their path
 * inside the model's folder). Everything else is answered by the repository beneath. Thread-safe.
 *
 * <p>A configuration given alone applies to the model files of the repository beneath. Files given
 * with it are written to a folder of their own under the private {@code folder} (one per load, so a
 * model still running from the files of the last load keeps them), with the configuration beside
 * them as a {@code config.pbtxt}, and that folder serves the model instead. A file's path must lie
 * inside its model's folder: no absolute path, no {@code ..}, no {@code config.pbtxt}.
 *
 * <p>An override is {@link #prepare prepared} (checked, files written) before it is {@link #install
 * installed}; the caller loads the model and puts the previous override back ({@link #install} with
 * it) when the load fails. Every override has its own generation in {@link #revision}, so a refusal
 * remembered for one configuration is not answered for the next.
 */
public final class OverridingRepository implements ModelRepository {

  private static final System.Logger LOG = System.getLogger(OverridingRepository.class.getName());

  /** A path segment of a file parameter: no separators, not {@code .} or {@code ..}. */
  private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.+=@,-]{0,254}");

  private final ModelRepository base;
  private final Path folder;
  private final AtomicLong generations = new AtomicLong();
  private final Map<String, Given> overrides = new ConcurrentHashMap<>();

  /**
   * What one load request gave a model. Immutable and thread-safe.
   *
   * @param name the model's name
   * @param generation its number among every override, for {@link #revision}
   * @param config the configuration it applies, for a configuration given alone; else null
   * @param files the repository of the files given, with the configuration as their {@code
   *     config.pbtxt}; else null
   * @param dir the folder the files were written to; else null
   */
  public record Given(
      String name, long generation, ModelConfig config, LocalModelRepository files, Path dir) {}

  /**
   * {@code base} with overrides; files given by load requests are written under {@code folder}, a
   * folder only this server reads and writes.
   */
  public OverridingRepository(ModelRepository base, Path folder) {
    this.base = base;
    this.folder = folder;
  }

  /** The repository beneath the overrides. */
  public ModelRepository base() {
    return base;
  }

  /**
   * Checks an override of model {@code name} and writes its files, without applying it.
   *
   * @param configJson the model configuration in JSON (protobuf's mapping of Triton's {@code
   *     ModelConfig}); required when {@code files} are given
   * @param files each file's path inside the model's folder (e.g. {@code 1/model.onnx}) and content
   * @throws IllegalArgumentException naming what is wrong: malformed JSON, a setting that cannot be
   *     served, a file path that leaves the model's folder, files without a configuration
   * @throws ModelNotFoundException when only a configuration is given and the repository beneath
   *     does not hold {@code name}
   */
  public Given prepare(String name, String configJson, Map<String, byte[]> files) {
    new ModelId(name, null); // a valid name, or InvalidModelIdException
    long generation = generations.incrementAndGet();
    if (files.isEmpty()) {
      base.locate(new ModelId(name, null));
      Path modelDir =
          base instanceof LocalModelRepository l ? l.root().resolve(name) : folder.resolve(name);
      return new Given(
          name, generation, TritonConfig.parseJson(configJson, name, modelDir), null, null);
    }
    if (configJson == null) {
      throw new IllegalArgumentException(
          "file: parameters need a config parameter too: the model configuration of the files");
    }
    dev.modelkeeper.onnx.triton.ModelConfig proto = TritonConfig.fromJson(configJson);
    Path dir = folder.resolve(name + "-" + generation);
    Path modelDir = dir.resolve(name);
    try {
      Files.createDirectories(modelDir);
      for (Map.Entry<String, byte[]> f : files.entrySet()) {
        Path target = fileTarget(modelDir, f.getKey());
        Files.createDirectories(target.getParent());
        Files.write(target, f.getValue());
      }
      Files.writeString(modelDir.resolve(TritonConfig.FILE_NAME), TritonConfig.toText(proto));
      LocalModelRepository repository = new LocalModelRepository(dir);
      // reads the configuration strictly, and finds the model file of the highest version
      repository.fetch(new ModelId(name, null));
      return new Given(name, generation, null, repository, dir);
    } catch (IOException e) {
      delete(dir);
      throw new UncheckedIOException("cannot write the files of a load of '" + name + "'", e);
    } catch (RuntimeException e) {
      delete(dir);
      throw e instanceof ModelNotFoundException
          ? new IllegalArgumentException(
              "the files hold no model file in a numbered version folder (e.g. 'file:1/"
                  + (proto.getDefaultModelFilename().isEmpty()
                      ? MODEL_FILE
                      : proto.getDefaultModelFilename())
                  + "')",
              e)
          : e;
    }
  }

  /** Where file parameter {@code key} is written in {@code modelDir}; refused when outside it. */
  private static Path fileTarget(Path modelDir, String key) {
    String[] segments = key.split("/", -1);
    for (String s : segments) {
      if (!SEGMENT.matcher(s).matches()) {
        throw new IllegalArgumentException(
            "file parameter 'file:"
                + key
                + "' is not a path inside the model's folder: use names of letters, digits"
                + " and _.+=@,- separated by '/', without '..'");
      }
    }
    if (key.equals(TritonConfig.FILE_NAME)) {
      throw new IllegalArgumentException(
          "file parameter 'file:"
              + TritonConfig.FILE_NAME
              + "' is not taken: the config parameter gives the configuration");
    }
    Path target = modelDir.resolve(key).normalize();
    if (!target.startsWith(modelDir) || target.equals(modelDir)) {
      throw new IllegalArgumentException(
          "file parameter 'file:" + key + "' is not a path inside the model's folder");
    }
    return target;
  }

  /**
   * Applies {@code override} to its model (null: none, the repository's own configuration), in
   * place of the one before, which is returned (null when there was none); its files stay until
   * {@link #discard}.
   */
  public Given install(String name, Given override) {
    Given before = override == null ? overrides.remove(name) : overrides.put(name, override);
    return before;
  }

  /** Deletes the files of {@code override}, which no longer applies; nothing when it has none. */
  public void discard(Given override) {
    if (override != null && override.dir() != null) {
      delete(override.dir());
    }
  }

  /** The override that applies to model {@code name}, or null. */
  public Given current(String name) {
    return overrides.get(name);
  }

  /** The names of the models with an override, for {@code --preload '*'} and the index. */
  public List<String> overridden() {
    return new ArrayList<>(overrides.keySet());
  }

  @Override
  public List<RepositoryEntry> list() {
    List<RepositoryEntry> out = new ArrayList<>();
    Map<String, Given> withFiles = new HashMap<>();
    overrides.forEach(
        (name, o) -> {
          if (o.files() != null) {
            withFiles.put(name, o);
          }
        });
    for (RepositoryEntry e : base.list()) {
      if (!withFiles.containsKey(e.name())) {
        out.add(e);
      }
    }
    for (Given o : withFiles.values()) {
      out.addAll(o.files().list());
    }
    out.sort(
        Comparator.comparing(RepositoryEntry::name)
            .thenComparingLong(e -> Long.parseLong(e.version())));
    return out;
  }

  @Override
  public RepositoryEntry locate(ModelId id) {
    Given o = overrides.get(id.name());
    return o != null && o.files() != null ? o.files().locate(id) : base.locate(id);
  }

  @Override
  public ModelArtifact fetch(ModelId id) {
    Given o = overrides.get(id.name());
    if (o == null) {
      return base.fetch(id);
    }
    if (o.files() != null) {
      return o.files().fetch(id);
    }
    ModelArtifact a = base.fetch(id);
    return new ModelArtifact(a.name(), a.version(), a.modelFile(), o.config());
  }

  @Override
  public String location() {
    return base.location();
  }

  @Override
  public ModelBackend backend(ModelId id) {
    return base.backend(id);
  }

  @Override
  public String revision(ModelId id) {
    Given o = overrides.get(id.name());
    if (o == null) {
      return base.revision(id);
    }
    String files = o.files() != null ? o.files().revision(id) : base.revision(id);
    return files + " override " + o.generation();
  }

  @Override
  public List<Path> localFolders() {
    List<Path> out = new ArrayList<>(base.localFolders());
    out.add(folder);
    return out;
  }

  @Override
  public Map<ModelId, String> configProblems() {
    Map<ModelId, String> out = new HashMap<>(base.configProblems());
    overrides.forEach(
        (name, o) -> {
          out.keySet().removeIf(id -> id.name().equals(name));
          if (o.files() != null) {
            out.putAll(o.files().configProblems());
          }
        });
    return out;
  }

  /** Forgets every override and deletes the private folder with the files loads gave. */
  public void close() {
    overrides.clear();
    delete(folder);
  }

  /** Deletes {@code dir} and what it holds; a failure is logged, not thrown. */
  private static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
              Files.delete(d);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot delete the files of an earlier load in {0}: {1}", dir, e);
    }
  }
}
