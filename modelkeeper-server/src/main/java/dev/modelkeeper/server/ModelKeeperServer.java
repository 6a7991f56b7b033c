package dev.modelkeeper.server;

import dev.modelkeeper.core.BaseModelManager;
import dev.modelkeeper.core.CacheOptions;
import dev.modelkeeper.core.ManagerOptions;
import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.Ticker;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.RepositoryEntry;
import io.javalin.Javalin;
import io.javalin.compression.CompressionStrategy;
import io.javalin.http.HttpResponseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ModelKeeper HTTP server: the Open Inference Protocol, its repository extension, the
 * management API and Prometheus metrics over one {@link ModelManager} (a {@link BaseModelManager}
 * under a {@link WithFixedSizeCache} budget). Thread-safe.
 *
 * <p>{@link #start} binds the port and returns at once; pinned and preloaded models load in the
 * background, and {@code /v2/health/ready} answers 200 once they are done. {@link #close()} shuts
 * down gracefully: it stops accepting connections, lets in-flight requests finish (bounded by the
 * shutdown timeout), then unloads every model.
 *
 * <p>Threads: HTTP requests arrive on Jetty's threads; anything that may load, run or unload a
 * model runs on the server's worker pool ({@link ServerConfig#workerThreads()}), bounded by the
 * request timeout.
 */
public final class ModelKeeperServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ModelKeeperServer.class);
  private static final long IDLE_CONNECTION_SHUTDOWN_MILLIS = 100;

  private final ServerConfig config;
  private final WithFixedSizeCache manager;
  private final ModelResolver resolver;
  private final ServerMetrics metrics;
  private final RequestRunner runner;
  private final ServerState state = new ServerState();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Map<String, ModelTarget> startupModels;
  private final Javalin app;

  private ModelKeeperServer(ServerConfig config) {
    this.config = config;
    Json json = new Json();
    ErrorMapper errors = new ErrorMapper(json);
    this.resolver = new ModelResolver(config.repository(), Ticker.system());
    BaseModelManager base =
        new BaseModelManager(
            resolver.registry(config.registry()),
            ManagerOptions.builder()
                .lifecycleTimeout(config.lifecycleTimeout())
                .drainTimeout(config.drainTimeout())
                .failureBackoff(
                    config.loadFailureBackoff(), config.loadFailureBackoff().multipliedBy(60))
                .build());
    this.manager =
        new WithFixedSizeCache(
            base,
            CacheOptions.builder(config.maxModels())
                .maxBytes(config.maxBytes())
                .capacityTimeout(config.capacityTimeout())
                .expireAfterIdle(config.idleTimeout())
                .build());
    ModelEvents events = new ModelEvents();
    manager.addListener(events);
    this.metrics = new ServerMetrics(manager);
    manager.addListener(metrics);
    this.startupModels = startupModels(config);
    for (String pin : config.pin()) {
      manager.pin(startupModels.get(pin).key());
    }
    this.runner = new RequestRunner(config.workerThreads(), config.requestTimeout(), errors);
    TensorCodec codec = new TensorCodec();
    RequestIds requestIds = new RequestIds();
    BearerAuth auth = config.authToken() != null ? new BearerAuth(config.authToken()) : null;
    OipRoutes oip =
        new OipRoutes(manager, resolver, events, metrics, codec, json, runner, state);
    RepositoryRoutes repository = new RepositoryRoutes(manager, resolver, events, json, runner);
    ManagementRoutes management = new ManagementRoutes(manager, resolver, events, json, runner);
    this.app =
        Javalin.create(
            c -> {
              c.startup.showJavalinBanner = false;
              c.startup.showOldJavalinVersionWarning = false;
              c.startup.startupWatcherEnabled = false;
              c.http.maxRequestSize = config.maxRequestBytes();
              c.http.compressionStrategy = CompressionStrategy.NONE;
              c.jetty.modifyServer(
                  server -> {
                    server.setStopTimeout(config.shutdownTimeout().toMillis());
                    server.insertHandler(new GracefulHandler());
                    server.setErrorHandler(new JsonErrorHandler(json));
                  });
              c.jetty.modifyServletContextHandler(
                  context -> context.setErrorHandler(new JsonErrorHandler(json)));
              c.jetty.addConnector(
                  (server, http) -> {
                    ServerConnector connector =
                        new ServerConnector(server, new HttpConnectionFactory(http));
                    connector.setHost(config.host());
                    connector.setPort(config.port());
                    // on shutdown, idle keep-alive connections close after this; requests in
                    // flight are waited for up to the stop timeout regardless
                    connector.setShutdownIdleTimeout(IDLE_CONNECTION_SHUTDOWN_MILLIS);
                    return connector;
                  });
              c.requestLogger.http(
                  (ctx, millis) ->
                      metrics.request(
                          ctx.method().name(),
                          Routes.of(ctx),
                          ctx.statusCode(),
                          (long) (millis * 1_000_000L)));
              c.routes.before(requestIds::assign);
              c.routes.exception(
                  HttpResponseException.class,
                  (e, ctx) -> errors.toResult(e, RequestIds.of(ctx)).writeTo(ctx));
              c.routes.exception(
                  Exception.class, (e, ctx) -> errors.toResult(e, RequestIds.of(ctx)).writeTo(ctx));
              Routes routes = new Routes(c.routes);
              if (auth != null) {
                routes.filter("/model/*", auth::check);
                routes.filter("/v2/repository/*", auth::check);
              }
              oip.register(routes);
              repository.register(routes);
              management.register(routes);
              routes.get(
                  "/metrics",
                  ctx ->
                      new HttpResult(
                              200,
                              "text/plain; version=0.0.4; charset=utf-8",
                              metrics.scrape().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                              Map.of())
                          .writeTo(ctx));
            });
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
      java.net.InetAddress.getByName(config.host());
    } catch (java.net.UnknownHostException e) {
      throw new InvalidConfigException("host", "unknown host '" + config.host() + "'");
    }
    ModelKeeperServer server = new ModelKeeperServer(config);
    try {
      server.app.start();
    } catch (RuntimeException e) {
      server.runner.shutdown(Duration.ZERO);
      throw new InvalidConfigException(
          "port",
          "cannot listen on " + config.host() + ":" + config.port() + ": " + rootMessage(e));
    }
    server.preload();
    return server;
  }

  private static Map<String, ModelTarget> startupModels(ServerConfig config) {
    ModelResolver check = new ModelResolver(config.repository(), Ticker.system());
    Map<String, ModelTarget> out = new LinkedHashMap<>();
    resolveAll(check, "pin", config.pin(), out);
    resolveAll(check, "preload", config.preload(), out);
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
    runner
        .background(
            () -> {
              for (ModelTarget t : targets) {
                if (state.phase() == ServerState.Phase.STOPPING) {
                  return;
                }
                try {
                  manager.addModel(t.modelId(), null, t.alias());
                  LOG.info("preloaded {}", t.key());
                } catch (RuntimeException e) {
                  LOG.error("preloading {} failed; it will load on demand", t.key(), e);
                }
              }
            })
        .whenComplete((ignored, failure) -> state.ready());
  }

  /** The bound port (the chosen one when the config asked for port 0). */
  public int port() {
    return app.port();
  }

  /** The base URL clients use, e.g. {@code http://localhost:8000}. */
  public String url() {
    String host = config.host();
    if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
      host = "localhost";
    } else if (host.contains(":") && !host.startsWith("[")) {
      host = "[" + host + "]";
    }
    return "http://" + host + ":" + port();
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
   * Stops gracefully: refuses new connections, lets in-flight requests finish for up to the
   * shutdown timeout, waits for background work, then unloads every model. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    state.stopping();
    try {
      app.stop();
    } catch (RuntimeException e) {
      LOG.warn("the HTTP server did not stop cleanly", e);
    }
    if (!runner.shutdown(config.shutdownTimeout())) {
      LOG.warn("some model operations were still running after {}", config.shutdownTimeout());
    }
    try {
      manager.clear();
    } catch (RuntimeException e) {
      LOG.warn("some models failed to unload", e);
    }
    metrics.close();
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.toString();
  }
}
