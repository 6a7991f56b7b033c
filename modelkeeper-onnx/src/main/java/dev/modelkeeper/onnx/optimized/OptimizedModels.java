package dev.modelkeeper.onnx.optimized;

import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A folder of pre-optimized model forms (see the {@linkplain dev.modelkeeper.onnx.optimized package
 * description} for the layout, the key and the rules). Thread-safe and process-safe: any number of
 * threads and processes may load through one folder.
 *
 * <p>{@link #prepare} tells one load what to read: the form of the model file when this process has
 * verified it, else the model file itself, and then it schedules the form's work on the builder
 * (one at a time, off the loads' path): hashing the model file (once per content: a file whose
 * {@link FileIdentity} is unchanged keeps its digest), checking the form found in full (once per
 * process), building one missing or broken. A load itself reads only files' metadata, so the first
 * load of a model file in a process reads the model file. {@link #NONE} reads every model file as
 * it is and builds nothing.
 */
public final class OptimizedModels {

  private static final System.Logger LOG = System.getLogger(OptimizedModels.class.getName());

  /** The name of a form's graph file; its initializers go to this name plus {@code .data}. */
  static final String MODEL = "model.onnx";

  static final String DATA = MODEL + ".data";

  /** Initializers of this many bytes or more go to the side file. */
  private static final long EXTERNAL_MIN_BYTES = 1024;

  /** The version of the layout and of how a form is made; part of every key. */
  private static final int LAYOUT = 1;

  /** An entry's name: its key. */
  private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");

  /** The least file size worth a form: below it a plain load takes about a millisecond. */
  public static final long DEFAULT_MIN_BYTES = 1L << 20;

  /** Reads every model file as it is; builds nothing. */
  public static final OptimizedModels NONE =
      new OptimizedModels(null, "", Long.MAX_VALUE, Runnable::run, null, Listener.NONE);

  /**
   * Observes a folder; for tests and metrics. Callbacks run on the loading or the building thread
   * and must be quick and thread-safe.
   */
  public interface Listener {
    Listener NONE = new Listener() {};

    /** A load reads the pre-optimized form {@code key} of {@code modelFile}. */
    default void reading(Path modelFile, String key) {}

    /** The builder builds the form {@code key} of {@code modelFile}; it holds the form's lock. */
    default void building(Path modelFile, String key) {}

    /** The form {@code key} was published under its final name. */
    default void published(String key) {}

    /** The form {@code key} failed its check or could not be read; it is dropped. */
    default void dropped(String key, String why) {}
  }

  /**
   * Writes a form: creates a session on a model file with options that {@code configure} completes
   * (where to write the form), and closes it. Supplied by the loader, which knows the session
   * options, and accounts for the session's memory; called on the builder's thread.
   */
  @FunctionalInterface
  public interface Writer {
    /**
     * Writes the form of {@code modelFile}, or nothing when it should wait (the memory it needs is
     * not free now); a later load schedules it again.
     *
     * @return whether the form was written
     */
    boolean write(Path modelFile, Configure configure) throws Exception;
  }

  /** Completes the options of the session that writes a form. */
  @FunctionalInterface
  public interface Configure {
    void accept(OrtSession.SessionOptions options) throws OrtException;
  }

  private final Path dir;
  private final String runtime;
  private final long minBytes;
  private final Executor builder;

  /** The builder when this folder object started it, to stop it on {@link #close}. */
  private final ExecutorService ownBuilder;

  private final Listener listener;

  /** Set by {@link #close}: no build is scheduled any more. */
  private volatile boolean closed;

  /** The digest of each model file read, with the identity it had when it was hashed. */
  private final Map<Path, Digest> digests = new ConcurrentHashMap<>();

  /** The entries checked in this process, with the identities their files had then. */
  private final Map<String, Map<String, FileIdentity>> checked = new ConcurrentHashMap<>();

  /** The entries found broken in this process, with the identities their files had then. */
  private final Map<String, Map<String, FileIdentity>> broken = new ConcurrentHashMap<>();

  /** The builds scheduled or running in this process (see {@link Build#token}). */
  private final Set<String> scheduled = ConcurrentHashMap.newKeySet();

  /** Keys whose failure to build or publish was logged at WARNING: said once per process. */
  private final Map<String, Boolean> warned = new ConcurrentHashMap<>();

  private OptimizedModels(
      Path dir,
      String runtime,
      long minBytes,
      Executor builder,
      ExecutorService ownBuilder,
      Listener listener) {
    this.dir = dir;
    this.runtime = runtime;
    this.minBytes = minBytes;
    this.builder = builder;
    this.ownBuilder = ownBuilder;
    this.listener = listener;
  }

  /**
   * Forms kept in {@code dir} (created when first needed) for ONNX Runtime {@code runtimeVersion},
   * for model files of at least {@link #DEFAULT_MIN_BYTES}, built one at a time by a daemon thread.
   */
  public static OptimizedModels in(Path dir, String runtimeVersion) {
    ExecutorService builder = daemonBuilder();
    return new OptimizedModels(
        Objects.requireNonNull(dir, "dir"),
        Objects.requireNonNull(runtimeVersion, "runtimeVersion"),
        DEFAULT_MIN_BYTES,
        builder,
        builder,
        Listener.NONE);
  }

  /**
   * Forms kept in {@code dir} for ONNX Runtime {@code runtimeVersion}.
   *
   * @param minBytes the least model file size given a form (smaller files load as they are)
   * @param builder runs each build (a session writing the form, then forcing it to disk,
   *     checksumming it and renaming it into place); {@code Runnable::run} builds on the loading
   *     thread, before the load
   */
  public static OptimizedModels in(
      Path dir, String runtimeVersion, long minBytes, Executor builder, Listener listener) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(runtimeVersion, "runtimeVersion");
    if (minBytes < 0) {
      throw new IllegalArgumentException("minBytes must not be negative, was " + minBytes);
    }
    return new OptimizedModels(
        dir,
        runtimeVersion,
        minBytes,
        Objects.requireNonNull(builder, "builder"),
        null,
        Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Schedules no more builds and waits up to {@code timeout} for the one running on a builder this
   * folder object started (a builder given to {@link #in(Path, String, long, Executor, Listener)}
   * is its owner's to stop). Loads still read the forms kept. Idempotent.
   *
   * @return whether no build is still running
   */
  public boolean close(Duration timeout) {
    closed = true;
    if (ownBuilder == null) {
      return true;
    }
    ownBuilder.shutdown();
    try {
      return ownBuilder.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The folder, when forms are kept. */
  public Optional<Path> dir() {
    return Optional.ofNullable(dir);
  }

  /**
   * What one load of {@code modelFile} reads, for a session configured as {@code settings} says (a
   * canonical description of every session option that is set): its pre-optimized form when this
   * process has verified it, else the model file, in which case the form's work (hashing, checking,
   * building with {@code writer}) is scheduled. Never throws: when the folder cannot be used, the
   * load reads the model file (and a WARNING says why, once per model file).
   */
  public Load prepare(Path modelFile, String settings, Writer writer) {
    if (dir == null) {
      return new Plain(modelFile);
    }
    try {
      if (Files.size(modelFile) < minBytes) {
        return new Plain(modelFile);
      }
      Load form = verifiedForm(modelFile, settings);
      if (form != null) {
        return form;
      }
      schedule(new Build(modelFile, settings, writer));
      // a builder on this thread has checked or built it now; another has only been given the work
      form = verifiedForm(modelFile, settings);
      return form != null ? form : new Plain(modelFile);
    } catch (IOException | RuntimeException e) {
      warnOnce(
          modelFile.toString(),
          "cannot use the pre-optimized form of {0} ({1}); it loads from the model file",
          modelFile,
          e.toString());
      return new Plain(modelFile);
    }
  }

  /**
   * The form of {@code modelFile} under {@code settings} when this process knows the file's digest
   * and has checked the form in full, and the files of both are as they were then (their metadata
   * alone is read: nothing is hashed on a load's path); else null.
   */
  private Load verifiedForm(Path modelFile, String settings) throws IOException {
    FileIdentity identity = FileIdentity.of(modelFile);
    Digest known = digests.get(identity.path());
    if (known == null || !known.identity().equals(identity)) {
      return null;
    }
    String key = key(known.sha256(), settings);
    Path entry = dir.resolve(key);
    Map<String, FileIdentity> was = checked.get(key);
    if (was == null || !Files.isDirectory(entry) || !was.equals(snapshot(entry))) {
      return null;
    }
    listener.reading(modelFile, key);
    return new Prebuilt(modelFile, key, entry);
  }

  /** A load of {@code modelFile} as it is. */
  public Load plain(Path modelFile) {
    return new Plain(modelFile);
  }

  /**
   * What one load reads; see {@link #prepare}. Used by the loading thread only: the session is
   * created from {@link #file()} with {@link #configure}; when that fails for a form, {@link
   * #failed} drops it and the load reads the model file.
   */
  public interface Load {

    /** What a load reads. */
    enum Kind {
      /** The model file, as it is. */
      PLAIN,
      /** The verified pre-optimized form, with graph optimizations off. */
      PRE_OPTIMIZED
    }

    Kind kind();

    /** The file to create the session from. */
    Path file();

    /**
     * The files whose pages ONNX Runtime may map and use in place (the initializers of a
     * pre-optimized form); none for a model file read as it is.
     */
    List<Path> mappedFiles();

    /** Sets on the session's {@code options} what this load needs. */
    void configure(OrtSession.SessionOptions options) throws OrtException;

    /**
     * No session could be created from {@link #file()}: a pre-optimized form is dropped, to be
     * built again, and the load reads the model file as it is.
     */
    void failed(Exception cause);
  }

  private static final class Plain implements Load {
    private final Path file;

    Plain(Path file) {
      this.file = file;
    }

    @Override
    public Kind kind() {
      return Kind.PLAIN;
    }

    @Override
    public Path file() {
      return file;
    }

    @Override
    public List<Path> mappedFiles() {
      return List.of();
    }

    @Override
    public void configure(OrtSession.SessionOptions options) {}

    @Override
    public void failed(Exception cause) {}
  }

  private final class Prebuilt implements Load {
    private final Path modelFile;
    private final String key;
    private final Path entry;

    Prebuilt(Path modelFile, String key, Path entry) {
      this.modelFile = modelFile;
      this.key = key;
      this.entry = entry;
    }

    @Override
    public Kind kind() {
      return Kind.PRE_OPTIMIZED;
    }

    @Override
    public Path file() {
      return entry.resolve(MODEL);
    }

    @Override
    public List<Path> mappedFiles() {
      return List.of(entry.resolve(DATA));
    }

    @Override
    public void configure(OrtSession.SessionOptions options) throws OrtException {
      options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.NO_OPT);
    }

    @Override
    public void failed(Exception cause) {
      checked.remove(key);
      listener.dropped(key, cause.toString());
      warnOnce(
          key,
          "ONNX Runtime cannot read the pre-optimized form {0} of {1} ({2}); it loads from the"
              + " model file and the form is built again",
          entry,
          modelFile,
          cause.getMessage());
      dropWhenUnlocked(key);
    }
  }

  // ---- building -----------------------------------------------------------------------------

  /** Hands {@code build} to the builder unless the same one is scheduled already. */
  private void schedule(Build build) {
    if (closed || !scheduled.add(build.token)) {
      return;
    }
    try {
      builder.execute(build);
    } catch (RuntimeException e) { // a builder shut down: the form is not built
      scheduled.remove(build.token);
      LOG.log(Level.DEBUG, "cannot schedule the form of {0}: {1}", build.modelFile, e.toString());
    }
  }

  /**
   * One model file's form, on the builder's thread: the file is hashed (unless its digest is
   * known), the form found is checked in full once per process, and one missing or broken is built.
   * Everything that reads a whole file happens here, off the loads' path.
   */
  private final class Build implements Runnable {
    private final Path modelFile;
    private final String settings;
    private final Writer writer;

    /** What {@link #scheduled} holds while this build waits or runs. */
    private final String token;

    private String key;
    private Digest digest;

    Build(Path modelFile, String settings, Writer writer) {
      this.modelFile = modelFile;
      this.settings = settings;
      this.writer = writer;
      this.token = modelFile.toAbsolutePath() + "\n" + settings;
    }

    @Override
    public void run() {
      try {
        digest = digest(modelFile);
        key = key(digest.sha256(), settings);
        buildUnderLock();
      } catch (Exception e) {
        warnOnce(
            key != null ? key : modelFile.toString(),
            "cannot keep a pre-optimized form of {0} ({1}); it loads from the model file",
            modelFile,
            e.toString());
      } finally {
        scheduled.remove(token);
      }
    }

    /**
     * Builds the form unless another process holds its lock (it builds it) or it exists by the time
     * the lock is taken; a form found broken is deleted first.
     */
    private void buildUnderLock() throws Exception {
      Path entry = dir.resolve(key);
      boolean absent = !Files.isDirectory(entry);
      if (!absent && usable(entry, key, digest.sha256())) {
        return;
      }
      Files.createDirectories(dir);
      try (FileChannel channel =
          FileChannel.open(
              dir.resolve(key + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        FileLock lock = tryLock(channel);
        if (lock == null) {
          return; // another process (or another folder object of this one) builds it now
        }
        try {
          // published by another process meanwhile (a form found broken is not checked twice)
          if (absent && Files.isDirectory(entry) && usable(entry, key, digest.sha256())) {
            return;
          }
          deleteTree(entry);
          deleteLeftovers(key);
          Path part = Files.createTempDirectory(dir, key + ".");
          try {
            listener.building(modelFile, key);
            if (writer.write(modelFile, options -> configure(options, part))) {
              publish(part, entry);
            } else {
              LOG.log(
                  Level.DEBUG,
                  "the pre-optimized form of {0} waits for free memory; a later load asks again",
                  modelFile);
            }
          } finally {
            deleteTreeQuietly(part);
          }
        } finally {
          lock.release();
        }
      }
    }

    /** The options of the session that writes the form into {@code part}. */
    private void configure(OrtSession.SessionOptions options, Path part) throws OrtException {
      options.setOptimizedModelFilePath(part.resolve(MODEL).toString());
      options.addConfigEntry("session.optimized_model_external_initializers_file_name", DATA);
      options.addConfigEntry(
          "session.optimized_model_external_initializers_min_size_in_bytes",
          Long.toString(EXTERNAL_MIN_BYTES));
      // the session's only product is the file: it need not pack weights for runs
      options.addConfigEntry("session.disable_prepacking", "1");
    }

    /** Forces the form to disk, records it and renames it into place. */
    private void publish(Path part, Path entry) throws IOException {
      Entry e =
          Entry.describe(key, digest.sha256(), digest.identity().path().toString(), runtime, part);
      if (!e.files().containsKey(MODEL)) {
        throw new IOException("ONNX Runtime wrote no " + MODEL);
      }
      e.writeTo(part);
      Files.move(part, entry, StandardCopyOption.ATOMIC_MOVE);
      checked.put(key, snapshot(entry)); // checksummed just now, by this process
      listener.published(key);
      LOG.log(Level.DEBUG, "pre-optimized form of {0} kept in {1}", modelFile, entry);
      deleteSuperseded(e);
    }
  }

  // ---- entries ------------------------------------------------------------------------------

  /**
   * Whether the entry {@code key} holds the files it records, made from {@code sha256} by this
   * runtime. Checked in full (lengths and checksums) once per process and state of its files (a
   * {@link FileIdentity} each); a form found broken is reported once per such state.
   */
  private boolean usable(Path entry, String key, String sha256) {
    Map<String, FileIdentity> now;
    try {
      now = snapshot(entry);
    } catch (IOException | RuntimeException e) {
      return false; // gone meanwhile
    }
    if (now.equals(checked.get(key))) {
      return true;
    }
    if (now.equals(broken.get(key))) {
      return false;
    }
    String why;
    try {
      Entry e = Entry.read(entry);
      if (!e.key().equals(key)
          || !e.sourceSha256().equals(sha256)
          || !e.runtime().equals(runtime)) {
        why = "its record names another model file, runtime or key";
      } else if (!e.files().containsKey(MODEL)) {
        why = "its record lists no " + MODEL;
      } else {
        why = e.mismatch(entry);
      }
    } catch (NoSuchFileException e) {
      why = "it has no " + Entry.FILE_NAME;
    } catch (IOException | RuntimeException e) {
      why = "its record cannot be read: " + e.getMessage();
    }
    if (why == null) {
      checked.put(key, now);
      return true;
    }
    checked.remove(key);
    broken.put(key, now);
    listener.dropped(key, why);
    LOG.log(
        Level.WARNING,
        "pre-optimized form {0} failed its check ({1}); it is built again",
        entry,
        why);
    return false;
  }

  /** The identity of every file in the folder {@code entry}. */
  private static Map<String, FileIdentity> snapshot(Path entry) throws IOException {
    Map<String, FileIdentity> files = new HashMap<>();
    try (DirectoryStream<Path> list = Files.newDirectoryStream(entry)) {
      for (Path f : list) {
        files.put(f.getFileName().toString(), FileIdentity.of(f));
      }
    }
    return Map.copyOf(files);
  }

  /** Deletes the entry {@code key} when its lock is free; else leaves it to its holder. */
  private void dropWhenUnlocked(String key) {
    try (FileChannel channel =
        FileChannel.open(
            dir.resolve(key + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      FileLock lock = tryLock(channel);
      if (lock != null) {
        try {
          deleteTree(dir.resolve(key));
        } finally {
          lock.release();
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "cannot drop the pre-optimized form {0}: {1}", key, e.toString());
    }
  }

  /** Deletes the entries made from an earlier content of the model file {@code made} came from. */
  private void deleteSuperseded(Entry made) {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, Files::isDirectory)) {
      for (Path e : entries) {
        String name = e.getFileName().toString();
        if (name.equals(made.key()) || !HEX64.matcher(name).matches()) {
          continue;
        }
        try {
          Entry other = Entry.read(e);
          if (other.sourcePath().equals(made.sourcePath())
              && !other.sourceSha256().equals(made.sourceSha256())) {
            LOG.log(Level.DEBUG, "deleting {0}, made from an earlier {1}", e, made.sourcePath());
            dropWhenUnlocked(name);
          }
        } catch (IOException | RuntimeException ignored) {
          // not an entry, or one being replaced: left to its own check
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "cannot look for superseded forms in {0}: {1}", dir, e.toString());
    }
  }

  /**
   * Deletes the folders of {@code key} that an interrupted builder left ({@code <key>.<random>},
   * {@code <key>.<random>.part}); the caller holds the key's lock.
   */
  private void deleteLeftovers(String key) throws IOException {
    try (DirectoryStream<Path> parts =
        Files.newDirectoryStream(dir, p -> p.getFileName().toString().startsWith(key + "."))) {
      for (Path p : parts) {
        if (Files.isDirectory(p)) {
          deleteTree(p);
        }
      }
    }
  }

  // ---- keys and digests ---------------------------------------------------------------------

  /** The key of the form of content {@code sha256} under {@code settings}. */
  String key(String sha256, String settings) {
    String text =
        "modelkeeper pre-optimized form "
            + LAYOUT
            + "\nmodel "
            + sha256
            + "\nruntime "
            + runtime
            + "\nprocessor "
            + Processor.IDENTITY
            + "\nsession "
            + settings
            + "\n";
    return HexFormat.of().formatHex(sha256().digest(text.getBytes(StandardCharsets.UTF_8)));
  }

  /** A model file's SHA-256, with the identity the file had when it was read. */
  record Digest(FileIdentity identity, String sha256) {}

  /**
   * A file modified less than this long before it was hashed is hashed again at its next load: its
   * times may not show a write that follows within the same tick of the file system's clock.
   */
  private static final long RACY_MILLIS = 2_000;

  /** The digest of {@code file}: computed when its content is new to this process. */
  private Digest digest(Path file) throws IOException {
    FileIdentity identity = FileIdentity.of(file);
    Digest known = digests.get(identity.path());
    if (known != null && known.identity().equals(identity)) {
      return known;
    }
    MessageDigest md = sha256();
    // read, not mapped: a mapping's pages would count in this process's memory until collected
    try (InputStream in = Files.newInputStream(identity.path())) {
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) >= 0; ) {
        md.update(buf, 0, n);
      }
    }
    Digest d = new Digest(identity, HexFormat.of().formatHex(md.digest()));
    // remembered only when the file was not written while it was read, nor just before: a write
    // within the file system's clock tick after the read could leave its times as they were
    long age = System.currentTimeMillis() - identity.modified().toMillis();
    if (age > RACY_MILLIS && FileIdentity.of(file).equals(identity)) {
      digests.put(identity.path(), d);
    }
    return d;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** The processor a form optimized at the highest level may be specific to. */
  private static final class Processor {
    static final String IDENTITY = identity();

    /** The architecture and the first {@code flags} line of /proc/cpuinfo (its SHA-256). */
    private static String identity() {
      String arch = System.getProperty("os.arch", "unknown");
      try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        String flags =
            lines
                .filter(l -> l.startsWith("flags") || l.startsWith("Features"))
                .findFirst()
                .orElse("");
        return arch
            + " "
            + HexFormat.of().formatHex(sha256().digest(flags.getBytes(StandardCharsets.UTF_8)));
      } catch (IOException | UncheckedIOException | SecurityException e) {
        return arch + " " + Runtime.getRuntime().availableProcessors() + " processors";
      }
    }
  }

  // ---- files and locks ----------------------------------------------------------------------

  /**
   * Takes the lock without waiting; null when another process holds it, or another channel of this
   * JVM (the JVM reports that as an overlap).
   */
  private static FileLock tryLock(FileChannel channel) throws IOException {
    try {
      return channel.tryLock();
    } catch (OverlappingFileLockException e) {
      return null;
    }
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> all = Files.walk(root)) {
      for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static void deleteTreeQuietly(Path root) {
    try {
      deleteTree(root);
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.DEBUG, "cannot delete {0}: {1}", root, e.toString());
    }
  }

  private void warnOnce(String key, String message, Object... args) {
    if (warned.putIfAbsent(key, Boolean.TRUE) == null) {
      LOG.log(Level.WARNING, message, args);
    } else {
      LOG.log(Level.DEBUG, message, args);
    }
  }

  private static ExecutorService daemonBuilder() {
    return Executors.newSingleThreadExecutor(
        r -> {
          Thread t = new Thread(r, "modelkeeper-optimized-forms");
          t.setDaemon(true);
          return t;
        });
  }
}
