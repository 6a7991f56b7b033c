package dev.modelkeeper.onnx;

import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.triton.ModelOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A model repository in a local folder: {@code <root>/<name>/<version>/model.onnx} plus an optional
 * {@code config.json} beside it, or Triton's layout: {@code <root>/<name>/config.pbtxt} beside the
 * numbered version folders (read by {@link TritonConfig}: its {@code version_policy} chooses the
 * versions served, its {@code default_model_filename} names the model file). Thread-safe and
 * stateless but for the warnings already given: every call reads the folder afresh, so models added
 * or removed on disk are seen at once.
 *
 * <p>Only identifiers accepted by {@link ModelId} are looked up, and every resolved file must lie
 * inside the root after following symbolic links; a link that leads out of the root is refused with
 * {@link InvalidModelIdException}.
 */
public final class LocalModelRepository implements ModelRepository {

  private static final System.Logger LOG = System.getLogger(LocalModelRepository.class.getName());
  private static final long MAX_CONFIG_BYTES = 64 * 1024;
  private static final long MAX_PBTXT_BYTES = 1024 * 1024;

  /** Stands for a {@code config.pbtxt} that cannot be read, in listings. */
  private static final ModelConfig UNREADABLE =
      ModelConfig.EMPTY.withDeclared(
          new ModelConfig.Declared(
              "", List.of(), List.of(), VersionPolicy.ALL, "", List.of(), null));

  /**
   * Where the model files of a repository whose folder holds only the small files live: a remote
   * store mirrored into the folder, whose model files are fetched on first use. Implementations are
   * thread-safe.
   */
  public interface ModelFiles {
    /** Whether a model file belongs at {@code file} (a path inside the root). */
    boolean exists(Path file);

    /** The length of the model file at {@code file}, or -1 when unknown. */
    long size(Path file);

    /** A local copy of the model file at {@code file}, fetching it when needed. */
    Path fetch(Path file);

    /**
     * A token that changes when the model file at {@code file} changes, known without fetching it;
     * by default its length.
     */
    default String revision(Path file) {
      return "size " + size(file);
    }
  }

  private final Path root;
  private final ModelFiles files;
  private final String location;

  /** The problem last logged for each model whose config is broken; cleared once it parses. */
  private final Map<ModelId, String> badConfigsWarned = new ConcurrentHashMap<>();

  /** Configs parsed, by the real path of their file. */
  private final Map<Path, Parsed> parsed = new ConcurrentHashMap<>();

  /** The settings last reported as not applied, per model with a {@code config.pbtxt}. */
  private final Map<String, List<String>> ignoredReported = new ConcurrentHashMap<>();

  /**
   * A repository over {@code root}.
   *
   * @throws IllegalArgumentException when {@code root} is not an existing folder
   */
  public LocalModelRepository(Path root) {
    this(root, null, null);
  }

  /**
   * A repository over {@code root} whose model files come from {@code files} (null: from the folder
   * itself), called {@code location} in messages (null: the folder).
   *
   * @throws IllegalArgumentException when {@code root} is not an existing folder
   */
  public LocalModelRepository(Path root, ModelFiles files, String location) {
    Objects.requireNonNull(root, "root");
    this.files = files;
    try {
      this.root = root.toRealPath();
    } catch (IOException e) {
      throw new IllegalArgumentException("model repository folder does not exist: " + root, e);
    }
    if (!Files.isDirectory(this.root)) {
      throw new IllegalArgumentException("model repository is not a folder: " + root);
    }
    this.location = location != null ? location : this.root.toString();
  }

  /** The real path of the root folder. */
  public Path root() {
    return root;
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public List<Path> localFolders() {
    return List.of(root);
  }

  @Override
  public List<RepositoryEntry> list() {
    List<RepositoryEntry> out = new ArrayList<>();
    try (DirectoryStream<Path> models = Files.newDirectoryStream(root)) {
      for (Path modelDir : models) {
        String name = modelDir.getFileName().toString();
        ModelId id;
        try {
          id = new ModelId(name, null);
        } catch (InvalidModelIdException e) {
          continue; // not a model folder
        }
        List<String> versions;
        ModelConfig triton;
        try {
          triton = tritonConfig(id, false);
          versions = served(id, triton);
        } catch (InvalidModelIdException e) {
          LOG.log(Level.WARNING, "skipping {0}: {1}", name, e.getMessage());
          continue;
        }
        for (String version : versions) {
          try {
            out.add(entry(id.withVersion(version), triton));
          } catch (InvalidModelIdException | ModelNotFoundException e) {
            LOG.log(Level.WARNING, "skipping {0}/{1}: {2}", name, version, e.getMessage());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list model repository " + root, e);
    }
    out.sort(
        Comparator.comparing(RepositoryEntry::name)
            .thenComparingLong(e -> Long.parseLong(e.version())));
    return out;
  }

  @Override
  public RepositoryEntry locate(ModelId id) {
    ModelConfig triton = tritonConfig(id, false);
    return entry(concrete(id, triton), triton);
  }

  @Override
  public ModelBackend backend(ModelId id) {
    ModelConfig triton = tritonConfig(id, false);
    return triton == null || triton == UNREADABLE
        ? ModelBackends.of("", "")
        : ModelBackends.of(triton);
  }

  @Override
  public ModelArtifact fetch(ModelId id) {
    ModelConfig triton = tritonConfig(id, true);
    ModelId v = concrete(id, triton);
    Path file = modelFile(v, triton);
    ModelConfig config = triton != null ? triton : readConfig(v, true);
    return new ModelArtifact(
        v.name(), v.version(), files == null ? file : files.fetch(file), config);
  }

  /**
   * The model file of {@code id} (a concrete version), checked to be a regular file inside the
   * root.
   */
  private Path modelFile(ModelId id, ModelConfig triton) {
    Path dir = root.resolve(id.name()).resolve(id.version());
    Path file =
        dir.resolve(
            triton == null || triton == UNREADABLE
                ? MODEL_FILE
                : triton.declared().modelFileName());
    if (files != null) {
      if (!files.exists(file)) {
        throw new ModelNotFoundException("model '" + id + "' is not in the repository");
      }
      return file;
    }
    Path real;
    try {
      real = file.toRealPath();
    } catch (NoSuchFileException e) {
      throw new ModelNotFoundException("model '" + id + "' is not in the repository");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
    if (!real.startsWith(root)) {
      throw new InvalidModelIdException(
          "model '"
              + id
              + "' resolves outside the repository root (symbolic link to "
              + real
              + ")");
    }
    if (!Files.isRegularFile(real)) {
      throw new ModelNotFoundException("model '" + id + "' has no regular model file in " + root);
    }
    return real;
  }

  /**
   * The version {@code id} names, with the modification time and length of its model file and of
   * the configuration files that apply to it ({@code config.pbtxt} beside the versions, {@code
   * config.json} in the version folder).
   */
  @Override
  public String revision(ModelId id) {
    ModelConfig triton = tritonConfig(id, false);
    ModelId v = concrete(id, triton);
    Path modelDir = root.resolve(v.name());
    StringBuilder out = new StringBuilder(v.toString());
    out.append(' ').append(stateOf(modelDir.resolve(TritonConfig.FILE_NAME)));
    out.append(' ').append(stateOf(modelDir.resolve(v.version()).resolve(ModelConfig.FILE_NAME)));
    if (triton != UNREADABLE) { // a model refused for its config may have no model file
      Path file = modelFile(v, triton);
      out.append(' ').append(files == null ? stateOf(file) : files.revision(file));
    }
    return out.toString();
  }

  /** A file's modification time and length, or "none" when it is not there. */
  private static String stateOf(Path file) {
    try {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      return a.lastModifiedTime() + "/" + a.size();
    } catch (IOException e) {
      return "none";
    }
  }

  private RepositoryEntry entry(ModelId id, ModelConfig triton) {
    if (triton == UNREADABLE) { // listed with its problem, whatever its version folder holds
      return new RepositoryEntry(id.name(), id.version(), "", -1);
    }
    Path file = modelFile(id, triton);
    ModelConfig config = triton != null ? triton : readConfig(id, false);
    long size = config.expectedSizeBytes();
    if (size < 0 && files != null) {
      size = files.size(file);
    } else if (size < 0) {
      try {
        size = Files.size(file);
      } catch (IOException e) {
        size = -1;
      }
    }
    return new RepositoryEntry(id.name(), id.version(), config.description(), size);
  }

  @Override
  public Map<ModelId, String> configProblems() {
    return Map.copyOf(badConfigsWarned);
  }

  /**
   * {@code id} itself when it has a version the model serves, else its highest version served.
   *
   * @throws ModelNotFoundException when the model has no such version, or its version policy does
   *     not serve it
   */
  private ModelId concrete(ModelId id, ModelConfig triton) {
    List<String> versions = served(id, triton);
    if (!id.isLatest()) {
      if (triton != null && !versions.contains(id.version())) {
        if (versions(id, triton).contains(id.version())) {
          throw new ModelNotFoundException(
              "version "
                  + id.version()
                  + " of model '"
                  + id.name()
                  + "' is not served: its "
                  + triton.declared().versionPolicy().describe()
                  + " (versions served: "
                  + versions
                  + ")");
        }
      }
      return id;
    }
    if (versions.isEmpty()) {
      throw new ModelNotFoundException("model '" + id + "' is not in the repository");
    }
    return id.withVersion(versions.get(versions.size() - 1));
  }

  /** The versions of a model its version policy serves, ascending. */
  private List<String> served(ModelId id, ModelConfig triton) {
    List<String> all = versions(id, triton);
    return triton == null ? all : triton.declared().versionPolicy().select(all);
  }

  /**
   * The model's {@code config.pbtxt}, or null when it has none. A broken one fails a load ({@code
   * strict}) with {@link ModelUnservableException}; a listing gets {@link #UNREADABLE} and the
   * problem is warned once.
   */
  private ModelConfig tritonConfig(ModelId id, boolean strict) {
    Path modelDir = root.resolve(id.name());
    Path file = modelDir.resolve(TritonConfig.FILE_NAME);
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    try {
      Path real = file.toRealPath();
      if (!real.startsWith(root)) {
        throw new InvalidModelIdException(
            "config of '" + id.name() + "' resolves outside the repository root (" + real + ")");
      }
      Path realDir = modelDir.toRealPath();
      ModelConfig config =
          parsedOnce(
              real,
              MAX_PBTXT_BYTES,
              text -> TritonConfig.parse(text, file, realDir),
              c -> labelFiles(c, realDir));
      if (badConfigsWarned.keySet().removeIf(k -> k.name().equals(id.name()))) {
        LOG.log(Level.INFO, "{0} parses again", file);
      }
      List<String> ignored = config.declared().ignored();
      if (!ignored.isEmpty() && !ignored.equals(ignoredReported.put(id.name(), ignored))) {
        LOG.log(
            Level.INFO,
            "model ''{0}'': {1} settings not applied by ModelKeeper: {2}",
            id.name(),
            TritonConfig.FILE_NAME,
            String.join(", ", ignored));
      }
      return config;
    } catch (IOException | IllegalArgumentException e) {
      boolean unsupported = e instanceof UnsupportedFeatureException;
      String problem =
          (unsupported ? "" : "bad ") + file + " (model '" + id.name() + "'): " + e.getMessage();
      boolean news = false;
      for (String v : versions(id, UNREADABLE)) {
        news |= !problem.equals(badConfigsWarned.put(id.withVersion(v), problem));
      }
      if (news) { // once per model and problem, here only: the load's failure says it again
        LOG.log(
            Level.WARNING,
            problem
                + (unsupported
                    ? "; it is listed as UNAVAILABLE and refused"
                    : "; it is listed, and fails to load"));
      }
      if (strict) {
        throw new ModelUnservableException(problem, e, unsupported, true);
      }
      return UNREADABLE;
    }
  }

  /**
   * The version folders of a model that hold its model file (any numbered folder when its config
   * cannot be read), ascending.
   */
  private List<String> versions(ModelId id, ModelConfig triton) {
    Path dir = root.resolve(id.name());
    List<String> out = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return out;
    }
    try {
      if (!dir.toRealPath().startsWith(root)) {
        throw new InvalidModelIdException(
            "model '" + id.name() + "' resolves outside the repository root");
      }
    } catch (IOException e) {
      return out;
    }
    try (DirectoryStream<Path> versions = Files.newDirectoryStream(dir)) {
      for (Path v : versions) {
        String version = v.getFileName().toString();
        try {
          new ModelId(id.name(), version);
        } catch (InvalidModelIdException e) {
          continue;
        }
        Path file = v.resolve(triton == null ? MODEL_FILE : triton.declared().modelFileName());
        boolean present =
            triton == UNREADABLE
                ? Files.isDirectory(v)
                : files == null ? Files.exists(file) : files.exists(file);
        if (present) {
          out.add(version);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list versions of " + id.name(), e);
    }
    out.sort(Comparator.comparingLong(Long::parseLong));
    return out;
  }

  /**
   * The config in file {@code real}, parsed when it (or one of the files it names, {@code
   * dependsOn}) changed since it was last parsed: a config is read once, not on every listing,
   * lookup and load. A config that does not parse is read again each time.
   */
  private ModelConfig parsedOnce(
      Path real,
      long maxBytes,
      Function<String, ModelConfig> parse,
      Function<ModelConfig, List<Path>> dependsOn)
      throws IOException {
    Parsed last = parsed.get(real);
    if (last != null && last.current()) {
      return last.config();
    }
    FileState state = FileState.of(real);
    if (state.size() > maxBytes) {
      throw new IllegalArgumentException("larger than " + maxBytes + " bytes");
    }
    ModelConfig config = parse.apply(Files.readString(real, StandardCharsets.UTF_8));
    List<FileState> files = new ArrayList<>();
    files.add(state);
    for (Path p : dependsOn.apply(config)) {
      files.add(FileState.of(p));
    }
    parsed.put(real, new Parsed(files, config));
    return config;
  }

  /** The label files a {@code config.pbtxt} names. */
  private static List<Path> labelFiles(ModelConfig config, Path modelDir) {
    List<Path> out = new ArrayList<>();
    for (ModelOutput o : config.declared().triton().getOutputList()) {
      if (!o.getLabelFilename().isEmpty()) {
        out.add(modelDir.resolve(o.getLabelFilename()).normalize());
      }
    }
    return out;
  }

  /** A config as parsed, and the state of the files it was read from. */
  private record Parsed(List<FileState> files, ModelConfig config) {
    boolean current() {
      for (FileState f : files) {
        if (!f.current()) {
          return false;
        }
      }
      return true;
    }
  }

  /** A file's modification time and size when it was read. */
  private record FileState(Path path, FileTime modified, long size) {
    static FileState of(Path path) throws IOException {
      BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
      return new FileState(path, a.lastModifiedTime(), a.size());
    }

    boolean current() {
      try {
        return equals(of(path));
      } catch (IOException e) {
        return false;
      }
    }
  }

  /** The version's config, EMPTY when absent; a broken config fails a load but not a listing. */
  private ModelConfig readConfig(ModelId id, boolean strict) {
    Path file = root.resolve(id.name()).resolve(id.version()).resolve(ModelConfig.FILE_NAME);
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return ModelConfig.EMPTY;
    }
    try {
      Path real = file.toRealPath();
      if (!real.startsWith(root)) {
        throw new InvalidModelIdException(
            "config of '" + id + "' resolves outside the repository root (" + real + ")");
      }
      ModelConfig config = parsedOnce(real, MAX_CONFIG_BYTES, ModelConfig::parse, c -> List.of());
      badConfigsWarned.remove(id);
      return config;
    } catch (IOException | IllegalArgumentException e) {
      String problem = "bad " + file + " (model '" + id + "'): " + e.getMessage();
      if (!problem.equals(badConfigsWarned.put(id, problem))) { // once per model and problem
        LOG.log(Level.WARNING, problem + "; it is listed without it and fails to load");
      }
      if (strict) {
        throw new ModelUnservableException(problem, e, false, true);
      }
      return ModelConfig.EMPTY;
    }
  }
}
