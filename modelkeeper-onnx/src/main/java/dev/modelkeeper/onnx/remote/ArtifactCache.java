package dev.modelkeeper.onnx.remote;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * A disk cache of artifacts downloaded over HTTP or from S3, shared by the threads of one process
 * and by the processes of one host. Thread-safe and process-safe.
 *
 * <h2>How one artifact is fetched</h2>
 *
 * <ol>
 *   <li>An HTTP artifact is named by its SHA-256: {@code <dir>/sha256/<hex>}; an S3 object by a
 *       hash of its bucket, key and ETag. A cached file is used only after its length and digest
 *       (SHA-256, or the MD5 of a single-part S3 upload) are verified again, on every fetch; a file
 *       that fails is deleted and downloaded anew.
 *   <li>In one process, concurrent fetches of one artifact share a single flight: the first caller
 *       downloads, later callers wait for its outcome (success or failure) with a timeout.
 *   <li>Across processes, the downloader holds an OS file lock on {@code <hex>.lock} for the whole
 *       download and re-checks the cache after taking it, so a process that waited finds the file
 *       the other one wrote and does not download it again.
 *   <li>The body streams into a temporary file in the same folder while being hashed; only a body
 *       of the right length and digest is forced to disk and atomically renamed into place.
 *       Anything else (error, short body, digest mismatch, timeout) deletes the temporary file, so
 *       a corrupt or partial artifact is never visible under its final name.
 *   <li>The whole download (headers and body) must finish within the download timeout; a stalled
 *       body is aborted by closing its stream. Large downloads log their progress.
 * </ol>
 *
 * <p>Lock order: the in-process flight (a future in a map, never held across I/O as a lock), then
 * the file lock. No Java monitor is held while downloading.
 */
public final class ArtifactCache {

  private static final System.Logger LOG = System.getLogger(ArtifactCache.class.getName());
  private static final Pattern HEX64 = Pattern.compile("[0-9a-f]{64}");
  private static final long PROGRESS_MIN_BYTES = 8L << 20;
  private static final long LOCK_POLL_MILLIS = 20;

  /**
   * Observes a cache; for metrics and tests. Callbacks run on the fetching thread and must be quick
   * and thread-safe.
   */
  public interface Listener {
    /** This thread joined another thread's download of the artifact. */
    default void joinedDownload(URI uri, String sha256) {}

    /** Another process holds the artifact's file lock; this thread waits for it. */
    default void waitingForLock(URI uri, String sha256) {}

    /** A download started (the cache did not hold a verified copy). */
    default void downloadStarted(URI uri, String sha256, long size) {}

    /** A download finished and was verified and renamed into place. */
    default void downloaded(URI uri, String sha256, long bytes, long nanos) {}

    /** A cached file failed verification and was deleted. */
    default void corruptEntryDeleted(Path file) {}
  }

  private static final Listener NO_LISTENER = new Listener() {};

  /**
   * Where the bytes of one artifact come from (an HTTP URL, an S3 object). Implementations are
   * thread-safe.
   */
  public interface Source {
    /** The artifact's address, for messages and the listener. */
    URI uri();

    /**
     * Opens the body; the caller closes it.
     *
     * @param timeout the longest the request may wait for an answer
     * @throws ArtifactDownloadException (or a subtype) when the store refuses or cannot be reached
     */
    Body open(Duration timeout) throws IOException;
  }

  /**
   * An opened body.
   *
   * @param stream the bytes
   * @param declaredLength the length the store announced, or -1
   */
  public record Body(InputStream stream, long declaredLength) {}

  /**
   * What a downloaded artifact must be.
   *
   * @param name its file name in the cache: letters, digits, {@code - .}, at most 100
   * @param size its length in bytes
   * @param algorithm the digest algorithm that checks it ({@code SHA-256}, {@code MD5}), or null
   *     when only its length can be checked
   * @param digest the expected digest in lowercase hex, or null with the algorithm
   */
  public record Expected(String name, long size, String algorithm, String digest) {
    public Expected {
      if (name == null || !NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("not a cache file name: " + name);
      }
      if ((algorithm == null) != (digest == null)) {
        throw new IllegalArgumentException("an algorithm needs a digest and the other way round");
      }
    }
  }

  private static final Pattern NAME = Pattern.compile("[0-9a-z][0-9a-z.-]{0,99}");

  private final Path objects;
  private final HttpClient client;
  private final Duration downloadTimeout;
  private final Listener listener;
  private final ConcurrentHashMap<String, CompletableFuture<Path>> inFlight =
      new ConcurrentHashMap<>();
  private final AtomicLong downloads = new AtomicLong();

  /** A cache in {@code dir} (created when absent) with no listener. */
  public ArtifactCache(Path dir, HttpClient client, Duration downloadTimeout) {
    this(dir, client, downloadTimeout, NO_LISTENER);
  }

  /**
   * A cache in {@code dir} (created when absent).
   *
   * @param downloadTimeout the longest one download may take, headers and body
   */
  public ArtifactCache(Path dir, HttpClient client, Duration downloadTimeout, Listener listener) {
    Objects.requireNonNull(dir, "dir");
    this.client = Objects.requireNonNull(client, "client");
    this.downloadTimeout = Objects.requireNonNull(downloadTimeout, "downloadTimeout");
    this.listener = Objects.requireNonNull(listener, "listener");
    if (downloadTimeout.isNegative() || downloadTimeout.isZero()) {
      throw new IllegalArgumentException(
          "downloadTimeout must be positive, was " + downloadTimeout);
    }
    this.objects = dir.resolve("sha256");
    try {
      Files.createDirectories(objects);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create artifact cache folder " + objects, e);
    }
  }

  /**
   * The verified local copy of the artifact at {@code uri} with digest {@code sha256} and length
   * {@code size}, downloading it unless a verified copy is cached.
   *
   * @throws ArtifactIntegrityException when the body's length or digest is wrong
   * @throws DownloadTimeoutException when the download or the wait for another one runs out
   * @throws ArtifactDownloadException for any other failure (HTTP status, connection)
   */
  public Path fetch(URI uri, String sha256, long size) {
    Objects.requireNonNull(uri, "uri");
    if (sha256 == null || !HEX64.matcher(sha256).matches()) {
      throw new IllegalArgumentException("not a lowercase hex SHA-256: " + sha256);
    }
    return fetch(new HttpSource(uri), new Expected(sha256, size, "SHA-256", sha256));
  }

  /**
   * The verified local copy of the artifact {@code source} gives, downloading it unless a verified
   * copy named {@code expected.name()} is cached.
   *
   * @throws ArtifactIntegrityException when the body's length or digest is wrong
   * @throws DownloadTimeoutException when the download or the wait for another one runs out
   * @throws ArtifactDownloadException for any other failure (the store's answer, the connection)
   */
  public Path fetch(Source source, Expected expected) {
    URI uri = source.uri();
    String sha256 = expected.name();
    Path target = objects.resolve(sha256);
    if (verified(target, expected)) {
      return target;
    }
    CompletableFuture<Path> mine = new CompletableFuture<>();
    CompletableFuture<Path> running = inFlight.putIfAbsent(sha256, mine);
    if (running != null) {
      listener.joinedDownload(uri, sha256);
      return await(running, uri);
    }
    try {
      Path p = fetchUnderFileLock(source, expected, target);
      mine.complete(p);
      return p;
    } catch (RuntimeException | Error e) {
      mine.completeExceptionally(e);
      throw e;
    } finally {
      inFlight.remove(sha256, mine);
    }
  }

  /** Downloads completed by this instance (verified and renamed into place). */
  public long downloadCount() {
    return downloads.get();
  }

  /** The folder holding the artifacts. */
  public Path objectsDir() {
    return objects;
  }

  public Duration downloadTimeout() {
    return downloadTimeout;
  }

  // -------------------------------------------------------------------------------------------

  private Path await(CompletableFuture<Path> running, URI uri) {
    long waitMillis = downloadTimeout.toMillis() + lockTimeout().toMillis();
    try {
      return running.get(waitMillis, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException) {
        throw (RuntimeException) c; // joiners share the downloader's outcome
      }
      if (c instanceof Error) {
        throw (Error) c;
      }
      throw new ArtifactDownloadException("download of " + uri + " failed", c);
    } catch (TimeoutException e) {
      throw new DownloadTimeoutException(
          "timed out after " + waitMillis + " ms waiting for another thread's download of " + uri);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ArtifactDownloadException(
          "interrupted while waiting for the download of " + uri, e);
    }
  }

  private Duration lockTimeout() {
    return downloadTimeout.plusSeconds(30);
  }

  private Path fetchUnderFileLock(Source source, Expected expected, Path target) {
    URI uri = source.uri();
    Path lockFile = objects.resolve(expected.name() + ".lock");
    try (FileChannel ch =
            FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = lock(ch, uri, expected.name())) {
      if (verified(target, expected)) {
        return target; // another process (or an earlier flight) finished while we waited
      }
      download(source, expected, target);
      return target;
    } catch (IOException e) {
      throw new ArtifactDownloadException("cannot use the artifact cache for " + uri + ": " + e, e);
    }
  }

  /**
   * Takes the file lock, polling so that the wait is bounded. Another cache instance on the same
   * folder in this JVM counts as another holder (the JVM reports its lock as overlapping).
   */
  private FileLock lock(FileChannel ch, URI uri, String sha256) throws IOException {
    FileLock lock = tryLock(ch);
    if (lock != null) {
      return lock;
    }
    listener.waitingForLock(uri, sha256);
    LOG.log(Level.INFO, "waiting for another process to finish downloading {0}", uri);
    long deadline = System.nanoTime() + lockTimeout().toNanos();
    while (true) {
      try {
        Thread.sleep(LOCK_POLL_MILLIS); // polling an OS lock held by another process
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ArtifactDownloadException("interrupted while waiting for the lock of " + uri, e);
      }
      lock = tryLock(ch);
      if (lock != null) {
        return lock;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new DownloadTimeoutException(
            "timed out after "
                + lockTimeout().toSeconds()
                + "s waiting for another process's download of "
                + uri);
      }
    }
  }

  private static FileLock tryLock(FileChannel ch) throws IOException {
    try {
      return ch.tryLock();
    } catch (OverlappingFileLockException e) {
      return null; // held through another channel of this JVM
    }
  }

  /**
   * True when {@code file} exists with the right length and digest; deletes it when it is wrong.
   */
  private boolean verified(Path file, Expected expected) {
    if (!Files.exists(file)) {
      return false;
    }
    try {
      if (Files.size(file) == expected.size()
          && (expected.algorithm() == null
              || digest(file, expected.algorithm()).equals(expected.digest()))) {
        return true;
      }
      LOG.log(Level.WARNING, "cached artifact {0} failed verification; deleting it", file);
      Files.deleteIfExists(file);
      listener.corruptEntryDeleted(file);
      return false;
    } catch (IOException e) {
      throw new ArtifactDownloadException("cannot verify cached artifact " + file + ": " + e, e);
    }
  }

  private void download(Source source, Expected expected, Path target) {
    URI uri = source.uri();
    String sha256 = expected.name();
    long size = expected.size();
    listener.downloadStarted(uri, sha256, size);
    long start = System.nanoTime();
    long deadline = start + downloadTimeout.toNanos();
    Path tmp;
    try {
      tmp = Files.createTempFile(objects, sha256 + ".", ".part");
    } catch (IOException e) {
      throw new ArtifactDownloadException("cannot create a temporary file in " + objects, e);
    }
    boolean moved = false;
    try {
      Body body;
      try {
        body = source.open(downloadTimeout);
      } catch (IOException e) {
        throw new ArtifactDownloadException("cannot download " + uri + ": " + e, e);
      }
      copyBody(uri, body, tmp, expected, deadline);
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      moved = true;
      downloads.incrementAndGet();
      long nanos = System.nanoTime() - start;
      listener.downloaded(uri, sha256, size, nanos);
      LOG.log(Level.INFO, "downloaded {0} ({1} bytes) in {2} ms", uri, size, nanos / 1_000_000);
    } catch (IOException e) {
      throw new ArtifactDownloadException("cannot store the download of " + uri + ": " + e, e);
    } finally {
      if (!moved) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException e) {
          LOG.log(Level.WARNING, "cannot delete partial download {0}: {1}", tmp, e);
        }
      }
    }
  }

  private void copyBody(URI uri, Body opened, Path tmp, Expected expected, long deadline)
      throws IOException {
    long size = expected.size();
    AtomicBoolean finished = new AtomicBoolean();
    AtomicBoolean timedOut = new AtomicBoolean();
    try (InputStream body = opened.stream();
        FileChannel out = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      if (opened.declaredLength() >= 0 && opened.declaredLength() != size) {
        throw new ArtifactIntegrityException(
            uri + " is " + opened.declaredLength() + " bytes, its listing says " + size);
      }
      long remainingMillis =
          Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
      CompletableFuture.runAsync(
          () -> {
            if (!finished.get()) {
              timedOut.set(true);
              closeQuietly(body);
            }
          },
          CompletableFuture.delayedExecutor(remainingMillis, TimeUnit.MILLISECONDS));
      MessageDigest md = expected.algorithm() == null ? null : newDigest(expected.algorithm());
      byte[] buf = new byte[1 << 16];
      long total = 0;
      long nextReport = size >= PROGRESS_MIN_BYTES ? size / 4 : Long.MAX_VALUE;
      while (true) {
        int n;
        try {
          n = body.read(buf);
        } catch (IOException e) {
          if (timedOut.get()) {
            throw timeout(uri, total, size);
          }
          if (e instanceof InterruptedIOException) {
            Thread.currentThread().interrupt();
          }
          throw new ArtifactDownloadException(
              "download of " + uri + " broke off after " + total + " of " + size + " bytes: " + e,
              e);
        }
        if (n < 0) {
          break;
        }
        if (timedOut.get()) {
          throw timeout(uri, total, size);
        }
        total += n;
        if (total > size) {
          throw new ArtifactIntegrityException(
              uri + " sent more than the " + size + " bytes the manifest lists");
        }
        if (md != null) {
          md.update(buf, 0, n);
        }
        ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
        while (bb.hasRemaining()) {
          out.write(bb);
        }
        if (total >= nextReport) {
          LOG.log(
              Level.INFO,
              "downloading {0}: {1}% ({2} of {3} bytes)",
              uri,
              total * 100 / size,
              total,
              size);
          nextReport += size / 4;
        }
      }
      if (timedOut.get()) {
        throw timeout(uri, total, size);
      }
      if (total != size) {
        throw new ArtifactIntegrityException(
            uri + " is truncated: received " + total + " of " + size + " bytes");
      }
      if (md != null) {
        String actual = HexFormat.of().formatHex(md.digest());
        if (!actual.equals(expected.digest())) {
          throw new ArtifactIntegrityException(
              uri
                  + " has "
                  + expected.algorithm()
                  + " "
                  + actual
                  + ", its listing says "
                  + expected.digest());
        }
      }
      out.force(true);
    } finally {
      finished.set(true);
    }
  }

  private static MessageDigest newDigest(String algorithm) {
    try {
      return MessageDigest.getInstance(algorithm);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no " + algorithm, e);
    }
  }

  private static String digest(Path file, String algorithm) throws IOException {
    MessageDigest md = newDigest(algorithm);
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buf = new byte[1 << 16];
      for (int n; (n = in.read(buf)) >= 0; ) {
        md.update(buf, 0, n);
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  /** An artifact at an HTTP(S) URL, fetched with this cache's client. */
  private final class HttpSource implements Source {
    private final URI uri;

    HttpSource(URI uri) {
      this.uri = uri;
    }

    @Override
    public URI uri() {
      return uri;
    }

    @Override
    public Body open(Duration timeout) throws IOException {
      HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
      HttpResponse<InputStream> response;
      try {
        response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
      } catch (HttpTimeoutException e) {
        throw new DownloadTimeoutException(
            "no response from " + uri + " within " + timeout.toMillis() + " ms");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ArtifactDownloadException("interrupted while downloading " + uri, e);
      }
      if (response.statusCode() != 200) {
        response.body().close();
        throw new ArtifactDownloadException("HTTP " + response.statusCode() + " for " + uri);
      }
      OptionalLong declared = response.headers().firstValueAsLong("content-length");
      return new Body(response.body(), declared.orElse(-1));
    }
  }

  private DownloadTimeoutException timeout(URI uri, long got, long size) {
    return new DownloadTimeoutException(
        "download of "
            + uri
            + " did not finish within "
            + downloadTimeout.toMillis()
            + " ms ("
            + got
            + " of "
            + size
            + " bytes received)");
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException ignored) {
      // aborting a stalled download; the reader reports the timeout
    }
  }
}
