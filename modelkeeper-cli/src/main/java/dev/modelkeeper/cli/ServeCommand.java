package dev.modelkeeper.cli;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelRepositories;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.server.InvalidConfigException;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.ServerConfig;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
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

  @Option(names = "--host", defaultValue = "0.0.0.0", paramLabel = "ADDRESS",
      description = "Interface to listen on (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--port", defaultValue = "8000", paramLabel = "PORT",
      description = "Port to listen on; 0 picks any free port (default: ${DEFAULT-VALUE}).")
  String port;

  @Option(names = "--repository", paramLabel = "FOLDER|URL",
      description = "Model repository: a folder <root>/<name>/<version>/model.onnx or an http(s)"
          + " URL of one (default: the bundled demo repository).")
  String repository;

  @Option(names = "--cache-dir", paramLabel = "FOLDER",
      description = "Where downloaded models and the demo repository are kept"
          + " (default: ~/.cache/modelkeeper).")
  String cacheDir;

  @Option(names = "--max-models", defaultValue = "8", paramLabel = "N",
      description = "Most models resident at once (default: ${DEFAULT-VALUE}).")
  String maxModels;

  @Option(names = "--max-bytes", defaultValue = "0", paramLabel = "SIZE",
      description = "Most bytes of models resident at once, e.g. 512MB or 4GiB; 0 means no byte"
          + " budget (default: ${DEFAULT-VALUE}).")
  String maxBytes;

  @Option(names = "--lifecycle-timeout", defaultValue = "60s", paramLabel = "DURATION",
      description = "How long a request waits for another load or unload of the same model"
          + " (default: ${DEFAULT-VALUE}).")
  String lifecycleTimeout;

  @Option(names = "--capacity-timeout", defaultValue = "30s", paramLabel = "DURATION",
      description = "How long a load waits for room when every resident model is busy"
          + " (default: ${DEFAULT-VALUE}).")
  String capacityTimeout;

  @Option(names = "--idle-timeout", defaultValue = "0", paramLabel = "DURATION",
      description = "Unload a model nobody used for this long (never one in use or pinned);"
          + " 0 means never (default: ${DEFAULT-VALUE}).")
  String idleTimeout;

  @Option(names = "--drain-timeout", defaultValue = "30s", paramLabel = "DURATION",
      description = "How long an unload waits for running inferences (default: ${DEFAULT-VALUE}).")
  String drainTimeout;

  @Option(names = "--request-timeout", defaultValue = "120s", paramLabel = "DURATION",
      description = "Longest a request may take before it is answered 503"
          + " (default: ${DEFAULT-VALUE}).")
  String requestTimeout;

  @Option(names = "--shutdown-timeout", defaultValue = "30s", paramLabel = "DURATION",
      description = "How long shutdown lets in-flight requests finish (default: ${DEFAULT-VALUE}).")
  String shutdownTimeout;

  @Option(names = "--max-request-bytes", defaultValue = "32MiB", paramLabel = "SIZE",
      description = "Largest request body accepted (default: ${DEFAULT-VALUE}).")
  String maxRequestBytes;

  @Option(names = "--worker-threads", defaultValue = "64", paramLabel = "N",
      description = "Threads that run inference, loads and unloads (default: ${DEFAULT-VALUE}).")
  String workerThreads;

  @Option(names = "--auth-token", paramLabel = "TOKEN",
      description = "Require 'Authorization: Bearer TOKEN' on management endpoints (/model/*,"
          + " /v2/repository/*); off when not given.")
  String authToken;

  @Option(names = "--preload", split = ",", paramLabel = "MODEL",
      description = "Models to load before reporting ready, e.g. iris,mlp-small/2.")
  List<String> preload = new ArrayList<>();

  @Option(names = "--pin", split = ",", paramLabel = "MODEL",
      description = "Models that are loaded at start and never evicted.")
  List<String> pin = new ArrayList<>();

  ServeCommand(Map<String, String> env, PrintWriter out, PrintWriter err) {
    this.env = env;
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() throws Exception {
    ModelKeeperServer server = start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  out.println("Stopping: finishing in-flight requests, then unloading models.");
                  server.close();
                  out.println("Stopped.");
                  stopped.countDown();
                },
                "modelkeeper-shutdown"));
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
    Path cache = cacheDir != null ? path("cache-dir", cacheDir) : defaultCacheDir();
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
              .maxModels(parse("max-models", maxModels, Integer::parseInt))
              .maxBytes(parse("max-bytes", maxBytes, Sizes::parse))
              .lifecycleTimeout(parse("lifecycle-timeout", lifecycleTimeout, Durations::parse))
              .capacityTimeout(parse("capacity-timeout", capacityTimeout, Durations::parse))
              .idleTimeout(parse("idle-timeout", idleTimeout, Durations::parse))
              .drainTimeout(parse("drain-timeout", drainTimeout, Durations::parse))
              .requestTimeout(parse("request-timeout", requestTimeout, Durations::parse))
              .shutdownTimeout(parse("shutdown-timeout", shutdownTimeout, Durations::parse))
              .maxRequestBytes(parse("max-request-bytes", maxRequestBytes, Sizes::parse))
              .workerThreads(parse("worker-threads", workerThreads, Integer::parseInt))
              .authToken(authToken)
              .preload(trimmed(preload))
              .pin(trimmed(pin))
              .build();
    } catch (InvalidConfigException e) {
      throw invalid(e.setting(), e.reason(), e);
    }
    List<RepositoryEntry> models;
    try {
      models = repo.list();
    } catch (RuntimeException e) {
      throw invalid("repository", "cannot list " + repo.location() + ": " + e.getMessage(), e);
    }
    ModelKeeperServer server;
    try {
      server = ModelKeeperServer.start(config);
    } catch (InvalidConfigException e) {
      throw invalid(e.setting(), e.reason(), e);
    }
    printSummary(server, repositoryLabel, models);
    return server;
  }

  private void printSummary(
      ModelKeeperServer server, String repositoryLabel, List<RepositoryEntry> models) {
    ServerConfig c = server.config();
    out.println("ModelKeeper is serving " + server.url());
    out.println("  repository:  " + repositoryLabel);
    out.println(
        "  budget:      "
            + c.maxModels()
            + " models, "
            + (c.maxBytes() > 0 ? Sizes.format(c.maxBytes()) : "no byte limit"));
    out.println(
        "  models:      "
            + models.size()
            + " found"
            + (models.isEmpty()
                ? " (the repository is empty)"
                : ": " + models.stream().map(RepositoryEntry::id).collect(Collectors.joining(", "))));
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
    out.println("  try:         curl " + server.url() + "/v2/health/ready");
    out.flush();
  }

  private <T> T parse(String setting, String value, Function<String, T> parser) {
    try {
      return parser.apply(value.trim());
    } catch (IllegalArgumentException e) {
      String reason =
          e instanceof NumberFormatException ? "'" + value + "' is not a whole number" : e.getMessage();
      throw invalid(setting, reason, e);
    }
  }

  private Path path(String setting, String value) {
    try {
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

  private static Path defaultCacheDir() {
    return Path.of(System.getProperty("user.home"), ".cache", "modelkeeper");
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
