package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryModelRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The immutable settings of a {@link ModelKeeperServer}; build with {@link #builder(ModelRepository)}.
 * Thread-safe. {@link Builder#build()} checks every value and throws {@link InvalidConfigException}
 * naming the first bad setting, so a server never starts half-configured.
 */
public final class ServerConfig {

  /** The port {@code modelkeeper serve} listens on unless told otherwise. */
  public static final int DEFAULT_PORT = 8000;

  private final String host;
  private final int port;
  private final ModelRepository repository;
  private final ModelRegistry registry;
  private final int maxModels;
  private final long maxBytes;
  private final Duration lifecycleTimeout;
  private final Duration drainTimeout;
  private final Duration capacityTimeout;
  private final Duration idleTimeout;
  private final Duration loadFailureBackoff;
  private final Duration requestTimeout;
  private final Duration shutdownTimeout;
  private final long maxRequestBytes;
  private final int workerThreads;
  private final String authToken;
  private final List<String> preload;
  private final List<String> pin;

  private ServerConfig(Builder b) {
    this.host = b.host;
    this.port = b.port;
    this.repository = b.repository;
    this.registry = b.registry != null ? b.registry : new RepositoryModelRegistry(b.repository);
    this.maxModels = b.maxModels;
    this.maxBytes = b.maxBytes;
    this.lifecycleTimeout = b.lifecycleTimeout;
    this.drainTimeout = b.drainTimeout;
    this.capacityTimeout = b.capacityTimeout;
    this.idleTimeout = b.idleTimeout;
    this.loadFailureBackoff = b.loadFailureBackoff;
    this.requestTimeout = b.requestTimeout;
    this.shutdownTimeout = b.shutdownTimeout;
    this.maxRequestBytes = b.maxRequestBytes;
    this.workerThreads = b.workerThreads;
    this.authToken = b.authToken;
    this.preload = List.copyOf(b.preload);
    this.pin = List.copyOf(b.pin);
  }

  /** Settings that serve {@code repository} with the defaults below; see {@link Builder}. */
  public static Builder builder(ModelRepository repository) {
    return new Builder(repository);
  }

  /** The interface to bind, {@code 0.0.0.0} (every interface) by default. */
  public String host() {
    return host;
  }

  /** The port to bind; 0 picks any free port (read it back with {@link ModelKeeperServer#port()}). */
  public int port() {
    return port;
  }

  /** Where models are listed and found. */
  public ModelRepository repository() {
    return repository;
  }

  /** Builds the models; a {@link RepositoryModelRegistry} over {@link #repository()} by default. */
  public ModelRegistry registry() {
    return registry;
  }

  /** The most models resident or loading at once (default 8). */
  public int maxModels() {
    return maxModels;
  }

  /** The most bytes resident or loading at once; 0 means no byte budget (the default). */
  public long maxBytes() {
    return maxBytes;
  }

  /** How long a request waits for another load or unload of the same model (default 60s). */
  public Duration lifecycleTimeout() {
    return lifecycleTimeout;
  }

  /** How long an unload waits for running inferences of the model (default 30s). */
  public Duration drainTimeout() {
    return drainTimeout;
  }

  /** How long a load waits for room when every resident model is busy or pinned (default 30s). */
  public Duration capacityTimeout() {
    return capacityTimeout;
  }

  /** Models unused for this long are unloaded (leased or pinned ones never); zero, the default, means never. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  /**
   * How long loads of a model are refused (503) after its load failed; doubles on repeated failures
   * up to 60 times this (default 1s).
   */
  public Duration loadFailureBackoff() {
    return loadFailureBackoff;
  }

  /** How long one request may take before it is answered 503 (default 120s). */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /** How long {@link ModelKeeperServer#close()} lets in-flight requests finish (default 30s). */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** The largest request body accepted; larger ones are answered 413 (default 32 MiB). */
  public long maxRequestBytes() {
    return maxRequestBytes;
  }

  /** Threads that run model operations (inference, load, unload); default 64. */
  public int workerThreads() {
    return workerThreads;
  }

  /** The bearer token management endpoints require, or null when they are open (the default). */
  public String authToken() {
    return authToken;
  }

  /** Models loaded before the server reports ready, in order. */
  public List<String> preload() {
    return preload;
  }

  /** Models never evicted by the budget; they are also loaded before the server reports ready. */
  public List<String> pin() {
    return pin;
  }

  @Override
  public String toString() {
    return "ServerConfig[host="
        + host
        + ", port="
        + port
        + ", repository="
        + repository.location()
        + ", maxModels="
        + maxModels
        + ", maxBytes="
        + maxBytes
        + ", auth="
        + (authToken != null ? "on" : "off")
        + "]";
  }

  /** A mutable builder; not thread-safe. {@link #build()} validates and freezes the settings. */
  public static final class Builder {
    private String host = "0.0.0.0";
    private int port = DEFAULT_PORT;
    private final ModelRepository repository;
    private ModelRegistry registry;
    private int maxModels = 8;
    private long maxBytes;
    private Duration lifecycleTimeout = Duration.ofSeconds(60);
    private Duration drainTimeout = Duration.ofSeconds(30);
    private Duration capacityTimeout = Duration.ofSeconds(30);
    private Duration idleTimeout = Duration.ZERO;
    private Duration loadFailureBackoff = Duration.ofSeconds(1);
    private Duration requestTimeout = Duration.ofSeconds(120);
    private Duration shutdownTimeout = Duration.ofSeconds(30);
    private long maxRequestBytes = 32L << 20;
    private int workerThreads = 64;
    private String authToken;
    private final List<String> preload = new ArrayList<>();
    private final List<String> pin = new ArrayList<>();

    private Builder(ModelRepository repository) {
      this.repository = repository;
    }

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    public Builder port(int port) {
      this.port = port;
      return this;
    }

    /** Builds models with {@code registry} instead of the repository's own registry. */
    public Builder registry(ModelRegistry registry) {
      this.registry = registry;
      return this;
    }

    public Builder maxModels(int maxModels) {
      this.maxModels = maxModels;
      return this;
    }

    public Builder maxBytes(long maxBytes) {
      this.maxBytes = maxBytes;
      return this;
    }

    public Builder lifecycleTimeout(Duration d) {
      this.lifecycleTimeout = d;
      return this;
    }

    public Builder drainTimeout(Duration d) {
      this.drainTimeout = d;
      return this;
    }

    public Builder idleTimeout(Duration d) {
      this.idleTimeout = d;
      return this;
    }

    public Builder capacityTimeout(Duration d) {
      this.capacityTimeout = d;
      return this;
    }

    public Builder loadFailureBackoff(Duration d) {
      this.loadFailureBackoff = d;
      return this;
    }

    public Builder requestTimeout(Duration d) {
      this.requestTimeout = d;
      return this;
    }

    public Builder shutdownTimeout(Duration d) {
      this.shutdownTimeout = d;
      return this;
    }

    public Builder maxRequestBytes(long bytes) {
      this.maxRequestBytes = bytes;
      return this;
    }

    public Builder workerThreads(int threads) {
      this.workerThreads = threads;
      return this;
    }

    /** Requires {@code Authorization: Bearer <token>} on management endpoints; null turns it off. */
    public Builder authToken(String token) {
      this.authToken = token;
      return this;
    }

    public Builder preload(List<String> modelIds) {
      this.preload.addAll(modelIds);
      return this;
    }

    public Builder pin(List<String> modelIds) {
      this.pin.addAll(modelIds);
      return this;
    }

    /**
     * Validates and freezes the settings.
     *
     * @throws InvalidConfigException naming the first setting that is out of range
     */
    public ServerConfig build() {
      if (repository == null) {
        throw new InvalidConfigException("repository", "no model repository given");
      }
      if (host == null || host.isBlank()) {
        throw new InvalidConfigException("host", "must not be empty");
      }
      if (port < 0 || port > 65535) {
        throw new InvalidConfigException("port", "must be between 0 and 65535, was " + port);
      }
      if (maxModels < 1) {
        throw new InvalidConfigException("max-models", "must be at least 1, was " + maxModels);
      }
      if (maxBytes < 0) {
        throw new InvalidConfigException("max-bytes", "must not be negative, was " + maxBytes);
      }
      positive("lifecycle-timeout", lifecycleTimeout);
      positive("drain-timeout", drainTimeout);
      positive("capacity-timeout", capacityTimeout);
      if (idleTimeout == null || idleTimeout.isNegative()) {
        throw new InvalidConfigException("idle-timeout", "must not be negative, was " + idleTimeout);
      }
      positive("request-timeout", requestTimeout);
      positive("load-failure-backoff", loadFailureBackoff);
      positive("shutdown-timeout", shutdownTimeout);
      if (maxRequestBytes < 1024) {
        throw new InvalidConfigException(
            "max-request-bytes", "must be at least 1024, was " + maxRequestBytes);
      }
      if (workerThreads < 1) {
        throw new InvalidConfigException(
            "worker-threads", "must be at least 1, was " + workerThreads);
      }
      if (authToken != null && authToken.isBlank()) {
        throw new InvalidConfigException("auth-token", "must not be blank when given");
      }
      checkIds("preload", preload);
      checkIds("pin", pin);
      if (pin.size() > maxModels) {
        throw new InvalidConfigException(
            "pin",
            pin.size() + " pinned models cannot fit a budget of max-models=" + maxModels);
      }
      return new ServerConfig(this);
    }

    private static void positive(String setting, Duration d) {
      if (d == null || d.isZero() || d.isNegative()) {
        throw new InvalidConfigException(setting, "must be a positive duration, was " + d);
      }
    }

    private static void checkIds(String setting, List<String> ids) {
      for (String id : ids) {
        if (id == null || id.isBlank()) {
          throw new InvalidConfigException(setting, "contains an empty model id");
        }
      }
    }
  }
}
