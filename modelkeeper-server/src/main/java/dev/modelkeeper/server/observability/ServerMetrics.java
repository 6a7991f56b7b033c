package dev.modelkeeper.server.observability;

import dev.modelkeeper.core.LifecycleListener;
import dev.modelkeeper.core.ManagerStats;
import dev.modelkeeper.core.Model;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.server.admission.DirectBuffers;
import dev.modelkeeper.server.admission.InflightBytes;
import dev.modelkeeper.server.execution.ExecutionListener;
import dev.modelkeeper.server.memory.MemoryGuard;
import dev.modelkeeper.server.memory.ModelMemory;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.ToDoubleFunction;

/**
 * The server's Prometheus metrics: manager counters and gauges read from one {@link ManagerStats}
 * snapshot per scrape, a load-time histogram fed by lifecycle events, request counts by route and
 * status, and inference time per model. Thread-safe; {@link #loaded} runs on loading threads.
 *
 * <table>
 *   <caption>metrics</caption>
 *   <tr><td>modelkeeper_model_loads_total, modelkeeper_model_load_failures_total,
 *       modelkeeper_model_removals_total, modelkeeper_model_evictions_total{reason},
 *       modelkeeper_lease_waits_total, modelkeeper_capacity_waits_total,
 *       modelkeeper_capacity_rejections_total</td><td>counters from the manager</td></tr>
 *   <tr><td>modelkeeper_resident_models, modelkeeper_resident_bytes,
 *       modelkeeper_active_leases</td><td>gauges from the manager</td></tr>
 *   <tr><td>modelkeeper_model_load_seconds</td><td>histogram of constructor time</td></tr>
 *   <tr><td>modelkeeper_http_requests_total{method,route,status},
 *       modelkeeper_http_request_seconds{method,route}</td><td>every request</td></tr>
 *   <tr><td>modelkeeper_grpc_requests_total{method,code},
 *       modelkeeper_grpc_request_seconds{method}</td><td>every gRPC call</td></tr>
 *   <tr><td>modelkeeper_inference_seconds{model}</td><td>histogram of model run time (one
 *       batched run counts once)</td></tr>
 *   <tr><td>modelkeeper_batch_size{model}</td><td>histogram of rows per model run</td></tr>
 *   <tr><td>modelkeeper_queue_delay_seconds{model}</td><td>histogram of the time requests
 *       waited in their model's queue</td></tr>
 *   <tr><td>modelkeeper_queue_depth{model}</td><td>requests queued for the model now</td></tr>
 *   <tr><td>modelkeeper_queue_rejections_total{model}</td><td>requests refused (503) because
 *       the model's queue was full</td></tr>
 *   <tr><td>modelkeeper_inflight_request_bytes, modelkeeper_inflight_request_capacity_bytes</td>
 *       <td>gauges of the in-flight request budget</td></tr>
 *   <tr><td>modelkeeper_offheap_request_bytes, modelkeeper_offheap_request_idle_bytes</td>
 *       <td>off-heap memory of large request bodies and gRPC messages: in use, kept for reuse</td></tr>
 *   <tr><td>modelkeeper_admission_waits_total, modelkeeper_admission_rejections_total</td>
 *       <td>requests that waited for, or were refused, room in that budget</td></tr>
 *   <tr><td>modelkeeper_process_resident_bytes, modelkeeper_memory_cap_bytes,
 *       modelkeeper_memory_headroom_bytes, modelkeeper_memory_jvm_bytes,
 *       modelkeeper_memory_models_bytes, modelkeeper_memory_working_bytes,
 *       modelkeeper_memory_unaccounted_bytes</td><td>process memory against its cap</td></tr>
 *   <tr><td>modelkeeper_memory_waits, modelkeeper_memory_wait_longest_seconds</td><td>loads and
 *       runs waiting for room in the budget now, and the longest such wait so far</td></tr>
 *   <tr><td>modelkeeper_model_charged_bytes{model}, modelkeeper_model_measured_bytes{model}</td>
 *       <td>per resident model: what the budget charges, what was measured</td></tr>
 *   <tr><td>modelkeeper_slow_client_disconnects_total</td><td>bodies too slow: 408 and closed, or
 *       gRPC messages too slow: DEADLINE_EXCEEDED</td></tr>
 * </table>
 */
public final class ServerMetrics implements LifecycleListener, ExecutionListener.Factory {

  private static final Duration[] LOAD_BUCKETS = {
    Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
    Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
    Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
    Duration.ofSeconds(60)
  };
  private static final Duration[] INFERENCE_BUCKETS = {
    Duration.ofNanos(250_000),
    Duration.ofNanos(500_000),
    Duration.ofMillis(1),
    Duration.ofMillis(2),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofSeconds(5)
  };

  private static final double[] BATCH_BUCKETS = {1, 2, 4, 8, 16, 32, 64, 128, 256};

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final ModelManager manager;
  private final AtomicReference<ManagerStats> stats;
  private final Timer loadTime;
  private final Map<String, Timer> inferenceTimers = new ConcurrentHashMap<>();

  /** Each model executor's queue wait and queue depth, as registered: read back by type. */
  private final Map<String, Timer> queueDelays = new ConcurrentHashMap<>();

  private final Map<String, IntSupplier> queueDepths = new ConcurrentHashMap<>();

  /** Inference requests answered, REST and gRPC, any outcome. */
  private final LongAdder answered = new LongAdder();

  private final Map<String, Counter> requestCounters = new ConcurrentHashMap<>();
  private final Counter slowClients;
  private final Map<String, Timer> requestTimers = new ConcurrentHashMap<>();
  private final Map<String, AtomicReferenceArray<Counter>> grpcCounters = new ConcurrentHashMap<>();
  private final Map<String, Timer> grpcTimers = new ConcurrentHashMap<>();

  private volatile MultiGauge chargedBytes;
  private volatile MultiGauge measuredBytes;
  private volatile ModelMemory models;

  public ServerMetrics(ModelManager manager) {
    this.manager = manager;
    this.stats = new AtomicReference<>(manager.stats());
    counter("modelkeeper.model.loads", "models constructed", ManagerStats::loads);
    counter("modelkeeper.model.load.failures", "loads that failed", ManagerStats::loadFailures);
    counter("modelkeeper.model.removals", "models removed on request", ManagerStats::removals);
    counter(
        "modelkeeper.lease.waits",
        "leases that waited for a load or unload",
        ManagerStats::leaseWaits);
    counter(
        "modelkeeper.capacity.waits",
        "loads that waited for room in the budget",
        ManagerStats::capacityWaits);
    counter(
        "modelkeeper.capacity.rejections",
        "loads refused for lack of room",
        ManagerStats::capacityRejections);
    for (RemovalCause cause : RemovalCause.values()) {
      if (cause.isEviction()) {
        FunctionCounter.builder(
                "modelkeeper.model.evictions",
                stats,
                s -> s.get().evictions().getOrDefault(cause, 0L))
            .description("models evicted to make room")
            .tag("reason", cause.name().toLowerCase(Locale.ROOT))
            .register(registry);
      }
    }
    gauge("modelkeeper.resident.models", "models resident now", s -> s.residentModels());
    gauge("modelkeeper.resident.bytes", "bytes of resident models now", s -> s.residentBytes());
    gauge("modelkeeper.active.leases", "leases open now", s -> s.activeLeases());
    this.slowClients =
        Counter.builder("modelkeeper.slow.client.disconnects")
            .description(
                "REST connections and gRPC calls ended because their request arrived too slowly")
            .register(registry);
    this.loadTime =
        Timer.builder("modelkeeper.model.load")
            .description("time to construct a model")
            .serviceLevelObjectives(LOAD_BUCKETS)
            .register(registry);
  }

  private void counter(String name, String help, ToDoubleFunction<ManagerStats> f) {
    FunctionCounter.builder(name, stats, s -> f.applyAsDouble(s.get()))
        .description(help)
        .register(registry);
  }

  private void gauge(String name, String help, ToDoubleFunction<ManagerStats> f) {
    Gauge.builder(name, stats, s -> f.applyAsDouble(s.get())).description(help).register(registry);
  }

  private <T> void gauge(String name, T source, ToDoubleFunction<T> f, String help) {
    Gauge.builder(name, source, f).description(help).register(registry);
  }

  @Override
  public void loaded(String modelId, Model model, long sizeBytes, long loadNanos) {
    loadTime.record(loadNanos, TimeUnit.NANOSECONDS);
  }

  /** Publishes the in-flight request budget: bytes in use, capacity, waits and rejections. */
  public void watch(InflightBytes budget) {
    gauge(
        "modelkeeper.inflight.request.bytes",
        budget,
        InflightBytes::inUse,
        "bytes of request bodies and decoded tensors in flight now");
    gauge(
        "modelkeeper.inflight.request.capacity.bytes",
        budget,
        InflightBytes::capacity,
        "the in-flight request budget");
    FunctionCounter.builder("modelkeeper.admission.waits", budget, InflightBytes::waits)
        .description("requests that waited for room in the in-flight budget")
        .register(registry);
    FunctionCounter.builder("modelkeeper.admission.rejections", budget, InflightBytes::rejections)
        .description("requests refused for lack of room in the in-flight budget")
        .register(registry);
  }

  /** Publishes the off-heap memory of large request bodies and messages: in use and kept idle. */
  public void watch(DirectBuffers offHeap) {
    gauge(
        "modelkeeper.offheap.request.bytes",
        offHeap,
        DirectBuffers::inUseBytes,
        "off-heap bytes holding large request bodies and gRPC messages now");
    gauge(
        "modelkeeper.offheap.request.idle.bytes",
        offHeap,
        DirectBuffers::idleBytes,
        "off-heap bytes kept for reuse by the next large requests");
  }

  /**
   * Publishes process memory (RSS, cap, headroom, the JVM's part, what models and runs are charged)
   * and, per resident model, what the budget charges it and what it was measured to keep.
   */
  public void watch(MemoryGuard guard, WithFixedSizeCache budget, ModelMemory models) {
    gauge(
        "modelkeeper.process.resident.bytes",
        guard,
        MemoryGuard::residentBytes,
        "resident memory (RSS) of the process, sampled every 100 ms");
    gauge(
        "modelkeeper.memory.cap.bytes",
        guard,
        g -> g.cap().bytes(),
        "the cap on the process's resident memory (--max-memory)");
    gauge(
        "modelkeeper.memory.headroom.bytes",
        guard,
        g -> g.residentBytes() < 0 ? Double.NaN : g.cap().bytes() - g.residentBytes(),
        "the cap minus the process's resident memory");
    gauge(
        "modelkeeper.memory.jvm.bytes",
        guard,
        MemoryGuard::jvmBytes,
        "the part of the cap set aside for the JVM (heap and the rest)");
    gauge(
        "modelkeeper.memory.models.bytes",
        budget,
        WithFixedSizeCache::usedBytes,
        "what the budget charges resident and loading models");
    gauge(
        "modelkeeper.memory.working.bytes",
        budget,
        WithFixedSizeCache::workingBytes,
        "working memory reserved by runs in progress");
    gauge(
        "modelkeeper.memory.unaccounted.bytes",
        budget,
        WithFixedSizeCache::outsideBytes,
        "process memory above what is accounted for, set aside in the budget");
    gauge(
        "modelkeeper.memory.waits",
        budget,
        b -> b.waits().size(),
        "loads and runs waiting for room in the budget now");
    gauge(
        "modelkeeper.memory.wait.longest.seconds",
        budget,
        b -> b.waits().stream().mapToDouble(w -> w.waited().toNanos() / 1e9).max().orElse(0),
        "how long the longest wait for room in progress has waited");
    this.chargedBytes =
        MultiGauge.builder("modelkeeper.model.charged.bytes")
            .description("what the budget charges the model while it is resident")
            .register(registry);
    this.measuredBytes =
        MultiGauge.builder("modelkeeper.model.measured.bytes")
            .description("what the model was measured to keep while loaded")
            .register(registry);
    this.models = models;
  }

  /** Records one connection closed because its body arrived too slowly. */
  public void slowClient() {
    slowClients.increment();
  }

  /** Records one model run of {@code modelId}. */
  void inference(String modelId, long nanos) {
    inferenceTimers
        .computeIfAbsent(
            modelId,
            id ->
                Timer.builder("modelkeeper.inference")
                    .description("time a model spent running one request")
                    .tag("model", id)
                    .serviceLevelObjectives(INFERENCE_BUCKETS)
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * The metrics of one model's executor; {@code queueDepth} is read at each scrape. Called once per
   * model.
   */
  @Override
  public ExecutionListener forModel(String modelId, IntSupplier queueDepth) {
    Gauge.builder("modelkeeper.queue.depth", queueDepth, IntSupplierGauge::read)
        .description("requests queued for the model now")
        .tag("model", modelId)
        .strongReference(true)
        .register(registry);
    Counter rejections =
        Counter.builder("modelkeeper.queue.rejections")
            .description("requests refused because the model's queue was full")
            .tag("model", modelId)
            .register(registry);
    Timer queueDelay =
        Timer.builder("modelkeeper.queue.delay")
            .description("time a request waited in its model's queue")
            .tag("model", modelId)
            .serviceLevelObjectives(INFERENCE_BUCKETS)
            .register(registry);
    queueDelays.put(modelId, queueDelay);
    queueDepths.put(modelId, queueDepth);
    DistributionSummary batchSize =
        DistributionSummary.builder("modelkeeper.batch.size")
            .description("rows per model run")
            .tag("model", modelId)
            .serviceLevelObjectives(BATCH_BUCKETS)
            .register(registry);
    return new ExecutionListener() {
      @Override
      public void rejected() {
        rejections.increment();
      }

      @Override
      public void waited(long queueNanos) {
        queueDelay.record(queueNanos, TimeUnit.NANOSECONDS);
      }

      @Override
      public void ran(int requests, int rows, long runNanos) {
        batchSize.record(rows);
        inference(modelId, runNanos);
      }
    };
  }

  private static final class IntSupplierGauge {
    static double read(IntSupplier s) {
      return s.getAsInt();
    }
  }

  /** Records one answered request. */
  public void request(String method, String route, int status, long nanos) {
    String key = method + ' ' + route + ' ' + status;
    requestCounters
        .computeIfAbsent(
            key,
            k ->
                Counter.builder("modelkeeper.http.requests")
                    .description("requests answered, by route and status")
                    .tag("method", method)
                    .tag("route", route)
                    .tag("status", Integer.toString(status))
                    .register(registry))
        .increment();
    requestTimers
        .computeIfAbsent(
            method + ' ' + route,
            k ->
                Timer.builder("modelkeeper.http.request")
                    .description("time to answer a request, by route")
                    .tag("method", method)
                    .tag("route", route)
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /** gRPC's status codes are numbered 0 (OK) to 16 (UNAUTHENTICATED). */
  private static final int GRPC_CODES = 17;

  /**
   * Records one ended gRPC call of {@code method} (its bare name, e.g. ModelInfer) with status
   * {@code code} (its number) named {@code codeName}.
   */
  public void grpcCall(String method, int code, String codeName, long nanos) {
    AtomicReferenceArray<Counter> byCode =
        grpcCounters.computeIfAbsent(method, m -> new AtomicReferenceArray<>(GRPC_CODES));
    Counter counter = byCode.get(code);
    if (counter == null) { // a race registers the same counter twice: the registry returns one
      counter =
          Counter.builder("modelkeeper.grpc.requests")
              .description("gRPC calls ended, by method and status code")
              .tag("method", method)
              .tag("code", codeName)
              .register(registry);
      byCode.set(code, counter);
    }
    counter.increment();
    grpcTimers
        .computeIfAbsent(
            method,
            m ->
                Timer.builder("modelkeeper.grpc.request")
                    .description("time from a gRPC call's headers to its end, by method")
                    .tag("method", m)
                    .register(registry))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Counts since start of one distribution.
   *
   * @param boundsMillis the upper bounds of its buckets, ascending
   * @param cumulative per bound, how many recordings were at or below it
   */
  public record Histogram(long count, double[] boundsMillis, long[] cumulative) {
    static Histogram of(Timer timer) {
      CountAtBucket[] buckets = timer.takeSnapshot().histogramCounts();
      double[] bounds = new double[buckets.length];
      long[] counts = new long[buckets.length];
      for (int i = 0; i < buckets.length; i++) {
        bounds[i] = buckets[i].bucket(TimeUnit.MILLISECONDS);
        counts[i] = (long) buckets[i].count();
      }
      return new Histogram(timer.count(), bounds, counts);
    }

    static final Histogram EMPTY = new Histogram(0, new double[0], new long[0]);
  }

  /** One model's totals: its runs, its requests' queue waits, and its queue now. */
  public record ModelTotals(Histogram runs, Histogram queueWaits, int queueDepth) {}

  /**
   * Totals since start, read from the meters each model's executor registered and from the count of
   * answered requests (one counter increment per request).
   *
   * @param inferRequests inference requests answered, REST and gRPC, any status
   * @param models by model identifier, every model that has run or has a queue
   */
  public record Activity(long inferRequests, Map<String, ModelTotals> models) {}

  /** The totals now. */
  Activity activity() {
    Map<String, ModelTotals> models = new HashMap<>();
    queueDepths.forEach(
        (id, depth) ->
            models.put(
                id,
                new ModelTotals(
                    histogram(inferenceTimers.get(id)),
                    histogram(queueDelays.get(id)),
                    depth.getAsInt())));
    inferenceTimers.forEach(
        (id, t) -> models.putIfAbsent(id, new ModelTotals(Histogram.of(t), Histogram.EMPTY, 0)));
    return new Activity(answered.sum(), models);
  }

  private static Histogram histogram(Timer t) {
    return t == null ? Histogram.EMPTY : Histogram.of(t);
  }

  @Override
  public void answered() {
    answered.increment();
  }

  /** The Prometheus text exposition of every metric, with the manager read once. */
  public String scrape() {
    stats.set(manager.stats());
    if (models != null) {
      List<MultiGauge.Row<?>> charged = new ArrayList<>();
      List<MultiGauge.Row<?>> measured = new ArrayList<>();
      for (ModelDescription d : manager.describeModels()) {
        Tags tags = Tags.of("model", d.modelId());
        charged.add(MultiGauge.Row.of(tags, Math.max(0, d.sizeBytes())));
        models
            .measured(d.modelId())
            .ifPresent(c -> measured.add(MultiGauge.Row.of(tags, c.idleBytes())));
      }
      chargedBytes.register(charged, true);
      measuredBytes.register(measured, true);
    }
    return registry.scrape();
  }

  public void close() {
    registry.close();
  }
}
