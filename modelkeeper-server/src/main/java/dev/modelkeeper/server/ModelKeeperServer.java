package dev.modelkeeper.server;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelRegistry;
import dev.modelkeeper.core.Ticker;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.OnnxModelOptions;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.OverridingRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.RepositoryModelRegistry;
import dev.modelkeeper.onnx.memory.MemoryCosts;
import dev.modelkeeper.onnx.optimized.OptimizedModels;
import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.auth.BearerAuth;
import dev.modelkeeper.server.config.InvalidConfigException;
import dev.modelkeeper.server.config.Scheduling;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.server.control.ModelControl;
import dev.modelkeeper.server.docs.DocsRoutes;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.engine.InferenceService;
import dev.modelkeeper.server.engine.ModelEvents;
import dev.modelkeeper.server.engine.ModelResolver;
import dev.modelkeeper.server.engine.ServerState;
import dev.modelkeeper.server.errors.UnavailableException;
import dev.modelkeeper.server.execution.ExecutionSettings;
import dev.modelkeeper.server.execution.ModelExecutors;
import dev.modelkeeper.server.execution.Workers;
import dev.modelkeeper.server.grpc.GrpcArrivals;
import dev.modelkeeper.server.grpc.GrpcCallMetrics;
import dev.modelkeeper.server.grpc.GrpcEndpoint;
import dev.modelkeeper.server.grpc.GrpcSpans;
import dev.modelkeeper.server.http.AllowedMethods;
import dev.modelkeeper.server.http.BodyIntake;
import dev.modelkeeper.server.http.ErrorMapper;
import dev.modelkeeper.server.http.HeaderDeadline;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.JsonErrorHandler;
import dev.modelkeeper.server.http.OriginGuard;
import dev.modelkeeper.server.http.RequestRunner;
import dev.modelkeeper.server.http.Routes;
import dev.modelkeeper.server.management.ManagementRoutes;
import dev.modelkeeper.server.memory.BudgetWorkingMemory;
import dev.modelkeeper.server.memory.MemoryCap;
import dev.modelkeeper.server.memory.MemoryGuard;
import dev.modelkeeper.server.memory.ModelMemory;
import dev.modelkeeper.server.metrics.MetricsEndpoint;
import dev.modelkeeper.server.metrics.TritonMetrics;
import dev.modelkeeper.server.modelstats.StatsRoutes;
import dev.modelkeeper.server.observability.RateLimitedLog;
import dev.modelkeeper.server.observability.ServerMetrics;
import dev.modelkeeper.server.observability.StatusBoard;
import dev.modelkeeper.server.oip.InferRequestDecoder;
import dev.modelkeeper.server.oip.OipRoutes;
import dev.modelkeeper.server.oip.sharedmemory.SharedMemoryRoutes;
import dev.modelkeeper.server.repository.RepositoryRoutes;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.server.request.RequestIds;
import dev.modelkeeper.server.request.RequestTracer;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import dev.modelkeeper.server.statistics.InferenceStatistics;
import dev.modelkeeper.server.status.StatusRoutes;
import io.javalin.Javalin;
import io.javalin.compression.CompressionStrategy;
import io.javalin.config.JavalinConfig;
import io.javalin.config.JavalinState;
import io.javalin.http.HttpResponseException;
import io.javalin.router.EndpointNotFound;
import io.javalin.router.ParsedEndpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;

/**
 * The ModelKeeper HTTP server: the Open Inference Protocol, its repository extension, the
 * management API, Prometheus metrics and the API's OpenAPI document and docs page over one {@link
 * ModelManager} (a {@link BaseModelManager} under a {@link WithFixedSizeCache} budget).
 * Thread-safe.
 *
 * <p>{@link #start} binds the port and returns at once; pinned and preloaded models load in the
 * background, and {@code /v2/health/ready} answers 200 once they are done. {@link #close()} shuts
 * down gracefully: it stops accepting connections, lets in-flight requests finish (bounded by the
 * shutdown timeout), then unloads every model.
 *
 * <p>Threads: HTTP requests arrive on Jetty's threads; management requests and anything that may
 * wait for a load or an unload run on the server's worker pool ({@link
 * Scheduling#workerThreads()}), bounded by the request timeout; inference is queued on its model's
 * own executor ({@link ModelExecutors}: a bounded queue, a concurrency limit and dynamic batching
 * per model), except that a request that can run at once and alone on a resident model runs on the
 * thread that decoded it (no hand-off). A REST inference is decoded on the Jetty thread that
 * received it when that thread may run its model (at most half the workers' count at once), else on
 * a worker. A gRPC inference is decoded on the transport's event loop and queued on its model's
 * executor, or run there when the model's runs are quick ({@link GrpcEndpoint}); other gRPC calls
 * run on a worker.
 */
public final class ModelKeeperServer implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(ModelKeeperServer.class.getName());
  private static final long IDLE_CONNECTION_SHUTDOWN_MILLIS = 100;

  /**
   * Bytes Jetty reads from a connection at a time. Its 8 KiB default takes six reads for a 48 KB
   * binary image request; at 64 KiB, Jetty's CPU per such request measured about 13% lower. Buffers
   * come from Jetty's pool and return to it once a read is consumed.
   */
  private static final int INPUT_BUFFER_BYTES = 64 * 1024;

  private static final Duration BROKEN_BODY_LOG_INTERVAL = Duration.ofSeconds(10);

  /** The most off-heap body memory kept idle for reuse between requests. */
  private static final long MAX_IDLE_OFF_HEAP_BYTES = 32L << 20;

  /** How long before the shutdown timeout requests still running are answered 503. */
  private static final Duration ANSWER_MARGIN = Duration.ofMillis(500);

  /**
   * What {@code --preload} takes for every model of the repository: the highest version of each, by
   * name, as many as fit the budget.
   */
  public static final String PRELOAD_ALL = "*";

  private final ServerConfig config;

  /** The configured repository, with the configurations and files that load requests gave. */
  private final OverridingRepository repository;

  /** Builds the models; set once while the manager is built. */
  private ModelRegistry registry;

  private final ModelControl control;
  private final WithFixedSizeCache manager;
  private final MemoryGuard memory;
  private final MemoryCosts memoryCosts;
  private final OptimizedModels forms;
  private final ModelResolver resolver;
  private final ServerMetrics metrics;
  private final Workers workers;
  private final RequestRunner runner;
  private final ModelExecutors executors;
  private final ServerState state = new ServerState();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Map<String, ModelTarget> startupModels;
  private final Javalin app;
  private final GrpcEndpoint.Service grpcService;
  private final BearerAuth auth;
  private volatile GrpcEndpoint grpc;
  private volatile MetricsEndpoint metricsEndpoint;
  private final TritonMetrics tritonMetrics;
  private final ScheduledExecutorService timer;
  private final StatusBoard status;
  private final RequestTracer tracing;
  private final InflightBytes inflight;
  private final BodyIntake intake;

  /** The system shared memory regions clients registered (REST and gRPC). */
  private final SharedMemoryRegions sharedMemory;

  /** Off-heap memory of large request bodies and messages (REST and gRPC). */
  private final DirectBuffers offHeap;

  private final GrpcArrivals grpcArrivals;
  private final GracefulHandler graceful = new GracefulHandler();
  private final AtomicReference<ServerConnector> connector = new AtomicReference<>();

  private ModelKeeperServer(ServerConfig config) {
    this.config = config;
    // ONNX Runtime's process-wide state is the JVM's part of the cap, not the first model's
    OnnxRuntimeState.ensureStarted();
    this.memory = MemoryGuard.split(MemoryCap.choose(config.budgets().maxMemory()));
    this.memoryCosts =
        config.budgets().memoryCostsFile() != null
            ? MemoryCosts.persistedIn(config.budgets().memoryCostsFile())
            : MemoryCosts.inMemory();
    this.repository = new OverridingRepository(config.repository(), privateFolder());
    this.resolver = new ModelResolver(repository, Ticker.system());
    this.forms =
        config
            .loading()
            .optimizedModelsDir()
            .map(dir -> OptimizedModels.in(dir, OnnxRuntimeState.version()))
            .orElse(OptimizedModels.NONE);
    this.manager = manager(config, resolver, memory, memoryCosts);
    ModelEvents events = new ModelEvents(repository);
    manager.addListener(events);
    this.metrics = new ServerMetrics(manager);
    manager.addListener(metrics);
    this.timer = timer();
    this.tracing = config.tracer();
    memory.start(manager, timer);
    this.inflight =
        new InflightBytes(config.budgets().inflightBytes(), config.timeouts().admission(), timer);
    this.offHeap =
        new DirectBuffers(Math.min(MAX_IDLE_OFF_HEAP_BYTES, config.budgets().inflightBytes()));
    metrics.watch(offHeap);
    metrics.watch(inflight);
    this.startupModels = startupModels(config);
    for (String pin : config.pin()) {
      manager.pin(startupModels.get(pin).key());
    }
    this.workers = new Workers(config.scheduling().workerThreads(), config.timeouts().request());
    ExecutionSettings defaults = executionDefaults(config);
    InferenceStatistics statistics = new InferenceStatistics(metrics);
    this.executors = ModelExecutors.create(manager, defaults, statistics);
    InferenceService inference =
        new InferenceService(
            resolver, events, executors.execution(), config.timeouts().request(), statistics);
    ModelMemory modelMemory = new ModelMemory(memoryCosts, resolver::aliases);
    metrics.watch(memory, manager, modelMemory);
    this.status = StatusBoard.of(metrics, memory::residentBytes, events.redaction());
    manager.addListener(status);
    status.start(timer);
    Engine engine =
        new Engine(
            manager,
            resolver,
            events,
            inference,
            defaults,
            state,
            workers,
            inflight,
            modelMemory,
            memory,
            statistics);
    if (registry instanceof RepositoryModelRegistry) {
      // a model's calls of other models (Python models' BLS) go through the engine like requests
      AtomicLong calls = new AtomicLong();
      ((RepositoryModelRegistry) registry)
          .callModelsThrough(
              (name, version, inputs, outputs) ->
                  engine
                      .infer(
                          name,
                          version == null || version.isEmpty() ? null : version,
                          new InferRequest(
                              "model-call-" + calls.incrementAndGet(),
                              inputs,
                              outputs,
                              Map.of(),
                              false,
                              Map.of()))
                      .outcome()
                      .outputs());
    }
    this.tritonMetrics = new TritonMetrics(engine);
    RequestIds requestIds = new RequestIds(); // one sequence for both transports
    this.auth =
        config.security().authToken() != null
            ? new BearerAuth(config.security().authToken())
            : null;
    this.grpcArrivals = new GrpcArrivals(inflight, config.timeouts().bodyRead(), metrics);
    this.sharedMemory = new SharedMemoryRegions(config.budgets().maxSharedMemoryBytes());
    this.control = new ModelControl(engine, repository, auth != null);
    this.grpcService = new GrpcEndpoint.Service(engine, control, requestIds, sharedMemory);
    Json json = new Json();
    ErrorMapper errors = new ErrorMapper(json, events.redaction());
    this.runner = new RequestRunner(workers, errors);
    this.intake =
        new BodyIntake(
            config.budgets().maxRequestBytes(),
            config.timeouts().bodyRead(),
            inflight,
            timer,
            errors,
            metrics,
            new RateLimitedLog(LOG, BROKEN_BODY_LOG_INTERVAL),
            offHeap);
    this.app =
        Javalin.create(
            c -> {
              c.startup.showJavalinBanner = false;
              c.startup.showOldJavalinVersionWarning = false;
              c.startup.startupWatcherEnabled = false;
              c.http.maxRequestSize = config.budgets().maxRequestBytes();
              c.http.compressionStrategy = CompressionStrategy.NONE;
              jetty(c, json, errors);
              routes(c, engine, json, errors, requestIds);
            });
  }

  /**
   * The budgeted manager: a {@link BaseModelManager} over the repository (or the configured
   * registry) with aliases resolved, under a {@link WithFixedSizeCache} budget of the cap's share
   * for models (or {@code --max-bytes} when smaller); runs reserve their working memory in it.
   */
  private WithFixedSizeCache manager(
      ServerConfig config, ModelResolver resolver, MemoryGuard memory, MemoryCosts costs) {
    AtomicReference<WithFixedSizeCache> budget = new AtomicReference<>();
    registry =
        config.registry() != null
            ? config.registry()
            : new RepositoryModelRegistry(
                repository,
                OnnxModelOptions.defaults()
                    .withMemoryCosts(costs)
                    .withOptimizedModels(forms)
                    .withWorkingMemory(new BudgetWorkingMemory(budget::get)));
    BaseModelManager base =
        new BaseModelManager(
            resolver.registry(refusingLoadsWhenStopping(registry)),
            ManagerOptions.builder()
                .lifecycleTimeout(config.timeouts().lifecycle())
                .drainTimeout(config.timeouts().drain())
                .failureBackoff(config.timeouts().loadFailureBackoff())
                .build());
    WithFixedSizeCache manager =
        new WithFixedSizeCache(
            base,
            CacheOptions.builder(config.budgets().maxModels())
                .maxBytes(
                    config.budgets().maxBytes() > 0
                        ? Math.min(config.budgets().maxBytes(), memory.modelBytes())
                        : memory.modelBytes())
                .capacityTimeout(config.timeouts().capacity())
                .expireAfterIdle(config.timeouts().idle())
                .build());
    budget.set(manager);
    return manager;
  }

  /**
   * Jetty under Javalin: request order graceful shutdown, origin check, body intake, routes; one
   * connector with the connection limit and the header deadline; JSON error pages.
   */
  private void jetty(JavalinConfig c, Json json, ErrorMapper errors) {
    OriginGuard origins = new OriginGuard(config.security().allowedOrigins(), errors);
    c.jetty.modifyServer(
        server -> {
          server.setStopTimeout(config.timeouts().shutdown().toMillis());
          server.insertHandler(intake);
          server.insertHandler(origins);
          server.insertHandler(graceful);
          server.setErrorHandler(new JsonErrorHandler(json));
        });
    c.jetty.modifyServletContextHandler(
        context -> context.setErrorHandler(new JsonErrorHandler(json)));
    c.jetty.addConnector(
        (server, http) -> {
          HttpConnectionFactory factory = new HttpConnectionFactory(http);
          factory.setInputBufferSize(INPUT_BUFFER_BYTES);
          ServerConnector connector = new ServerConnector(server, factory);
          connector.setHost(config.network().host());
          connector.setPort(config.network().port());
          // on shutdown, idle keep-alive connections close after this; requests in flight are
          // waited for up to the stop timeout regardless
          connector.setShutdownIdleTimeout(IDLE_CONNECTION_SHUTDOWN_MILLIS);
          connector.addBean(
              new NetworkConnectionLimit(config.network().maxConnections(), connector));
          connector.addBean(new HeaderDeadline(config.timeouts().bodyRead(), timer, metrics));
          this.connector.set(connector);
          return connector;
        });
  }

  /**
   * The REST transports' routes, the bearer token on the repository and management API, request
   * IDs, request metrics, failures answered by {@code errors}, and {@code /metrics}.
   */
  private void routes(
      JavalinConfig c, Engine engine, Json json, ErrorMapper errors, RequestIds requestIds) {
    c.requestLogger.http(
        (ctx, millis) -> {
          metrics.request(
              ctx.method().name(), Routes.of(ctx), ctx.statusCode(), (long) (millis * 1_000_000L));
          if (tracing.on()) {
            Routes.endSpan(ctx);
          }
        });
    c.routes.before(ctx -> Routes.assignRequestId(ctx, requestIds));
    c.routes.exception(
        HttpResponseException.class,
        (e, ctx) -> errors.toResult(e, Routes.requestId(ctx)).writeTo(ctx));
    c.routes.exception(
        Exception.class, (e, ctx) -> errors.toResult(e, Routes.requestId(ctx)).writeTo(ctx));
    // a known path asked with a method none of its routes accepts: 405 with Allow (OPTIONS: 204)
    JavalinState javalin = c.unsafe;
    AllowedMethods allowed =
        new AllowedMethods(() -> javalin.internalRouter.allHttpHandlers(), errors);
    c.routes.exception(
        EndpointNotFound.class,
        (e, ctx) -> allowed.answer(ctx, e, Routes.requestId(ctx)).writeTo(ctx));
    Routes routes = new Routes(c.routes, tracing);
    if (auth != null) {
      routes.filter("/model/*", Routes.requiring(auth));
      routes.filter("/v2/repository/*", Routes.requiring(auth));
    }
    new StatsRoutes(engine, json, runner).register(routes); // before /v2/models/{model}
    new OipRoutes(engine, new InferRequestDecoder(json, sharedMemory), json, runner, sharedMemory)
        .register(routes);
    new SharedMemoryRoutes(sharedMemory, json, auth).register(routes);
    new RepositoryRoutes(engine, control, json, runner).register(routes);
    new ManagementRoutes(engine, json, runner).register(routes);
    new StatusRoutes(engine, status).register(routes);
    DocsRoutes.load().register(routes);
    routes.get(
        "/metrics",
        ctx ->
            new HttpResult(
                    200,
                    "text/plain; version=0.0.4; charset=utf-8",
                    metricsText().getBytes(StandardCharsets.UTF_8),
                    Map.of())
                .writeTo(ctx));
  }

  /**
   * Builds and starts a server: binds the port, then loads pinned and preloaded models in the
   * background.
   *
   * @throws InvalidConfigException when the host is unknown, a pinned or preloaded model is
   *     unknown, or the port cannot be bound
   */
  public static ModelKeeperServer start(ServerConfig config) {
    try {
      InetAddress.getByName(config.network().host());
    } catch (UnknownHostException e) {
      throw new InvalidConfigException("host", "unknown host '" + config.network().host() + "'");
    }
    ModelKeeperServer server = new ModelKeeperServer(config);
    try {
      server.app.start();
    } catch (RuntimeException e) {
      server.workers.shutdown(Duration.ZERO);
      server.executors.shutdown(Duration.ZERO);
      server.timer.shutdownNow();
      throw new InvalidConfigException(
          "port",
          "cannot listen on "
              + config.network().host()
              + ":"
              + config.network().port()
              + ": "
              + rootMessage(e));
    }
    if (config.network().grpcPort() != ServerConfig.GRPC_OFF) {
      try {
        server.grpc =
            GrpcEndpoint.start(
                config.network().host(),
                config.network().grpcPort(),
                (int) Math.min(Integer.MAX_VALUE, config.budgets().maxRequestBytes()),
                config.network().maxConnections(),
                config.timeouts().bodyRead(),
                server.grpcArrivals,
                server.tracing.on()
                    ? List.of(
                        new GrpcCallMetrics(server.metrics, server.grpcService.bindService()),
                        new GrpcSpans(server.tracing))
                    : List.of(
                        new GrpcCallMetrics(server.metrics, server.grpcService.bindService())),
                server.grpcService,
                server.auth,
                server.offHeap);
        server.grpcArrivals.sweepOn(server.timer);
      } catch (IOException | RuntimeException e) {
        server.close();
        throw new InvalidConfigException(
            "grpc-port",
            "cannot listen on "
                + config.network().host()
                + ":"
                + config.network().grpcPort()
                + ": "
                + rootMessage(e));
      }
    }
    if (config.network().metricsPort() != ServerConfig.METRICS_OFF) {
      try {
        server.metricsEndpoint =
            MetricsEndpoint.start(
                config.network().host(), config.network().metricsPort(), server::metricsText);
      } catch (IOException | RuntimeException e) {
        server.close();
        throw new InvalidConfigException(
            "metrics-port",
            "cannot listen on "
                + config.network().host()
                + ":"
                + config.network().metricsPort()
                + ": "
                + rootMessage(e));
      }
    }
    server.preload();
    return server;
  }

  /**
   * A new folder only this process's user can read, for the model files that load requests carry;
   * deleted when the server closes.
   */
  private static Path privateFolder() {
    try {
      return Files.createTempDirectory(
          "modelkeeper-loads-",
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (UnsupportedOperationException e) {
      try {
        return Files.createTempDirectory("modelkeeper-loads-");
      } catch (IOException io) {
        throw new UncheckedIOException("cannot create a folder for loaded model files", io);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a folder for loaded model files", e);
    }
  }

  /** ModelKeeper's metrics and Triton's, as {@code /metrics} answers them on either port. */
  private String metricsText() {
    String own = metrics.scrape();
    return (own.endsWith("\n") || own.isEmpty() ? own : own + "\n") + tritonMetrics.text();
  }

  /** The bound metrics port, or {@link ServerConfig#METRICS_OFF} when it serves none. */
  public int metricsPort() {
    MetricsEndpoint m = metricsEndpoint;
    return m == null ? ServerConfig.METRICS_OFF : m.port();
  }

  /** The server-wide execution settings, which a model's own configuration may override. */
  private static ExecutionSettings executionDefaults(ServerConfig config) {
    return new ExecutionSettings(
        config.scheduling().maxBatchSize(),
        config.scheduling().maxQueueDelay().toNanos(),
        Set.of(),
        config.scheduling().maxConcurrency(),
        config.scheduling().maxQueueSize());
  }

  private static Map<String, ModelTarget> startupModels(ServerConfig config) {
    ModelResolver check = new ModelResolver(config.repository(), Ticker.system());
    Map<String, ModelTarget> out = new LinkedHashMap<>();
    resolveAll(check, "pin", config.pin(), out);
    List<String> preload = new ArrayList<>();
    for (String id : config.preload()) {
      if (id.equals(PRELOAD_ALL)) {
        config.repository().list().stream()
            .map(RepositoryEntry::name)
            .distinct()
            .sorted()
            .forEach(preload::add);
      } else {
        preload.add(id);
      }
    }
    resolveAll(check, "preload", preload, out);
    return out;
  }

  private static void resolveAll(
      ModelResolver resolver, String setting, List<String> ids, Map<String, ModelTarget> out) {
    for (String id : ids) {
      try {
        out.putIfAbsent(id, resolver.resolveId(id));
      } catch (ModelKeeperException e) {
        throw new InvalidConfigException(setting, "unknown model '" + id + "': " + e.getMessage());
      }
    }
  }

  private void preload() {
    List<ModelTarget> targets = new ArrayList<>(startupModels.values());
    if (targets.isEmpty()) {
      state.ready();
      return;
    }
    boolean all = config.preload().contains(PRELOAD_ALL);
    List<String> held = new ArrayList<>(); // pinned while preloading: a later one evicts none
    List<String> left = new ArrayList<>();
    workers
        .background(
            () -> {
              for (ModelTarget t : targets) {
                if (state.phase() == ServerState.Phase.STOPPING) {
                  return;
                }
                try {
                  if (all && !fits(t)) {
                    left.add(t.key());
                    continue;
                  }
                  manager.addModel(t.modelId(), null, t.alias());
                  if (all && !manager.pinned().contains(t.key())) {
                    manager.pin(t.key());
                    held.add(t.key());
                  }
                  LOG.log(Level.INFO, "preloaded {0}", t.key());
                } catch (ModelKeeperException e) { // the model's or the budget's: one line
                  LOG.log(
                      Level.WARNING,
                      "preloading "
                          + t.key()
                          + " failed; it will load on demand: "
                          + e.getMessage());
                } catch (RuntimeException e) {
                  LOG.log(
                      Level.ERROR, "preloading " + t.key() + " failed; it will load on demand", e);
                }
              }
            })
        .whenComplete(
            (ignored, failure) -> {
              held.forEach(manager::unpin);
              if (!left.isEmpty()) {
                LOG.log(
                    Level.WARNING,
                    "--preload ''*'': {0} of {1} models did not fit the budget ({2} models, {3}"
                        + " bytes) and load on demand: {4}",
                    left.size(),
                    targets.size(),
                    manager.options().maxSize(),
                    manager.options().maxBytes(),
                    String.join(", ", left));
              }
              state.ready();
            });
  }

  /**
   * Whether model {@code t} fits the budget beside the models already resident, by its measured or
   * estimated load peak, without evicting any.
   */
  private boolean fits(ModelTarget t) {
    if (manager.usedSlots() >= manager.options().maxSize()) {
      return false;
    }
    long predicted = registry.getModel(t.modelId(), null).predictedSizeBytes(t.modelId());
    long maxBytes = manager.options().maxBytes();
    return maxBytes <= 0 || predicted < 0 || manager.usedBytes() + predicted <= maxBytes;
  }

  /** The bound port (the chosen one when the config asked for port 0). */
  public int port() {
    return app.port();
  }

  /** The bound gRPC port, or {@link ServerConfig#GRPC_OFF} when gRPC is off. */
  public int grpcPort() {
    GrpcEndpoint g = grpc;
    return g == null ? ServerConfig.GRPC_OFF : g.port();
  }

  /**
   * The HTTP routes this server answers, each as its method and path template, e.g. {@code POST
   * /v2/models/{model}/infer}, in the order they were registered.
   */
  public List<String> httpRoutes() {
    List<String> out = new ArrayList<>();
    for (ParsedEndpoint route : app.unsafe.internalRouter.allHttpHandlers()) {
      if (route.endpoint.method.isHttpMethod()) {
        out.add(route.endpoint.method.name() + " " + route.endpoint.path);
      }
    }
    return out;
  }

  /** The base URL clients use, e.g. {@code http://localhost:8000}. */
  public String url() {
    String host = config.network().host();
    if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
      host = "localhost";
    } else if (host.contains(":") && !host.startsWith("[")) {
      host = "[" + host + "]";
    }
    return "http://" + host + ":" + port();
  }

  /** The process memory cap, how it is split, and the latest RSS reading. */
  public MemoryGuard memory() {
    return memory;
  }

  /** The byte budget of models and their runs: the cap's share for models, or --max-bytes. */
  public long modelBytes() {
    return manager.options().maxBytes();
  }

  /** The measured memory cost of each model, kept across restarts when configured. */
  public MemoryCosts memoryCosts() {
    return memoryCosts;
  }

  /** The settings this server runs with. */
  public ServerConfig config() {
    return config;
  }

  /** The manager behind the HTTP API (budgeted and aliased as the server uses it). */
  public ModelManager manager() {
    return manager;
  }

  /** Every model version the repository holds now. */
  public List<RepositoryEntry> repositoryModels() {
    return resolver.list();
  }

  /** True once startup preloads finished, until {@link #close()} begins. */
  public boolean isReady() {
    return state.phase() == ServerState.Phase.READY;
  }

  /** Waits until the server is ready; false when the wait ran out or the server is closing. */
  public boolean awaitReady(Duration timeout) throws InterruptedException {
    return state.awaitReady(timeout);
  }

  /**
   * Stops gracefully within the shutdown timeout, used once: readiness turns false, new requests
   * are refused (503), requests in flight may finish until shortly before the timeout, then those
   * still running are answered 503; the connectors close, background work gets what is left of the
   * timeout, and every model is unloaded. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    long deadline = System.nanoTime() + config.timeouts().shutdown().toNanos();
    state.stopping();
    GrpcEndpoint g = grpc;
    if (g != null) {
      g.stopAccepting();
    }
    MetricsEndpoint m = metricsEndpoint;
    if (m != null) {
      m.close();
    }
    // bodies still arriving cannot be served any more: answer them now, before the connectors close
    intake.abortAll(new UnavailableException("the server is shutting down", Duration.ofSeconds(1)));
    long grace = config.timeouts().shutdown().toNanos();
    long answerAt = grace - Math.min(ANSWER_MARGIN.toNanos(), grace / 4);
    ScheduledFuture<?> answerRest =
        timer.schedule(
            () -> {
              UnavailableException stopping =
                  new UnavailableException("the server is shutting down", Duration.ofSeconds(1));
              intake.abortAll(stopping);
              runner.answerPending(stopping);
            },
            answerAt,
            TimeUnit.NANOSECONDS);
    // stop accepting connections; on those open, refuse new requests (503) and wait for those in
    // flight before the connectors stop: stopping closes connections idle for a moment, and a
    // request waiting for its model looks idle
    ServerConnector listening = connector.get();
    if (listening != null) {
      listening.setAccepting(false);
      listening.close();
    }
    try {
      graceful.shutdown().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      LOG.log(
          Level.WARNING,
          "some requests were still in flight after {0}",
          config.timeouts().shutdown());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      app.stop();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "the HTTP server did not stop cleanly: {0}", rootMessage(e));
    }
    if (g != null) {
      g.awaitStopped(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    answerRest.cancel(false);
    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    if (!workers.shutdown(left)) {
      LOG.log(
          Level.WARNING,
          "some model operations were still running after {0}",
          config.timeouts().shutdown());
    }
    if (!executors.shutdown(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
      LOG.log(
          Level.WARNING,
          "some inferences were still queued or running after {0}",
          config.timeouts().shutdown());
    }
    timer.shutdownNow();
    // a form being written finishes (its session cannot be interrupted); none starts any more
    if (!forms.close(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
      LOG.log(
          Level.WARNING,
          "a pre-optimized model form was still being written after {0}; it is written again"
              + " at the next start",
          config.timeouts().shutdown());
    }
    sharedMemory.close();
    try {
      manager.clear();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "some models failed to unload", e);
    }
    repository.close();
    metrics.close();
  }

  /**
   * {@code registry}, except that no load starts once the server is stopping (the runtime may not
   * even initialise during JVM shutdown): such requests are answered 503.
   */
  private ModelRegistry refusingLoadsWhenStopping(ModelRegistry registry) {
    return (modelId, apiKey) -> {
      if (state.phase() == ServerState.Phase.STOPPING) {
        throw new UnavailableException(
            "the server is shutting down: no model loads start any more", Duration.ofSeconds(1));
      }
      return registry.getModel(modelId, apiKey);
    };
  }

  private static ScheduledExecutorService timer() {
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread thread = new Thread(r, "modelkeeper-timer");
              thread.setDaemon(true);
              return thread;
            });
    t.setRemoveOnCancelPolicy(true);
    return t;
  }

  /** Bytes of request bodies and decoded tensors held now (the in-flight budget in use). */
  public long inflightBytes() {
    return inflight.inUse();
  }

  /** Off-heap bytes holding large request bodies and gRPC messages now. */
  public long offHeapRequestBytes() {
    return offHeap.inUseBytes();
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.toString();
  }
}
