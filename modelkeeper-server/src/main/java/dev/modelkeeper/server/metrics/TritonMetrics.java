package dev.modelkeeper.server.metrics;

import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.statistics.ModelStats;
import dev.modelkeeper.server.statistics.Timing;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.function.ToLongFunction;

/**
 * Triton's metrics in Prometheus text: per model version ({@code model} and {@code version} labels)
 * the {@code nv_inference_*} counters read from the engine's statistics, and the machine's {@code
 * nv_cpu_utilization}, {@code nv_cpu_memory_total_bytes} and {@code nv_cpu_memory_used_bytes},
 * under Triton's names, so dashboards and tools made for Triton read them unchanged. Thread-safe.
 */
public final class TritonMetrics {

  private final Engine engine;
  private final HostReadings host;

  public TritonMetrics(Engine engine) {
    this(engine, new HostReadings());
  }

  TritonMetrics(Engine engine, HostReadings host) {
    this.engine = engine;
    this.host = host;
  }

  /** The metrics as Prometheus text (format 0.0.4), one family after another. */
  public String text() {
    List<Engine.VersionStats> models = engine.statistics(null, null);
    StringBuilder out = new StringBuilder(4096);
    counter(
        out,
        models,
        "nv_inference_request_success",
        "Successful inference requests",
        s -> s.success().count());
    counter(
        out,
        models,
        "nv_inference_request_failure",
        "Failed inference requests",
        s -> s.fail().count());
    counter(
        out,
        models,
        "nv_inference_count",
        "Inferences performed (the rows of every run)",
        ModelStats::inferenceCount);
    counter(
        out,
        models,
        "nv_inference_exec_count",
        "Model runs, a batch counting once",
        ModelStats::executionCount);
    counter(
        out,
        models,
        "nv_inference_request_duration_us",
        "Time from queueing to answer of every request, in microseconds",
        s -> micros(s.success()) + micros(s.fail()));
    counter(
        out,
        models,
        "nv_inference_queue_duration_us",
        "Time requests waited in the queue, in microseconds",
        s -> micros(s.queue()));
    counter(
        out,
        models,
        "nv_inference_compute_input_duration_us",
        "Time preparing inputs for the runtime, in microseconds",
        s -> micros(s.computeInput()));
    counter(
        out,
        models,
        "nv_inference_compute_infer_duration_us",
        "Time the model ran, in microseconds",
        s -> micros(s.computeInfer()));
    counter(
        out,
        models,
        "nv_inference_compute_output_duration_us",
        "Time reading outputs back from the runtime, in microseconds",
        s -> micros(s.computeOutput()));
    out.append("# HELP nv_inference_pending_request_count Requests waiting in the model's queue\n");
    out.append("# TYPE nv_inference_pending_request_count gauge\n");
    for (Engine.VersionStats v : models) {
      labelled(out, "nv_inference_pending_request_count", v)
          .append(v.stats().queued())
          .append('\n');
    }
    OptionalDouble cpu = host.cpuUtilization();
    if (cpu.isPresent()) {
      gauge(
          out,
          "nv_cpu_utilization",
          "The machine's CPU use since the previous reading, from 0 to 1",
          String.format(Locale.ROOT, "%.6f", cpu.getAsDouble()));
    }
    OptionalLong total = host.memoryTotalBytes();
    if (total.isPresent()) {
      gauge(
          out,
          "nv_cpu_memory_total_bytes",
          "The machine's memory, in bytes",
          Long.toString(total.getAsLong()));
    }
    OptionalLong used = host.memoryUsedBytes();
    if (used.isPresent()) {
      gauge(
          out,
          "nv_cpu_memory_used_bytes",
          "The machine's memory in use (all but what is available), in bytes",
          Long.toString(used.getAsLong()));
    }
    return out.toString();
  }

  private static long micros(Timing t) {
    return t.ns() / 1_000;
  }

  private static void counter(
      StringBuilder out,
      List<Engine.VersionStats> models,
      String name,
      String help,
      ToLongFunction<ModelStats> value) {
    out.append("# HELP ").append(name).append(' ').append(help).append('\n');
    out.append("# TYPE ").append(name).append(" counter\n");
    for (Engine.VersionStats v : models) {
      labelled(out, name, v).append(value.applyAsLong(v.stats())).append('\n');
    }
  }

  /** Appends the sample's name and labels, and the space before its value. */
  private static StringBuilder labelled(StringBuilder out, String name, Engine.VersionStats v) {
    return out.append(name)
        .append("{model=\"")
        .append(escape(v.name()))
        .append("\",version=\"")
        .append(escape(v.version()))
        .append("\"} ");
  }

  private static void gauge(StringBuilder out, String name, String help, String value) {
    out.append("# HELP ").append(name).append(' ').append(help).append('\n');
    out.append("# TYPE ").append(name).append(" gauge\n");
    out.append(name).append(' ').append(value).append('\n');
  }

  /** A label value as Prometheus text writes it. */
  static String escape(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
