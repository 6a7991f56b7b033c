package dev.modelkeeper.onnx.remote;

import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelUnservableException;
import dev.modelkeeper.onnx.InvalidModelIdException;
import dev.modelkeeper.onnx.ModelArtifact;
import dev.modelkeeper.onnx.ModelConfig;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A model repository served over HTTP(S): {@code <base>/manifest.sha256} (see {@link Manifest})
 * lists every file of the usual {@code <name>/<version>/model.onnx} layout with its SHA-256 and
 * length; model and config files are downloaded into an {@link ArtifactCache} and verified before
 * use. Thread-safe.
 *
 * <p>The manifest is kept in memory and fetched again when older than the refresh interval; when a
 * refresh fails, the previous manifest stays in use. Identifiers are validated by {@link ModelId}
 * before any URL is built, and URLs are built only from manifest paths, so requests never leave the
 * base URL's folder.
 */
public final class HttpModelRepository implements ModelRepository {

  private static final System.Logger LOG = System.getLogger(HttpModelRepository.class.getName());
  private static final int MAX_MANIFEST_BYTES = 16 << 20;
  private static final long MAX_CONFIG_BYTES = 64 * 1024;

  private final URI base;
  private final ArtifactCache cache;
  private final HttpClient client;
  private final Duration refreshInterval;
  private final AtomicReference<CompletableFuture<Manifest>> refreshing = new AtomicReference<>();

  private volatile Manifest manifest;
  private volatile long manifestFetchedNanos;

  /** A repository at {@code base} whose manifest is refreshed every 30 seconds. */
  public HttpModelRepository(URI base, ArtifactCache cache, HttpClient client) {
    this(base, cache, client, Duration.ofSeconds(30));
  }

  /**
   * A repository at {@code base} ({@code http} or {@code https}).
   *
   * @param refreshInterval how long a fetched manifest is used before it is fetched again
   */
  public HttpModelRepository(
      URI base, ArtifactCache cache, HttpClient client, Duration refreshInterval) {
    Objects.requireNonNull(base, "base");
    String scheme = base.getScheme();
    if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
      throw new IllegalArgumentException("remote repository URL must be http or https: " + base);
    }
    String s = base.toString();
    this.base = URI.create(s.endsWith("/") ? s : s + "/");
    this.cache = Objects.requireNonNull(cache, "cache");
    this.client = Objects.requireNonNull(client, "client");
    this.refreshInterval = Objects.requireNonNull(refreshInterval, "refreshInterval");
  }

  @Override
  public String location() {
    return base.toString();
  }

  @Override
  public List<Path> localFolders() {
    return List.of(cache.objectsDir());
  }

  @Override
  public List<RepositoryEntry> list() {
    Manifest m = manifest();
    List<RepositoryEntry> out = new ArrayList<>();
    for (Manifest.Entry e : m.entries()) {
      String[] parts = e.path().split("/");
      if (parts.length != 3 || !parts[2].equals(MODEL_FILE)) {
        continue;
      }
      ModelId id;
      try {
        id = new ModelId(parts[0], parts[1]);
      } catch (InvalidModelIdException ex) {
        continue;
      }
      out.add(entry(m, id, e, false));
    }
    out.sort(
        Comparator.comparing(RepositoryEntry::name)
            .thenComparingLong(e -> Long.parseLong(e.version())));
    return out;
  }

  @Override
  public RepositoryEntry locate(ModelId id) {
    Manifest m = manifest();
    ModelId v = concrete(m, id);
    return entry(m, v, modelEntry(m, v), false);
  }

  @Override
  public ModelArtifact fetch(ModelId id) {
    Manifest m = manifest();
    ModelId v = concrete(m, id);
    Manifest.Entry model = modelEntry(m, v);
    Path file = cache.fetch(base.resolve(model.path()), model.sha256(), model.size());
    return new ModelArtifact(v.name(), v.version(), file, config(m, v, true));
  }

  /**
   * The version {@code id} names, with the SHA-256 of its model file and config in the manifest.
   */
  @Override
  public String revision(ModelId id) {
    Manifest m = manifest();
    ModelId v = concrete(m, id);
    String config =
        m.entry(v.name() + "/" + v.version() + "/" + ModelConfig.FILE_NAME)
            .map(Manifest.Entry::sha256)
            .orElse("none");
    return v + " " + modelEntry(m, v).sha256() + " " + config;
  }

  private RepositoryEntry entry(Manifest m, ModelId id, Manifest.Entry model, boolean strict) {
    ModelConfig config = config(m, id, strict);
    long size = config.expectedSizeBytes() >= 0 ? config.expectedSizeBytes() : model.size();
    return new RepositoryEntry(id.name(), id.version(), config.description(), size);
  }

  private Manifest.Entry modelEntry(Manifest m, ModelId v) {
    return m.entry(v.name() + "/" + v.version() + "/" + MODEL_FILE)
        .orElseThrow(
            () -> new ModelNotFoundException("model '" + v + "' is not in the repository"));
  }

  private ModelId concrete(Manifest m, ModelId id) {
    if (!id.isLatest()) {
      return id;
    }
    long best = -1;
    for (Manifest.Entry e : m.entries()) {
      String[] parts = e.path().split("/");
      if (parts.length == 3 && parts[0].equals(id.name()) && parts[2].equals(MODEL_FILE)) {
        try {
          best = Math.max(best, new ModelId(parts[0], parts[1]).versionNumber());
        } catch (InvalidModelIdException ex) {
          // not a version folder
        }
      }
    }
    if (best < 0) {
      throw new ModelNotFoundException("model '" + id + "' is not in the repository");
    }
    return id.withVersion(Long.toString(best));
  }

  /** The version's config through the cache; a broken one fails a load but not a listing. */
  private ModelConfig config(Manifest m, ModelId id, boolean strict) {
    Optional<Manifest.Entry> e =
        m.entry(id.name() + "/" + id.version() + "/" + ModelConfig.FILE_NAME);
    if (e.isEmpty()) {
      return ModelConfig.EMPTY;
    }
    try {
      if (e.get().size() > MAX_CONFIG_BYTES) {
        throw new IllegalArgumentException("larger than " + MAX_CONFIG_BYTES + " bytes");
      }
      Path file = cache.fetch(base.resolve(e.get().path()), e.get().sha256(), e.get().size());
      return ModelConfig.parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException | ArtifactDownloadException ex) {
      if (strict && ex instanceof ArtifactDownloadException) {
        throw (ArtifactDownloadException) ex; // the store, not the file: retried after a back-off
      }
      if (strict) {
        throw new ModelUnservableException(
            "bad " + ModelConfig.FILE_NAME + " of '" + id + "': " + ex.getMessage(), ex, false);
      }
      LOG.log(Level.WARNING, "ignoring config of {0}: {1}", id, ex.getMessage());
      return ModelConfig.EMPTY;
    }
  }

  /**
   * The current manifest. A fresh one is returned at once; a stale one is refreshed by one caller
   * while the others keep using it; without any, callers wait for the one in flight. No lock is
   * held while fetching.
   */
  private Manifest manifest() {
    Manifest current = manifest;
    if (current != null && System.nanoTime() - manifestFetchedNanos < refreshInterval.toNanos()) {
      return current;
    }
    CompletableFuture<Manifest> mine = new CompletableFuture<>();
    CompletableFuture<Manifest> running = refreshing.compareAndExchange(null, mine);
    if (running == null) {
      try {
        Manifest fetched = download();
        manifestFetchedNanos = System.nanoTime();
        manifest = fetched;
        mine.complete(fetched);
        return fetched;
      } catch (RuntimeException e) {
        mine.completeExceptionally(e);
        if (current == null) {
          throw e;
        }
        LOG.log(
            Level.WARNING,
            "cannot refresh the manifest of {0}; using the previous one: {1}",
            base,
            e.getMessage());
        manifestFetchedNanos = System.nanoTime();
        return current;
      } finally {
        refreshing.set(null);
      }
    }
    if (current != null) {
      return current;
    }
    long waitMillis = cache.downloadTimeout().toMillis();
    try {
      return running.get(waitMillis, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException) {
        throw (RuntimeException) e.getCause();
      }
      throw new ArtifactDownloadException("cannot fetch the manifest of " + base, e.getCause());
    } catch (TimeoutException e) {
      throw new DownloadTimeoutException(
          "timed out after " + waitMillis + " ms waiting for the manifest of " + base);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ArtifactDownloadException(
          "interrupted while waiting for the manifest of " + base, e);
    }
  }

  private Manifest download() {
    URI uri = base.resolve(Manifest.FILE_NAME);
    HttpRequest request =
        HttpRequest.newBuilder(uri).timeout(cache.downloadTimeout()).GET().build();
    HttpResponse<byte[]> response;
    try {
      response = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ArtifactDownloadException("interrupted while fetching " + uri, e);
    } catch (IOException e) {
      throw new ArtifactDownloadException("cannot fetch the manifest " + uri + ": " + e, e);
    }
    if (response.statusCode() != 200) {
      throw new ArtifactDownloadException("HTTP " + response.statusCode() + " for " + uri);
    }
    if (response.body().length > MAX_MANIFEST_BYTES) {
      throw new ArtifactDownloadException(
          "manifest " + uri + " is larger than " + MAX_MANIFEST_BYTES + " bytes");
    }
    try {
      return Manifest.parse(new String(response.body(), StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      throw new ArtifactDownloadException("bad manifest " + uri + ": " + e.getMessage(), e);
    }
  }
}
