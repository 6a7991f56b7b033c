package dev.modelkeeper.cli;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepositories;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.onnx.remote.ArtifactDownloadException;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.ServerConfig;
import dev.modelkeeper.server.engine.InvalidConfigException;
import dev.modelkeeper.server.memory.MemoryGuard;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code modelkeeper serve}: starts the HTTP server, prints where it listens, what it serves and
 * its budgets, and runs until the process is asked to stop (then shuts down gracefully). Bad
 * settings fail before anything starts, with a message naming the flag and its environment
 * variable. Not thread-safe: picocli fills one instance per command line.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
      "Serves a model repository over HTTP (Open Inference Protocol, repository extension,"
          + " management API, Prometheus metrics).",
      "Every option can also be set with MODELKEEPER_<NAME>, e.g. MODELKEEPER_MAX_BYTES=4GiB."
    })
final class ServeCommand implements Callable<Integer> {

  private final Map<String, String> env;
  private final PrintWriter out;
  private final PrintWriter err;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--host",
      paramLabel = "ADDRESS",
      description =
          "Interface to listen on, this machine only by default; 0.0.0.0 listens on"
              + " every interface, e.g. in a container (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(
      names = "--port",
      paramLabel = "PORT",
      description = "Port to listen on; 0 picks any free port (default: ${DEFAULT-VALUE}).")
  String port;

  @Option(
      names = "--grpc-port",
      paramLabel = "PORT",
      description =
          "gRPC port (Open Inference Protocol); 0 picks any free port, -1 turns gRPC"
              + " off (default: ${DEFAULT-VALUE}).")
  String grpcPort;

  @Option(
      names = "--repository",
      paramLabel = "FOLDER|URL",
      description =
          "Model repository: a folder <root>/<name>/<version>/model.onnx or an http(s)"
              + " URL of one (default: the bundled demo repository).")
  String repository;

  @Option(
      names = "--cache-dir",
      defaultValue = "~/.cache/modelkeeper",
      paramLabel = "FOLDER",
      description =
          "Where downloaded models and the demo repository are kept; ~ is your home"
              + " folder (default: ${DEFAULT-VALUE}).")
  String cacheDir;

  @Option(
      names = "--pre-optimize",
      defaultValue = "true",
      paramLabel = "true|false",
      description =
          "Keep a pre-optimized form of each model file in <cache-dir>/optimized,"
              + " written by its first load, so that later loads skip parsing and graph"
              + " optimization; false loads every model from its file (default: ${DEFAULT-VALUE}).")
  String preOptimize;

  @Option(
      names = "--max-models",
      paramLabel = "N",
      description = "Most models resident at once (default: ${DEFAULT-VALUE}).")
  String maxModels;

  @Option(
      names = "--max-bytes",
      paramLabel = "SIZE",
      description =
          "Most bytes of models resident at once, e.g. 512MB or 4GiB; 0 means no byte"
              + " budget (default: ${DEFAULT-VALUE}).")
  String maxBytes;

  @Option(
      names = "--max-memory",
      paramLabel = "SIZE",
      description =
          "Cap on the whole process's resident memory, Java heap included, e.g. 768MiB or"
              + " 4GiB; models are charged their measured cost against it. 0 means 80%% of the"
              + " container's memory limit, else of the machine's memory"
              + " (default: ${DEFAULT-VALUE}).")
  String maxMemory;

  @Option(
      names = "--lifecycle-timeout",
      paramLabel = "DURATION",
      description =
          "How long a request waits for another load or unload of the same model"
              + " (default: ${DEFAULT-VALUE}).")
  String lifecycleTimeout;

  @Option(
      names = "--capacity-timeout",
      paramLabel = "DURATION",
      description =
          "How long a load waits for room when every resident model is busy"
              + " (default: ${DEFAULT-VALUE}).")
  String capacityTimeout;

  @Option(
      names = "--idle-timeout",
      paramLabel = "DURATION",
      description =
          "Unload a model nobody used for this long (never one in use or pinned);"
              + " 0 means never (default: ${DEFAULT-VALUE}).")
  String idleTimeout;

  @Option(
      names = "--drain-timeout",
      paramLabel = "DURATION",
      description = "How long an unload waits for running inferences (default: ${DEFAULT-VALUE}).")
  String drainTimeout;

  @Option(
      names = "--request-timeout",
      paramLabel = "DURATION",
      description =
          "Longest a request may take before it is answered 503" + " (default: ${DEFAULT-VALUE}).")
  String requestTimeout;

  @Option(
      names = "--shutdown-timeout",
      paramLabel = "DURATION",
      description = "How long shutdown lets in-flight requests finish (default: ${DEFAULT-VALUE}).")
  String shutdownTimeout;

  @Option(
      names = "--max-request-bytes",
      paramLabel = "SIZE",
      description = "Largest request body accepted (default: ${DEFAULT-VALUE}).")
  String maxRequestBytes;

  @Option(
      names = "--max-inflight-bytes",
      paramLabel = "SIZE",
      description =
          "Most bytes of request bodies and decoded tensors in memory at once; a request"
              + " that does not fit waits up to --admission-timeout, then gets 503. 0 means a quarter"
              + " of the maximum heap (default: ${DEFAULT-VALUE}).")
  String maxInflightBytes;

  @Option(
      names = "--admission-timeout",
      paramLabel = "DURATION",
      description =
          "How long a request waits for room in --max-inflight-bytes"
              + " (default: ${DEFAULT-VALUE}).")
  String admissionTimeout;

  @Option(
      names = "--body-read-timeout",
      paramLabel = "DURATION",
      description =
          "How long a client has to send a request body or gRPC message (and a new connection"
              + " its first headers or HTTP/2 preface); slower ones get 408 and are closed, or"
              + " DEADLINE_EXCEEDED (default: ${DEFAULT-VALUE}).")
  String bodyReadTimeout;

  @Option(
      names = "--max-connections",
      paramLabel = "N",
      description =
          "Most connections open at once, REST and gRPC each; more wait to be accepted"
              + " (default: ${DEFAULT-VALUE}).")
  String maxConnections;

  @Option(
      names = "--allowed-origins",
      split = ",",
      paramLabel = "ORIGIN",
      description =
          "Web origins whose pages may send state-changing requests, e.g."
              + " https://app.example.com; * allows any. Others carrying an Origin header get 403"
              + " (default: none).")
  List<String> allowedOrigins = new ArrayList<>();

  @Option(
      names = "--worker-threads",
      paramLabel = "N",
      description =
          "Threads for requests that may wait for a load or an unload; at most half"
              + " this many inferences run their model at once on the thread that received"
              + " them (default: ${DEFAULT-VALUE}).")
  String workerThreads;

  @Option(
      names = "--max-batch-size",
      paramLabel = "ROWS",
      description =
          "Most rows one batched model run concatenates, for models whose config.json"
              + " sets no max_batch_size; 1 runs every request alone (default: ${DEFAULT-VALUE}).")
  String maxBatchSize;

  @Option(
      names = "--max-queue-delay",
      paramLabel = "DURATION",
      description =
          "How long a queued request waits for more rows before a partial batch runs,"
              + " for models whose config.json sets no max_queue_delay (default: ${DEFAULT-VALUE}).")
  String maxQueueDelay;

  @Option(
      names = "--max-concurrency",
      paramLabel = "N",
      description =
          "Most runs of one model at once, for models whose config.json sets no"
              + " max_concurrency (default: ${DEFAULT-VALUE}).")
  String maxConcurrency;

  @Option(
      names = "--max-queue-size",
      paramLabel = "N",
      description =
          "Most requests queued for one model; more are answered 503"
              + " (default: ${DEFAULT-VALUE}).")
  String maxQueueSize;

  @Option(
      names = "--auth-token",
      paramLabel = "TOKEN",
      description =
          "Require 'Authorization: Bearer TOKEN' on management endpoints (/model/*,"
              + " /v2/repository/*); off when not given.")
  String authToken;

  @Option(
      names = "--preload",
      split = ",",
      paramLabel = "MODEL",
      description = "Models to load before reporting ready, e.g. iris,mlp-small/2.")
  List<String> preload = new ArrayList<>();

  @Option(
      names = "--pin",
      split = ",",
      paramLabel = "MODEL",
      description = "Models that are loaded at start and never evicted.")
  List<String> pin = new ArrayList<>();

  @Option(
      names = "--log-format",
      defaultValue = "text",
      paramLabel = "FORMAT",
      description =
          "How the log on stderr is written: text, or json (one object a line, for log"
              + " shippers) (default: ${DEFAULT-VALUE}).")
  String logFormat;

  /** The tracing SDK, when the OTEL_* variables ask for tracing; closed after the server. */
  private io.opentelemetry.sdk.OpenTelemetrySdk tracing;

  private io.opentelemetry.sdk.OpenTelemetrySdk tracing() {
    if (tracing == null && TracingSetup.wanted(env)) {
      tracing = TracingSetup.start(env);
    }
    return tracing;
  }

  ServeCommand(Map<String, String> env, PrintWriter out, PrintWriter err) {
    this.env = env;
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() throws Exception {
    ModelKeeperServer server = start();
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean stopping = new AtomicBoolean();
    Runnable stop =
        () -> {
          if (stopping.compareAndSet(false, true)) {
            out.println("Stopping: finishing in-flight requests, then unloading models.");
            server.close();
            if (tracing != null) {
              TracingSetup.close(tracing);
            }
            out.println("Stopped.");
            out.flush();
            stopped.countDown();
          }
        };
    // SIGTERM and SIGINT stop the server before the JVM shuts down: shutdown hooks all run at
    // once, and ONNX Runtime closes its environment in one of its own, under draining requests
    StopSignals.install(() -> new Thread(stop, "modelkeeper-stop").start());
    Runtime.getRuntime().addShutdownHook(new Thread(stop, "modelkeeper-shutdown"));
    if (server.awaitReady(Duration.ofDays(365))) {
      out.println("Ready.");
    } else {
      err.println("The server stopped before it was ready.");
    }
    stopped.await();
    return 0;
  }

  /** Validates the settings, starts the server and prints the startup summary; never blocks. */
  ModelKeeperServer start() {
    Logging.configure(parse("log-format", logFormat, Logging.Format::parse));
    Path cache = path("cache-dir", cacheDir);
    String repositoryLabel;
    ModelRepository repo;
    if (repository == null) {
      Path demo;
      try {
        demo = DemoRepository.materialize(cache.resolve("demo-repository"));
      } catch (UncheckedIOException e) {
        throw invalid("cache-dir", e.getMessage(), e);
      }
      repo = new LocalModelRepository(demo);
      repositoryLabel = repo.location() + " (the bundled demo repository)";
    } else {
      try {
        repo = ModelRepositories.open(repository, cache.resolve("artifacts"));
      } catch (IllegalArgumentException e) {
        throw invalid("repository", e.getMessage(), e);
      }
      repositoryLabel = repo.location();
    }
    ServerConfig config;
    try {
      config =
          ServerConfig.builder(repo)
              .host(host)
              .port(parse("port", port, Integer::parseInt))
              .grpcPort(parse("grpc-port", grpcPort, Integer::parseInt))
              .maxModels(parse("max-models", maxModels, Integer::parseInt))
              .maxBytes(parse("max-bytes", maxBytes, Sizes::parse))
              .maxMemory(parse("max-memory", maxMemory, Sizes::parse))
              .memoryCostsFile(cache.resolve("memory-costs.json"))
              .optimizedModelsDir(
                  parse("pre-optimize", preOptimize, ServeCommand::trueOrFalse)
                      ? cache.resolve("optimized")
                      : null)
              .lifecycleTimeout(parse("lifecycle-timeout", lifecycleTimeout, Durations::parse))
              .capacityTimeout(parse("capacity-timeout", capacityTimeout, Durations::parse))
              .idleTimeout(parse("idle-timeout", idleTimeout, Durations::parse))
              .drainTimeout(parse("drain-timeout", drainTimeout, Durations::parse))
              .requestTimeout(parse("request-timeout", requestTimeout, Durations::parse))
              .shutdownTimeout(parse("shutdown-timeout", shutdownTimeout, Durations::parse))
              .maxRequestBytes(parse("max-request-bytes", maxRequestBytes, Sizes::parse))
              .workerThreads(parse("worker-threads", workerThreads, Integer::parseInt))
              .maxBatchSize(parse("max-batch-size", maxBatchSize, Integer::parseInt))
              .maxQueueDelay(parse("max-queue-delay", maxQueueDelay, Durations::parse))
              .maxConcurrency(parse("max-concurrency", maxConcurrency, Integer::parseInt))
              .maxQueueSize(parse("max-queue-size", maxQueueSize, Integer::parseInt))
              .maxInflightBytes(parse("max-inflight-bytes", maxInflightBytes, Sizes::parse))
              .admissionTimeout(parse("admission-timeout", admissionTimeout, Durations::parse))
              .bodyReadTimeout(parse("body-read-timeout", bodyReadTimeout, Durations::parse))
              .maxConnections(parse("max-connections", maxConnections, Integer::parseInt))
              .allowedOrigins(trimmed(allowedOrigins))
              .authToken(authToken)
              .preload(trimmed(preload))
              .pin(trimmed(pin))
              .tracing(tracing())
              .build();
    } catch (InvalidConfigException e) {
      throw invalid(e.setting(), e.reason(), e);
    }
    List<RepositoryEntry> models;
    String unreadable = null;
    try {
      models = repo.list();
    } catch (ArtifactDownloadException e) {
      // a remote store that cannot be read now: the server starts and keeps trying (its models
      // answer 503 with the reason until it can be read)
      models = List.of();
      unreadable = e.getMessage();
    } catch (RuntimeException e) {
      throw invalid("repository", "cannot list " + repo.location() + ": " + e.getMessage(), e);
    }
    // start the inference runtime now: first started by a request in flight during a JVM
    // shutdown, it cannot register its own shutdown hook and that request fails
    OnnxRuntimeState.environment();
    ModelKeeperServer server;
    try {
      server = ModelKeeperServer.start(config);
    } catch (InvalidConfigException e) {
      throw invalid(e.setting(), e.reason(), e);
    }
    printSummary(server, repositoryLabel, models, unreadable);
    return server;
  }

  /** {@code true} or {@code false}, in any case. */
  private static boolean trueOrFalse(String value) {
    if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(value);
    }
    throw new IllegalArgumentException("'" + value + "' is neither true nor false");
  }

  private static String grpcAddress(ModelKeeperServer server) {
    String url = server.url();
    String host = url.substring("http://".length(), url.lastIndexOf(':'));
    return host + ":" + server.grpcPort();
  }

  private void printSummary(
      ModelKeeperServer server,
      String repositoryLabel,
      List<RepositoryEntry> models,
      String unreadable) {
    ServerConfig c = server.config();
    out.println("ModelKeeper is serving " + server.url());
    if (server.grpcPort() != ServerConfig.GRPC_OFF) {
      out.println("  gRPC:        " + grpcAddress(server));
    }
    out.println("  repository:  " + repositoryLabel);
    MemoryGuard memory = server.memory();
    out.println(
        "  memory:      "
            + Sizes.format(memory.cap().bytes())
            + " cap ("
            + memory.cap().source()
            + "): "
            + Sizes.format(memory.jvmBytes())
            + " for the JVM (heap up to "
            + Sizes.format(Runtime.getRuntime().maxMemory())
            + "), "
            + Sizes.format(memory.modelBytes())
            + " for models and their runs");
    out.println(
        "  budget:      "
            + c.maxModels()
            + " models, "
            + Sizes.format(server.modelBytes())
            + " of model memory"
            + (c.maxBytes() > 0 ? " (--max-bytes " + Sizes.format(c.maxBytes()) + ")" : "")
            + "; costs measured and kept in "
            + server.memoryCosts().file().map(Object::toString).orElse("memory only"));
    out.println(
        "  forms:       "
            + (c.optimizedModelsDir() != null
                ? "pre-optimized model forms kept in " + c.optimizedModelsDir()
                : "off (--pre-optimize false): every model loads from its file"));
    out.println(
        "  models:      "
            + models.size()
            + " found"
            + (unreadable != null
                ? " (" + unreadable + "; trying again, see the warning above)"
                : models.isEmpty()
                    ? " (the repository is empty)"
                    : ": "
                        + models.stream()
                            .map(RepositoryEntry::id)
                            .collect(Collectors.joining(", "))));
    Map<ModelId, String> broken = c.repository().configProblems();
    if (!broken.isEmpty()) {
      out.println(
          "  broken:      "
              + broken.keySet().stream()
                  .map(ModelId::toString)
                  .sorted()
                  .collect(Collectors.joining(", "))
              + " (config does not parse: listed, but fails to load; see the warnings above)");
    }
    if (!c.pin().isEmpty() || !c.preload().isEmpty()) {
      out.println("  pinned:      " + (c.pin().isEmpty() ? "none" : String.join(", ", c.pin())));
      out.println(
          "  preloading:  " + (c.preload().isEmpty() ? "none" : String.join(", ", c.preload())));
    }
    out.println(
        "  auth:        "
            + (c.authToken() != null
                ? "bearer token required on /model/* and /v2/repository/*"
                : "off"));
    out.println(
        "  tracing:     "
            + (tracing != null
                ? "OpenTelemetry, "
                    + env.getOrDefault(
                        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                        env.getOrDefault(
                            "OTEL_EXPORTER_OTLP_ENDPOINT",
                            "OTEL_TRACES_EXPORTER=" + env.get("OTEL_TRACES_EXPORTER")))
                : "off (set OTEL_EXPORTER_OTLP_ENDPOINT to trace requests)"));
    out.println(
        "  requests:    "
            + Sizes.format(c.maxRequestBytes())
            + " per body, "
            + Sizes.format(c.effectiveMaxInflightBytes())
            + " in flight");
    out.println("  status page: " + server.url() + "/");
    out.println("  API docs:    " + server.url() + "/v2/docs");
    out.println("  try:         curl " + server.url() + "/v2/health/ready");
    out.flush();
  }

  private <T> T parse(String setting, String value, Function<String, T> parser) {
    try {
      return parser.apply(value.trim());
    } catch (IllegalArgumentException e) {
      String reason =
          e instanceof NumberFormatException
              ? "'" + value + "' is not a whole number"
              : e.getMessage();
      throw invalid(setting, reason, e);
    }
  }

  private Path path(String setting, String value) {
    try {
      if (value.equals("~") || value.startsWith("~/")) {
        return Path.of(System.getProperty("user.home"), value.substring(1).replaceFirst("^/", ""));
      }
      return Path.of(value);
    } catch (java.nio.file.InvalidPathException e) {
      throw invalid(setting, e.getMessage(), e);
    }
  }

  private static List<String> trimmed(List<String> ids) {
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      if (!id.isBlank()) {
        out.add(id.trim());
      }
    }
    return out;
  }

  /** A failure naming the flag, and its environment variable when the value came from there. */
  private ConfigException invalid(String setting, String reason, Throwable cause) {
    String flag = "--" + setting;
    String variable = ModelKeeperCli.variable(flag);
    boolean fromEnv =
        env.containsKey(variable) && !spec.commandLine().getParseResult().hasMatchedOption(flag);
    return new ConfigException(
        "invalid " + (fromEnv ? variable + " (" + flag + ")" : flag) + ": " + reason, cause);
  }
}
