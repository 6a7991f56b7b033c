package dev.modelkeeper.server;

import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryModelRegistry;
import dev.modelkeeper.server.engine.InvalidConfigException;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The immutable settings of a {@link ModelKeeperServer}; build with {@link
 * #builder(ModelRepository)}. Thread-safe. {@link Builder#build()} checks every value and throws
 * {@link InvalidConfigException} naming the first bad setting, so a server never starts
 * half-configured.
 */
public final class ServerConfig {

  /** The port {@code modelkeeper serve} listens on unless told otherwise. */
  public static final int DEFAULT_PORT = 8000;

  /** The gRPC port {@code modelkeeper serve} listens on unless told otherwise. */
  public static final int DEFAULT_GRPC_PORT = 8001;

  /** A {@link #grpcPort()} that turns the gRPC endpoint off. */
  public static final int GRPC_OFF = -1;

  /** The interface {@code modelkeeper serve} binds unless told otherwise: this machine only. */
  public static final String DEFAULT_HOST = "127.0.0.1";

  /** The default in-flight request budget: a quarter of the JVM's maximum heap. */
  public static long defaultMaxInflightBytes() {
    return Runtime.getRuntime().maxMemory() / 4;
  }

  private final String host;
  private final int port;
  private final int grpcPort;
  private final ModelRepository repository;
  private final ModelRegistry registry;
  private final int maxModels;
  private final long maxBytes;
  private final long maxMemory;
  private final java.nio.file.Path memoryCostsFile;
  private final java.nio.file.Path optimizedModelsDir;
  private final boolean customRegistry;
  private final Duration lifecycleTimeout;
  private final Duration drainTimeout;
  private final Duration capacityTimeout;
  private final Duration idleTimeout;
  private final Duration loadFailureBackoff;
  private final Duration requestTimeout;
  private final Duration shutdownTimeout;
  private final long maxRequestBytes;
  private final int workerThreads;
  private final int maxBatchSize;
  private final Duration maxQueueDelay;
  private final int maxConcurrency;
  private final int maxQueueSize;
  private final String authToken;
  private final long maxInflightBytes;
  private final Duration admissionTimeout;
  private final Duration bodyReadTimeout;
  private final int maxConnections;
  private final List<String> allowedOrigins;
  private final List<String> preload;
  private final List<String> pin;
  private final OpenTelemetry tracing;

  private ServerConfig(Builder b) {
    this.host = b.host;
    this.port = b.port;
    this.grpcPort = b.grpcPort;
    this.repository = b.repository;
    this.registry = b.registry != null ? b.registry : new RepositoryModelRegistry(b.repository);
    this.customRegistry = b.registry != null;
    this.maxMemory = b.maxMemory;
    this.memoryCostsFile = b.memoryCostsFile;
    this.optimizedModelsDir = b.optimizedModelsDir;
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
    this.maxBatchSize = b.maxBatchSize;
    this.maxQueueDelay = b.maxQueueDelay;
    this.maxConcurrency = b.maxConcurrency;
    this.maxQueueSize = b.maxQueueSize;
    this.authToken = b.authToken;
    this.maxInflightBytes = b.maxInflightBytes;
    this.admissionTimeout = b.admissionTimeout;
    this.bodyReadTimeout = b.bodyReadTimeout;
    this.maxConnections = b.maxConnections;
    this.allowedOrigins = List.copyOf(b.allowedOrigins);
    this.preload = List.copyOf(b.preload);
    this.pin = List.copyOf(b.pin);
    this.tracing = b.tracing;
  }

  /** Settings that serve {@code repository} with the defaults below; see {@link Builder}. */
  public static Builder builder(ModelRepository repository) {
    return new Builder(repository);
  }

  /**
   * The interface to bind, {@value #DEFAULT_HOST} (this machine only) by default; {@code 0.0.0.0}
   * listens on every interface (in a container, for instance).
   */
  public String host() {
    return host;
  }

  /**
   * The port to bind; 0 picks any free port (read it back with {@link ModelKeeperServer#port()}).
   */
  public int port() {
    return port;
  }

  /**
   * The gRPC port, {@link #DEFAULT_GRPC_PORT} unless set; 0 picks any free port (read it back with
   * {@link ModelKeeperServer#grpcPort()}) and {@link #GRPC_OFF} serves no gRPC.
   */
  public int grpcPort() {
    return grpcPort;
  }

  /** Where models are listed and found. */
  public ModelRepository repository() {
    return repository;
  }

  /** Builds the models; a {@link RepositoryModelRegistry} over {@link #repository()} by default. */
  public ModelRegistry registry() {
    return registry;
  }

  /** Whether {@link #registry()} was given rather than built over the repository. */
  public boolean customRegistry() {
    return customRegistry;
  }

  /**
   * The cap on the whole process's resident memory, heap included; 0 (the default) means a share of
   * the container's memory limit or of the machine's memory, see {@code MemoryCap}.
   */
  public long maxMemory() {
    return maxMemory;
  }

  /** Where measured model memory costs are kept across restarts; null keeps them in memory. */
  public java.nio.file.Path memoryCostsFile() {
    return memoryCostsFile;
  }

  /**
   * Where the pre-optimized forms of model files are kept across loads, restarts and the processes
   * sharing the folder (see {@code dev.modelkeeper.onnx.optimized}); null (the default) keeps none
   * and every load reads its model file as it is.
   */
  public java.nio.file.Path optimizedModelsDir() {
    return optimizedModelsDir;
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

  /**
   * Models unused for this long are unloaded (leased or pinned ones never); zero, the default,
   * means never.
   */
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

  /**
   * Threads for requests that may wait for a load or an unload; at most half this many inferences
   * run their model at once on the thread that received them. Default 64.
   */
  public int workerThreads() {
    return workerThreads;
  }

  /**
   * The most rows one batched run of a model concatenates, for models whose config does not say
   * ({@code max_batch_size}); 1 (the default) runs every request alone.
   */
  public int maxBatchSize() {
    return maxBatchSize;
  }

  /**
   * How long the oldest queued request of a model waits for more rows before a partial batch runs,
   * for models whose config does not say ({@code max_queue_delay}); default 0: whatever has queued
   * runs at once.
   */
  public Duration maxQueueDelay() {
    return maxQueueDelay;
  }

  /**
   * The most runs of one model at once, for models whose config does not say ({@code
   * max_concurrency}); default 4.
   */
  public int maxConcurrency() {
    return maxConcurrency;
  }

  /** The most requests queued for one model; more are answered 503 (default 256). */
  public int maxQueueSize() {
    return maxQueueSize;
  }

  /** The bearer token management endpoints require, or null when they are open (the default). */
  public String authToken() {
    return authToken;
  }

  /**
   * The most bytes of request bodies and decoded tensors in flight at once, server-wide, as set; 0
   * (the default) means a quarter of the maximum heap ({@link #effectiveMaxInflightBytes()}). A
   * request that does not fit waits up to {@link #admissionTimeout()}, then is answered 503.
   */
  public long maxInflightBytes() {
    return maxInflightBytes;
  }

  /** The in-flight budget the server applies: {@link #maxInflightBytes()}, or its default for 0. */
  public long effectiveMaxInflightBytes() {
    return maxInflightBytes > 0 ? maxInflightBytes : defaultMaxInflightBytes();
  }

  /** How long a request waits for room in the in-flight budget before it gets 503 (default 10s). */
  public Duration admissionTimeout() {
    return admissionTimeout;
  }

  /**
   * How long a client has to send a request's body or gRPC message in full, and a new connection
   * its first request's headers or its HTTP/2 preface; slower ones are answered 408 and closed, or
   * ended with DEADLINE_EXCEEDED (default 30s).
   */
  public Duration bodyReadTimeout() {
    return bodyReadTimeout;
  }

  /** The most connections open at once, REST and gRPC each; more wait to be accepted (1024). */
  public int maxConnections() {
    return maxConnections;
  }

  /**
   * Web origins (e.g. {@code https://app.example.com}) whose pages may send requests that change
   * state; {@code *} allows any. Empty by default: such requests carrying any other {@code Origin}
   * than the server's own are answered 403.
   */
  public List<String> allowedOrigins() {
    return allowedOrigins;
  }

  /** Models loaded before the server reports ready, in order. */
  public List<String> preload() {
    return preload;
  }

  /** Models never evicted by the budget; they are also loaded before the server reports ready. */
  public List<String> pin() {
    return pin;
  }

  /** Where requests' spans go; null when requests are not traced (the default). */
  public OpenTelemetry tracing() {
    return tracing;
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
    private String host = DEFAULT_HOST;
    private int port = DEFAULT_PORT;
    private int grpcPort = DEFAULT_GRPC_PORT;
    private final ModelRepository repository;
    private ModelRegistry registry;
    private int maxModels = 8;
    private long maxBytes;
    private long maxMemory;
    private java.nio.file.Path memoryCostsFile;
    private java.nio.file.Path optimizedModelsDir;
    private Duration lifecycleTimeout = Duration.ofSeconds(60);
    private Duration drainTimeout = Duration.ofSeconds(30);
    private Duration capacityTimeout = Duration.ofSeconds(30);
    private Duration idleTimeout = Duration.ZERO;
    private Duration loadFailureBackoff = Duration.ofSeconds(1);
    private Duration requestTimeout = Duration.ofSeconds(120);
    private Duration shutdownTimeout = Duration.ofSeconds(30);
    private long maxRequestBytes = 32L << 20;
    private int workerThreads = 64;
    private int maxBatchSize = 1;
    private Duration maxQueueDelay = Duration.ZERO;
    private int maxConcurrency = 4;
    private int maxQueueSize = 256;
    private String authToken;
    private long maxInflightBytes;
    private Duration admissionTimeout = Duration.ofSeconds(10);
    private Duration bodyReadTimeout = Duration.ofSeconds(30);
    private int maxConnections = 1024;
    private final List<String> allowedOrigins = new ArrayList<>();
    private final List<String> preload = new ArrayList<>();
    private final List<String> pin = new ArrayList<>();
    private OpenTelemetry tracing;

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

    /** The gRPC port: 0 = any free port, {@link #GRPC_OFF} = no gRPC endpoint. */
    public Builder grpcPort(int grpcPort) {
      this.grpcPort = grpcPort;
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

    public Builder maxMemory(long bytes) {
      this.maxMemory = bytes;
      return this;
    }

    public Builder memoryCostsFile(java.nio.file.Path file) {
      this.memoryCostsFile = file;
      return this;
    }

    /** Keeps pre-optimized forms of model files in {@code dir}; null keeps none. */
    public Builder optimizedModelsDir(java.nio.file.Path dir) {
      this.optimizedModelsDir = dir;
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

    public Builder maxBatchSize(int rows) {
      this.maxBatchSize = rows;
      return this;
    }

    public Builder maxQueueDelay(Duration d) {
      this.maxQueueDelay = d;
      return this;
    }

    public Builder maxConcurrency(int runs) {
      this.maxConcurrency = runs;
      return this;
    }

    public Builder maxQueueSize(int requests) {
      this.maxQueueSize = requests;
      return this;
    }

    /**
     * Requires {@code Authorization: Bearer <token>} on management endpoints; null turns it off.
     */
    public Builder authToken(String token) {
      this.authToken = token;
      return this;
    }

    /** The in-flight request budget in bytes; 0 means the default (a quarter of the max heap). */
    public Builder maxInflightBytes(long bytes) {
      this.maxInflightBytes = bytes;
      return this;
    }

    public Builder admissionTimeout(Duration d) {
      this.admissionTimeout = d;
      return this;
    }

    public Builder bodyReadTimeout(Duration d) {
      this.bodyReadTimeout = d;
      return this;
    }

    public Builder maxConnections(int connections) {
      this.maxConnections = connections;
      return this;
    }

    public Builder allowedOrigins(List<String> origins) {
      this.allowedOrigins.addAll(origins);
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
     * Traces every request in {@code openTelemetry}: one server span per REST request and gRPC
     * call, continuing the caller's {@code traceparent}, with the engine's steps as child spans.
     * Null (the default) traces nothing.
     */
    public Builder tracing(OpenTelemetry openTelemetry) {
      this.tracing = openTelemetry;
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
      if (grpcPort < GRPC_OFF || grpcPort > 65535) {
        throw new InvalidConfigException(
            "grpc-port", "must be between 0 and 65535, or -1 for off, was " + grpcPort);
      }
      if (grpcPort > 0 && grpcPort == port) {
        throw new InvalidConfigException("grpc-port", "must differ from the HTTP port " + port);
      }
      if (maxModels < 1) {
        throw new InvalidConfigException("max-models", "must be at least 1, was " + maxModels);
      }
      if (maxBytes < 0) {
        throw new InvalidConfigException("max-bytes", "must not be negative, was " + maxBytes);
      }
      if (maxMemory < 0) {
        throw new InvalidConfigException("max-memory", "must not be negative, was " + maxMemory);
      }
      positive("lifecycle-timeout", lifecycleTimeout);
      positive("drain-timeout", drainTimeout);
      positive("capacity-timeout", capacityTimeout);
      if (idleTimeout == null || idleTimeout.isNegative()) {
        throw new InvalidConfigException(
            "idle-timeout", "must not be negative, was " + idleTimeout);
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
      atLeastOne("max-batch-size", maxBatchSize);
      atLeastOne("max-concurrency", maxConcurrency);
      atLeastOne("max-queue-size", maxQueueSize);
      if (maxQueueDelay == null || maxQueueDelay.isNegative()) {
        throw new InvalidConfigException(
            "max-queue-delay", "must not be negative, was " + maxQueueDelay);
      }
      if (authToken != null && authToken.isBlank()) {
        throw new InvalidConfigException("auth-token", "must not be blank when given");
      }
      if (maxInflightBytes < 0) {
        throw new InvalidConfigException(
            "max-inflight-bytes", "must not be negative, was " + maxInflightBytes);
      }
      if (maxInflightBytes > 0 && maxInflightBytes < maxRequestBytes) {
        throw new InvalidConfigException(
            "max-inflight-bytes",
            "must hold at least one request of max-request-bytes="
                + maxRequestBytes
                + ", was "
                + maxInflightBytes);
      }
      positive("admission-timeout", admissionTimeout);
      positive("body-read-timeout", bodyReadTimeout);
      if (maxConnections < 1) {
        throw new InvalidConfigException(
            "max-connections", "must be at least 1, was " + maxConnections);
      }
      for (String o : allowedOrigins) {
        if (o == null || o.isBlank()) {
          throw new InvalidConfigException("allowed-origins", "contains an empty origin");
        }
      }
      checkIds("preload", preload);
      checkIds("pin", pin);
      if (pin.size() > maxModels) {
        throw new InvalidConfigException(
            "pin", pin.size() + " pinned models cannot fit a budget of max-models=" + maxModels);
      }
      return new ServerConfig(this);
    }

    private static void atLeastOne(String setting, int value) {
      if (value < 1) {
        throw new InvalidConfigException(setting, "must be at least 1, was " + value);
      }
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
