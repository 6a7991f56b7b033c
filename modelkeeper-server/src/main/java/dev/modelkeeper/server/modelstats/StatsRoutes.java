package dev.modelkeeper.server.modelstats;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.RequestRunner;
import dev.modelkeeper.server.http.Routes;
import dev.modelkeeper.server.statistics.BatchStats;
import dev.modelkeeper.server.statistics.ModelStats;
import dev.modelkeeper.server.statistics.Timing;
import io.javalin.http.Context;

/**
 * The statistics extension of Triton's protocol over REST: per model version, the requests that
 * succeeded and failed, their time queued and in each phase of their runs, and the runs per batch
 * size, in Triton's field names ({@code model_stats}, {@code inference_stats}, {@code batch_stats},
 * durations as {@code {"count", "ns"}}). Thread-safe; answers run on the {@link RequestRunner}
 * (listing the repository may block).
 */
public final class StatsRoutes {

  private final Engine engine;
  private final Json json;
  private final RequestRunner runner;

  public StatsRoutes(Engine engine, Json json, RequestRunner runner) {
    this.engine = engine;
    this.json = json;
    this.runner = runner;
  }

  /** Registers the routes; before {@code GET /v2/models/{model}}, which would take "stats". */
  public void register(Routes routes) {
    routes.get("/v2/models/stats", ctx -> stats(ctx, null, null));
    routes.get("/v2/models/{model}/stats", ctx -> stats(ctx, ctx.pathParam("model"), null));
    routes.get(
        "/v2/models/{model}/versions/{version}/stats",
        ctx -> stats(ctx, ctx.pathParam("model"), ctx.pathParam("version")));
  }

  private void stats(Context ctx, String name, String version) {
    runner.submit(
        ctx,
        () -> {
          ObjectNode body = json.object();
          ArrayNode models = body.putArray("model_stats");
          for (Engine.VersionStats v : engine.statistics(name, version)) {
            write(models.addObject(), v);
          }
          return HttpResult.json(200, json.write(body));
        });
  }

  private static void write(ObjectNode out, Engine.VersionStats v) {
    ModelStats s = v.stats();
    out.put("name", v.name());
    out.put("version", v.version());
    out.put("last_inference", s.lastInferenceMillis());
    out.put("inference_count", s.inferenceCount());
    out.put("execution_count", s.executionCount());
    ObjectNode inference = out.putObject("inference_stats");
    put(inference, "success", s.success());
    put(inference, "fail", s.fail());
    put(inference, "queue", s.queue());
    put(inference, "compute_input", s.computeInput());
    put(inference, "compute_infer", s.computeInfer());
    put(inference, "compute_output", s.computeOutput());
    put(inference, "cache_hit", Timing.NONE);
    put(inference, "cache_miss", Timing.NONE);
    out.putObject("response_stats");
    ArrayNode batches = out.putArray("batch_stats");
    for (BatchStats b : s.batches()) {
      ObjectNode batch = batches.addObject();
      batch.put("batch_size", b.batchSize());
      put(batch, "compute_input", b.computeInput());
      put(batch, "compute_infer", b.computeInfer());
      put(batch, "compute_output", b.computeOutput());
    }
    out.putArray("memory_usage");
  }

  private static void put(ObjectNode parent, String name, Timing t) {
    ObjectNode d = parent.putObject(name);
    d.put("count", t.count());
    d.put("ns", t.ns());
  }
}
