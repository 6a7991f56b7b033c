package dev.modelkeeper.onnx.remote;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;

/**
 * A model repository in an S3 bucket (or an S3-compatible store) under a prefix, in either layout a
 * local folder takes ({@link LocalModelRepository}). Thread-safe.
 *
 * <p>The bucket is listed (paginated) at start and again when a call finds the listing older than
 * the refresh interval. The small files (configs, label files: everything but {@code .onnx} files
 * and files over 1 MiB) are mirrored into a folder of the cache, where a {@link
 * LocalModelRepository} reads them, so both layouts, version policies and config errors behave as
 * they do for a folder. Model files are downloaded on first use through the {@link ArtifactCache}:
 * one download per object across the threads and processes of a host, checked by length and, for
 * single-part uploads without KMS or customer keys, by the MD5 in its ETag, and renamed into place
 * only when complete.
 *
 * <p>When the store cannot be listed (unreachable, credentials refused, bucket missing), the last
 * listing stays in use, the problem is logged once, and listing is tried again with a back-off of 1
 * second doubling to 1 minute; until a first listing succeeds, every lookup fails with an {@link
 * ArtifactDownloadException} (503) that names the problem.
 */
public final class S3ModelRepository implements ModelRepository {

  private static final System.Logger LOG = System.getLogger(S3ModelRepository.class.getName());
  private static final long MAX_MIRRORED_BYTES = 1 << 20;
  private static final Duration MAX_BACKOFF = Duration.ofMinutes(1);
  private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9_.-]*");
  private static final Pattern MD5_ETAG = Pattern.compile("[0-9a-f]{32}");

  private final S3Location location;
  private final S3Client s3;
  private final ArtifactCache cache;
  private final Duration refreshInterval;
  private final Path mirror;
  private final LocalModelRepository local;
  private final ReentrantLock syncing = new ReentrantLock();

  /** The model files of the last listing, by path relative to the prefix. */
  private volatile Map<String, S3Object> modelFiles = Map.of();

  /** The ETag of each small file mirrored by this process, by relative path; under syncing. */
  private final Map<String, String> mirrored = new HashMap<>();

  private volatile boolean listedOnce;
  private volatile long nextSyncNanos;
  private volatile String lastProblem;
  private int failures; // under syncing

  /**
   * A repository at {@code location}, listed now (a failure is logged, not thrown), its artifacts
   * cached in {@code cache}.
   */
  public S3ModelRepository(
      S3Location location, S3Client s3, ArtifactCache cache, Duration refreshInterval) {
    this.location = Objects.requireNonNull(location, "location");
    this.s3 = Objects.requireNonNull(s3, "s3");
    this.cache = Objects.requireNonNull(cache, "cache");
    this.refreshInterval = refreshInterval;
    this.mirror = cache.objectsDir().resolveSibling("s3").resolve(hash(location.toString(), 16));
    try {
      Files.createDirectories(mirror);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the mirror folder " + mirror, e);
    }
    this.local = new LocalModelRepository(mirror, new ListedModelFiles(), location.toString());
    listNow();
  }

  @Override
  public List<RepositoryEntry> list() {
    sync(false);
    return local.list();
  }

  @Override
  public RepositoryEntry locate(ModelId id) {
    sync(false);
    return local.locate(id);
  }

  @Override
  public ModelArtifact fetch(ModelId id) {
    sync(false);
    return local.fetch(id);
  }

  @Override
  public String revision(ModelId id) {
    sync(false);
    return local.revision(id);
  }

  @Override
  public String location() {
    return location.toString();
  }

  @Override
  public List<Path> localFolders() {
    return List.of(mirror, cache.objectsDir());
  }

  @Override
  public Map<ModelId, String> configProblems() {
    return local.configProblems();
  }

  /**
   * Lists the bucket when the listing is due ({@code force}: now); one thread lists, the others use
   * the current mirror. Throws only while no listing has ever succeeded.
   */
  private void sync(boolean force) {
    if (force || System.nanoTime() - nextSyncNanos >= 0) {
      if (syncing.tryLock()) {
        try {
          if (force || System.nanoTime() - nextSyncNanos >= 0) {
            listNow();
          }
        } finally {
          syncing.unlock();
        }
      }
    }
    failIfNeverListed();
  }

  /** Lists the bucket and mirrors it; a failure is logged once per problem and backs off. */
  private void listNow() {
    syncing.lock();
    try {
      try {
        listAndMirror();
        listedOnce = true;
        failures = 0;
        if (lastProblem != null) {
          LOG.log(Level.INFO, "{0} can be read again", location);
          lastProblem = null;
        }
        nextSyncNanos = System.nanoTime() + refreshInterval.toNanos();
      } catch (SdkException | IOException | UncheckedIOException e) {
        failures++;
        Duration wait = backoff(failures);
        String problem = describe(e);
        if (!problem.equals(lastProblem)) { // once per problem
          LOG.log(
              Level.WARNING,
              "cannot list "
                  + location
                  + ": "
                  + problem
                  + "; "
                  + (listedOnce ? "its last listing stays in use" : "its models are unavailable")
                  + ", trying again in "
                  + wait.toSeconds()
                  + " s");
        }
        lastProblem = problem;
        nextSyncNanos = System.nanoTime() + wait.toNanos();
      }
    } finally {
      syncing.unlock();
    }
  }

  private void failIfNeverListed() {
    String problem = lastProblem;
    if (!listedOnce && problem != null) {
      throw new ArtifactDownloadException("cannot list " + location + ": " + problem);
    }
  }

  private static Duration backoff(int failures) {
    long seconds = 1L << Math.min(failures - 1, 6);
    return Duration.ofSeconds(Math.min(seconds, MAX_BACKOFF.toSeconds()));
  }

  private void listAndMirror() throws IOException {
    ListObjectsV2Request request =
        ListObjectsV2Request.builder()
            .bucket(location.bucket())
            .prefix(location.listPrefix())
            .build();
    Map<String, S3Object> models = new HashMap<>();
    Set<String> small = new HashSet<>();
    for (S3Object o : s3.listObjectsV2Paginator(request).contents()) {
      String rel = o.key().substring(location.listPrefix().length());
      if (rel.isEmpty() || rel.endsWith("/")) {
        continue; // the prefix itself, or a folder marker
      }
      if (!validPath(rel)) {
        LOG.log(Level.DEBUG, "skipping {0}: not a model repository path", o.key());
        continue;
      }
      Path dir = mirror.resolve(rel).getParent();
      Files.createDirectories(dir);
      if (rel.endsWith(".onnx") || o.size() > MAX_MIRRORED_BYTES) {
        models.put(rel, o);
      } else {
        small.add(rel);
        if (!o.eTag().equals(mirrored.get(rel))) {
          mirrorFile(rel, o);
          mirrored.put(rel, o.eTag());
        }
      }
    }
    removeStale(small);
    modelFiles = Map.copyOf(models);
  }

  /** Downloads a small object into the mirror: a temporary file, then an atomic rename. */
  private void mirrorFile(String rel, S3Object o) throws IOException {
    Path target = mirror.resolve(rel);
    Path tmp = Files.createTempFile(target.getParent(), ".mirror", ".part");
    try {
      try (ResponseInputStream<GetObjectResponse> in =
          s3.getObject(GetObjectRequest.builder().bucket(location.bucket()).key(o.key()).build())) {
        byte[] bytes = in.readNBytes((int) MAX_MIRRORED_BYTES + 1);
        if (bytes.length != o.size()) {
          throw new IOException(
              o.key() + " changed while it was read (" + bytes.length + " of " + o.size() + ")");
        }
        Files.write(tmp, bytes);
      }
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** Deletes mirrored small files the listing no longer has. */
  private void removeStale(Set<String> small) throws IOException {
    try (Stream<Path> walk = Files.walk(mirror)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        if (Files.isRegularFile(p)) {
          String rel = mirror.relativize(p).toString().replace('\\', '/');
          if (!small.contains(rel) && !p.getFileName().toString().startsWith(".mirror")) {
            Files.deleteIfExists(p);
            mirrored.remove(rel);
          }
        }
      }
    }
  }

  private static boolean validPath(String rel) {
    for (String segment : rel.split("/", -1)) {
      if (!SEGMENT.matcher(segment).matches()) {
        return false;
      }
    }
    return true;
  }

  /** A store's failure in words, never a Java class name. */
  static String describe(Throwable e) {
    if (e instanceof S3Exception) {
      S3Exception s = (S3Exception) e;
      String code =
          s.awsErrorDetails() == null ? "" : String.valueOf(s.awsErrorDetails().errorCode());
      switch (code) {
        case "NoSuchBucket":
          return "the bucket does not exist (NoSuchBucket)";
        case "InvalidAccessKeyId":
        case "SignatureDoesNotMatch":
          return "the store refused the credentials (" + code + ")";
        case "AccessDenied":
          return "access denied (AccessDenied): the credentials may not read it";
        default:
          return "the store answered HTTP " + s.statusCode() + (code.isEmpty() ? "" : " " + code);
      }
    }
    if (e instanceof SdkClientException) {
      String m = String.valueOf(e.getMessage());
      if (m.contains("Unable to load credentials")) {
        return "no AWS credentials found (environment, profile, web identity, container or"
            + " instance metadata)";
      }
      for (Throwable c = e; c != null; c = c.getCause()) {
        if (c instanceof UnknownHostException) {
          return "cannot reach the store: unknown host " + c.getMessage();
        }
        if (c instanceof ConnectException) {
          return "cannot reach the store: connection refused";
        }
        if (c instanceof SocketTimeoutException) {
          return "cannot reach the store: no answer in time";
        }
      }
      return "cannot reach the store: " + m;
    }
    return String.valueOf(e.getMessage());
  }

  private static String hash(String text, int hexDigits) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d).substring(0, hexDigits);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** The model files of the listing, fetched through the cache. */
  private final class ListedModelFiles implements LocalModelRepository.ModelFiles {

    private String rel(Path file) {
      return mirror.relativize(file).toString().replace('\\', '/');
    }

    @Override
    public boolean exists(Path file) {
      return modelFiles.containsKey(rel(file)) || Files.isRegularFile(file);
    }

    @Override
    public long size(Path file) {
      S3Object o = modelFiles.get(rel(file));
      try {
        return o != null ? o.size() : Files.size(file);
      } catch (IOException e) {
        return -1;
      }
    }

    @Override
    public String revision(Path file) {
      S3Object o = modelFiles.get(rel(file));
      return o != null ? "etag " + o.eTag() + " size " + o.size() : "size " + size(file);
    }

    @Override
    public Path fetch(Path file) {
      S3Object o = modelFiles.get(rel(file));
      if (o == null) {
        return file; // a small model file, mirrored
      }
      String key = o.key();
      HeadObjectResponse head;
      try {
        head = s3.headObject(b -> b.bucket(location.bucket()).key(key));
      } catch (SdkException e) {
        throw new ArtifactDownloadException(
            "cannot read s3://" + location.bucket() + "/" + key + ": " + describe(e), e);
      }
      String etag = head.eTag() == null ? "" : head.eTag().replace("\"", "");
      boolean md5 =
          MD5_ETAG.matcher(etag).matches()
              && head.serverSideEncryption() != ServerSideEncryption.AWS_KMS
              && head.serverSideEncryption() != ServerSideEncryption.AWS_KMS_DSSE
              && head.sseCustomerAlgorithm() == null;
      ArtifactCache.Expected expected =
          new ArtifactCache.Expected(
              "s3-" + hash(location.endpointAndBucket() + "/" + key + "@" + etag, 64),
              head.contentLength(),
              md5 ? "MD5" : null,
              md5 ? etag : null);
      return cache.fetch(new ObjectSource(key, head.eTag()), expected);
    }
  }

  /** One object, read only while its ETag is the one looked up. */
  private final class ObjectSource implements ArtifactCache.Source {
    private final String key;
    private final String etag;

    ObjectSource(String key, String etag) {
      this.key = key;
      this.etag = etag;
    }

    @Override
    public URI uri() {
      return URI.create("s3://" + location.bucket() + "/" + key);
    }

    @Override
    public ArtifactCache.Body open(Duration timeout) {
      try {
        ResponseInputStream<GetObjectResponse> in =
            s3.getObject(
                GetObjectRequest.builder()
                    .bucket(location.bucket())
                    .key(key)
                    .ifMatch(etag)
                    .overrideConfiguration(c -> c.apiCallAttemptTimeout(timeout))
                    .build());
        Long length = in.response().contentLength();
        return new ArtifactCache.Body(in, length == null ? -1 : length);
      } catch (S3Exception e) {
        if (e.statusCode() == 412) {
          throw new ArtifactDownloadException(uri() + " changed while it was fetched; try again");
        }
        throw new ArtifactDownloadException("cannot download " + uri() + ": " + describe(e), e);
      } catch (SdkException e) {
        throw new ArtifactDownloadException("cannot download " + uri() + ": " + describe(e), e);
      }
    }
  }
}
