package dev.modelkeeper.cli;

import dev.modelkeeper.onnx.LocalModelRepository;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.ModelRepositories;
import dev.modelkeeper.onnx.ModelRepository;
import dev.modelkeeper.onnx.OnnxRuntimeState;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.demo.DemoRepository;
import dev.modelkeeper.onnx.remote.ArtifactDownloadException;
import dev.modelkeeper.python.PythonBackend;
import dev.modelkeeper.server.ModelKeeperServer;
import dev.modelkeeper.server.config.InvalidConfigException;
import dev.modelkeeper.server.config.ServerConfig;
import dev.modelkeeper.server.memory.MemoryGuard;
import dev.modelkeeper.server.observability.Tracing;
import dev.modelkeeper.server.request.RequestTracer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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

  @Mixin ServeOptions.NetworkOptions network;
  @Mixin ServeOptions.SecurityOptions security;
  @Mixin ServeOptions.BudgetOptions budgets;
  @Mixin ServeOptions.TimeoutOptions timeouts;
  @Mixin ServeOptions.SchedulingOptions scheduling;
  @Mixin ServeOptions.LoadingOptions loading;

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
  Path cacheDir;

  @Option(
      names = "--python",
      paramLabel = "INTERPRETER",
      description =
          "The Python interpreter of models with backend \"python\" (model.py); it needs"
              + " numpy (default: python3 on the PATH, or $MODELKEEPER_PYTHON).")
  String python;

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
  Logging.Format logFormat;

  /** The tracing SDK, when the OTEL_* variables ask for tracing; closed after the server. */
  private OpenTelemetrySdk tracing;

  private OpenTelemetrySdk tracing() {
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
    Logging.configure(logFormat);
    if (python != null) {
      System.setProperty(PythonBackend.PYTHON_PROPERTY, python);
    }
    Opened opened = openRepository();
    ServerConfig config = config(opened.repository());
    List<RepositoryEntry> models;
    String unreadable = null;
    try {
      models = opened.repository().list();
    } catch (ArtifactDownloadException e) {
      // a remote store that cannot be read now: the server starts and keeps trying (its models
      // answer 503 with the reason until it can be read)
      models = List.of();
      unreadable = e.getMessage();
    } catch (RuntimeException e) {
      throw invalid("repository", "cannot list " + opened.label() + ": " + e.getMessage(), e);
    }
    // start the inference runtime now: first started by a request in flight during a JVM
    // shutdown, it cannot register its own shutdown hook and that request fails
    OnnxRuntimeState.environment();
    try {
      ModelKeeperServer server = ModelKeeperServer.start(config);
      printSummary(server, opened.label(), models, unreadable);
      return server;
    } catch (InvalidConfigException e) {
      throw invalid(e.setting(), e.reason(), e);
    }
  }

  /** A repository and how the summary names it. */
  private record Opened(ModelRepository repository, String label) {}

  private Opened openRepository() {
    if (repository == null) {
      try {
        ModelRepository demo =
            new LocalModelRepository(
                DemoRepository.materialize(cacheDir.resolve("demo-repository")));
        return new Opened(demo, demo.location() + " (the bundled demo repository)");
      } catch (UncheckedIOException e) {
        throw invalid("cache-dir", e.getMessage(), e);
      }
    }
    try {
      ModelRepository opened = ModelRepositories.open(repository, cacheDir.resolve("artifacts"));
      return new Opened(opened, opened.location());
    } catch (IllegalArgumentException e) {
      throw invalid("repository", e.getMessage(), e);
    }
  }

  private ServerConfig config(ModelRepository repository) {
    try {
      return new ServerConfig(
          repository,
          null,
          network.value(),
          security.value(),
          budgets.value(cacheDir.resolve("memory-costs.json")),
          timeouts.value(),
          scheduling.value(),
          ServeOptions.trimmed(preload),
          ServeOptions.trimmed(pin),
          tracing() != null ? Tracing.to(tracing()) : RequestTracer.OFF,
          loading.value(cacheDir.resolve("optimized")));
    } catch (InvalidConfigException e) {
      throw invalid(e.setting(), e.reason(), e);
    }
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
    if (server.metricsPort() != ServerConfig.METRICS_OFF) {
      String url = server.url();
      out.println(
          "  metrics:     "
              + url.substring(0, url.lastIndexOf(':') + 1)
              + server.metricsPort()
              + "/metrics");
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
            + c.budgets().maxModels()
            + " models, "
            + Sizes.format(server.modelBytes())
            + " of model memory"
            + (c.budgets().maxBytes() > 0
                ? " (--max-bytes " + Sizes.format(c.budgets().maxBytes()) + ")"
                : "")
            + "; costs measured and kept in "
            + server.memoryCosts().file().map(Object::toString).orElse("memory only"));
    out.println(
        "  forms:       "
            + c.loading()
                .optimizedModelsDir()
                .map(dir -> "pre-optimized model forms kept in " + dir)
                .orElse("off (--pre-optimize false): every model loads from its file"));
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
    // models whose configuration names what is not served, apart from broken ones
    Map<ModelId, String> unsupported = new HashMap<>();
    broken.forEach(
        (id, why) -> {
          if (!why.startsWith("bad ")) {
            unsupported.put(id, why);
          }
        });
    broken = new HashMap<>(broken);
    broken.keySet().removeAll(unsupported.keySet());
    if (!unsupported.isEmpty()) {
      out.println(
          "  not served:  "
              + unsupported.keySet().stream()
                  .map(ModelId::toString)
                  .sorted()
                  .collect(Collectors.joining(", "))
              + " (listed as UNAVAILABLE: they need what ModelKeeper does not serve; see the"
              + " warnings above)");
    }
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
            + (c.security().authToken() != null
                ? "bearer token required on /model/* and /v2/repository/*; loads may carry"
                    + " model files (file: parameters)"
                : "off; loads carrying model files (file: parameters) are refused until"
                    + " --auth-token is set"));
    if (c.security().authToken() == null && !loopback(c.network().host())) {
      out.println(
          "  WARNING:     listening on "
              + c.network().host()
              + " beyond loopback without --auth-token: anyone who reaches the port can load,"
              + " unload and reconfigure models");
    }
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
            + Sizes.format(c.budgets().maxRequestBytes())
            + " per body, "
            + Sizes.format(c.budgets().inflightBytes())
            + " in flight");
    out.println("  status page: " + server.url() + "/");
    out.println("  API docs:    " + server.url() + "/v2/docs");
    out.println("  try:         curl " + server.url() + "/v2/health/ready");
    out.flush();
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

  /** Whether {@code host} is a loopback address (or a name that resolves only to one). */
  private static boolean loopback(String host) {
    try {
      for (InetAddress a : InetAddress.getAllByName(host)) {
        if (!a.isLoopbackAddress()) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
