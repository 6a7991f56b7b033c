package dev.modelkeeper.cli;

import dev.modelkeeper.server.config.Budgets;
import dev.modelkeeper.server.config.Network;
import dev.modelkeeper.server.config.Scheduling;
import dev.modelkeeper.server.config.Security;
import dev.modelkeeper.server.config.Timeouts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The options of {@code modelkeeper serve}, one mixin a settings group, each starting at the
 * group's defaults and read back as its record. Not thread-safe: picocli fills one instance per
 * command line.
 */
final class ServeOptions {

  private ServeOptions() {}

  /** The {@link Network} options. */
  static final class NetworkOptions {
    @Option(
        names = "--host",
        paramLabel = "ADDRESS",
        description =
            "Interface to listen on, this machine only by default; 0.0.0.0 listens on"
                + " every interface, e.g. in a container (default: ${DEFAULT-VALUE}).")
    String host = Network.DEFAULTS.host();

    @Option(
        names = "--port",
        paramLabel = "PORT",
        description = "Port to listen on; 0 picks any free port (default: ${DEFAULT-VALUE}).")
    int port = Network.DEFAULTS.port();

    @Option(
        names = "--grpc-port",
        paramLabel = "PORT",
        description =
            "gRPC port (Open Inference Protocol); 0 picks any free port, -1 turns gRPC"
                + " off (default: ${DEFAULT-VALUE}).")
    int grpcPort = Network.DEFAULTS.grpcPort();

    @Option(
        names = "--metrics-port",
        paramLabel = "PORT",
        description =
            "Port of /metrics in Prometheus text, Triton's nv_* metrics with ModelKeeper's own;"
                + " 0 picks any free port, -1 turns it off (default: ${DEFAULT-VALUE}).")
    int metricsPort = Network.DEFAULTS.metricsPort();

    @Option(
        names = "--max-connections",
        paramLabel = "N",
        description =
            "Most connections open at once, REST and gRPC each; more wait to be accepted"
                + " (default: ${DEFAULT-VALUE}).")
    int maxConnections = Network.DEFAULTS.maxConnections();

    Network value() {
      return new Network(host.trim(), port, grpcPort, metricsPort, maxConnections);
    }
  }

  /** The {@link Security} options. */
  static final class SecurityOptions {
    @Option(
        names = "--auth-token",
        paramLabel = "TOKEN",
        description =
            "Require 'Authorization: Bearer TOKEN' on management endpoints (/model/*,"
                + " /v2/repository/*); off when not given.")
    String authToken = Security.DEFAULTS.authToken();

    @Option(
        names = "--allowed-origins",
        split = ",",
        paramLabel = "ORIGIN",
        description =
            "Web origins whose pages may send state-changing requests, e.g."
                + " https://app.example.com; * allows any. Others carrying an Origin header get"
                + " 403 (default: none).")
    List<String> allowedOrigins = new ArrayList<>(Security.DEFAULTS.allowedOrigins());

    Security value() {
      return new Security(authToken, trimmed(allowedOrigins));
    }
  }

  /** The {@link Budgets} options. */
  static final class BudgetOptions {
    @Option(
        names = "--max-models",
        paramLabel = "N",
        description = "Most models resident at once (default: ${DEFAULT-VALUE}).")
    int maxModels = Budgets.DEFAULTS.maxModels();

    @Option(
        names = "--max-bytes",
        paramLabel = "SIZE",
        converter = Converters.Size.class,
        description =
            "Most bytes of models resident at once, e.g. 512MB or 4GiB; 0 means no byte"
                + " budget (default: ${DEFAULT-VALUE}).")
    long maxBytes = Budgets.DEFAULTS.maxBytes();

    @Option(
        names = "--max-memory",
        paramLabel = "SIZE",
        converter = Converters.Size.class,
        description =
            "Cap on the whole process's resident memory, Java heap included, e.g. 768MiB or"
                + " 4GiB; models are charged their measured cost against it. 0 means 80%% of the"
                + " container's memory limit, else of the machine's memory"
                + " (default: ${DEFAULT-VALUE}).")
    long maxMemory = Budgets.DEFAULTS.maxMemory();

    @Option(
        names = "--max-request-bytes",
        paramLabel = "SIZE",
        converter = Converters.Size.class,
        description = "Largest request body accepted (default: ${DEFAULT-VALUE}).")
    long maxRequestBytes = Budgets.DEFAULTS.maxRequestBytes();

    @Option(
        names = "--max-inflight-bytes",
        paramLabel = "SIZE",
        converter = Converters.Size.class,
        description =
            "Most bytes of request bodies and decoded tensors in memory at once; a request"
                + " that does not fit waits up to --admission-timeout, then gets 503. 0 means a"
                + " quarter of the maximum heap (default: ${DEFAULT-VALUE}).")
    long maxInflightBytes = Budgets.DEFAULTS.maxInflightBytes();

    /** The budgets, measured memory costs kept in {@code costsFile}. */
    Budgets value(Path costsFile) {
      return new Budgets(
          maxModels, maxBytes, maxMemory, costsFile, maxRequestBytes, maxInflightBytes);
    }
  }

  /** The {@link Timeouts} options. */
  static final class TimeoutOptions {
    @Option(
        names = "--lifecycle-timeout",
        paramLabel = "DURATION",
        description =
            "How long a request waits for another load or unload of the same model"
                + " (default: ${DEFAULT-VALUE}).")
    Duration lifecycle = Timeouts.DEFAULTS.lifecycle();

    @Option(
        names = "--capacity-timeout",
        paramLabel = "DURATION",
        description =
            "How long a load waits for room when every resident model is busy"
                + " (default: ${DEFAULT-VALUE}).")
    Duration capacity = Timeouts.DEFAULTS.capacity();

    @Option(
        names = "--idle-timeout",
        paramLabel = "DURATION",
        description =
            "Unload a model nobody used for this long (never one in use or pinned);"
                + " 0 means never (default: ${DEFAULT-VALUE}).")
    Duration idle = Timeouts.DEFAULTS.idle();

    @Option(
        names = "--drain-timeout",
        paramLabel = "DURATION",
        description =
            "How long an unload waits for running inferences (default: ${DEFAULT-VALUE}).")
    Duration drain = Timeouts.DEFAULTS.drain();

    @Option(
        names = "--request-timeout",
        paramLabel = "DURATION",
        description =
            "Longest a request may take before it is answered 503 (default: ${DEFAULT-VALUE}).")
    Duration request = Timeouts.DEFAULTS.request();

    @Option(
        names = "--shutdown-timeout",
        paramLabel = "DURATION",
        description =
            "How long shutdown lets in-flight requests finish (default: ${DEFAULT-VALUE}).")
    Duration shutdown = Timeouts.DEFAULTS.shutdown();

    @Option(
        names = "--admission-timeout",
        paramLabel = "DURATION",
        description =
            "How long a request waits for room in --max-inflight-bytes"
                + " (default: ${DEFAULT-VALUE}).")
    Duration admission = Timeouts.DEFAULTS.admission();

    @Option(
        names = "--body-read-timeout",
        paramLabel = "DURATION",
        description =
            "How long a client has to send a request body or gRPC message (and a new connection"
                + " its first headers or HTTP/2 preface); slower ones get 408 and are closed, or"
                + " DEADLINE_EXCEEDED (default: ${DEFAULT-VALUE}).")
    Duration bodyRead = Timeouts.DEFAULTS.bodyRead();

    Timeouts value() {
      return new Timeouts(
          lifecycle,
          drain,
          capacity,
          idle,
          Timeouts.DEFAULTS.loadFailureBackoff(),
          request,
          shutdown,
          admission,
          bodyRead);
    }
  }

  /** The {@link Scheduling} options. */
  static final class SchedulingOptions {
    @Option(
        names = "--worker-threads",
        paramLabel = "N",
        description =
            "Threads for requests that may wait for a load or an unload; at most half"
                + " this many inferences run their model at once on the thread that received"
                + " them (default: ${DEFAULT-VALUE}).")
    int workerThreads = Scheduling.DEFAULTS.workerThreads();

    @Option(
        names = "--max-batch-size",
        paramLabel = "ROWS",
        description =
            "Most rows one batched model run concatenates, for models whose config sets no"
                + " max_batch_size; 1 runs every request alone (default: ${DEFAULT-VALUE}).")
    int maxBatchSize = Scheduling.DEFAULTS.maxBatchSize();

    @Option(
        names = "--max-queue-delay",
        paramLabel = "DURATION",
        description =
            "How long a queued request waits for more rows before a partial batch runs,"
                + " for models whose config sets no max_queue_delay (default: ${DEFAULT-VALUE}).")
    Duration maxQueueDelay = Scheduling.DEFAULTS.maxQueueDelay();

    @Option(
        names = "--max-concurrency",
        paramLabel = "N",
        description =
            "Most runs of one model at once, for models whose config sets no"
                + " max_concurrency (default: ${DEFAULT-VALUE}).")
    int maxConcurrency = Scheduling.DEFAULTS.maxConcurrency();

    @Option(
        names = "--max-queue-size",
        paramLabel = "N",
        description =
            "Most requests queued for one model; more are answered 503"
                + " (default: ${DEFAULT-VALUE}).")
    int maxQueueSize = Scheduling.DEFAULTS.maxQueueSize();

    Scheduling value() {
      return new Scheduling(
          workerThreads, maxBatchSize, maxQueueDelay, maxConcurrency, maxQueueSize);
    }
  }

  /** Model ids as given, blanks left out and each trimmed. */
  static List<String> trimmed(List<String> ids) {
    List<String> out = new ArrayList<>();
    for (String id : ids) {
      if (!id.isBlank()) {
        out.add(id.trim());
      }
    }
    return out;
  }
}
