package dev.modelkeeper.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelState;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.Tensor;
import io.javalin.http.Context;
import java.util.List;
import java.util.Map;

/**
 * The Open Inference Protocol REST endpoints: health, server and model metadata, model readiness
 * and inference. Thread-safe; handlers run on HTTP threads, and everything that may load or run a
 * model runs through the {@link RequestRunner}.
 *
 * <p>Inference always holds a lease from {@link ModelManager#acquire}: the model is loaded on
 * demand, cannot be evicted or cleared while it runs, and is released right after it returns, before
 * the response is encoded.
 */
final class OipRoutes {

  static final String SERVER_NAME = "modelkeeper";

  private final ModelManager manager;
  private final ModelResolver resolver;
  private final ModelEvents events;
  private final ServerMetrics metrics;
  private final TensorCodec codec;
  private final InferResponses responses;
  private final Json json;
  private final RequestRunner runner;
  private final ModelExecutors executors;
  private final ServerState state;

  OipRoutes(
      ModelManager manager,
      ModelResolver resolver,
      ModelEvents events,
      ServerMetrics metrics,
      TensorCodec codec,
      Json json,
      RequestRunner runner,
      ModelExecutors executors,
      ServerState state) {
    this.manager = manager;
    this.resolver = resolver;
    this.events = events;
    this.metrics = metrics;
    this.codec = codec;
    this.responses = new InferResponses(json);
    this.json = json;
    this.runner = runner;
    this.executors = executors;
    this.state = state;
  }

  void register(Routes routes) {
    routes.get("/v2/health/live", this::live);
    routes.get("/v2/health/ready", this::ready);
    routes.get("/v2", this::serverMetadata);
    routes.get("/v2/models/{model}", ctx -> metadata(ctx, null));
    routes.get("/v2/models/{model}/versions/{version}", ctx -> metadata(ctx, ctx.pathParam("version")));
    routes.get("/v2/models/{model}/ready", ctx -> modelReady(ctx, null));
    routes.get(
        "/v2/models/{model}/versions/{version}/ready",
        ctx -> modelReady(ctx, ctx.pathParam("version")));
    routes.post("/v2/models/{model}/infer", ctx -> infer(ctx, null));
    routes.post(
        "/v2/models/{model}/versions/{version}/infer", ctx -> infer(ctx, ctx.pathParam("version")));
  }

  private void live(Context ctx) {
    ObjectNode body = json.object();
    body.put("live", true);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  private void ready(Context ctx) {
    switch (state.phase()) {
      case READY:
        ObjectNode body = json.object();
        body.put("ready", true);
        HttpResult.json(200, json.write(body)).writeTo(ctx);
        return;
      case STARTING:
        throw new NotReadyException("the server is starting: preloading models");
      default:
        throw new NotReadyException("the server is shutting down");
    }
  }

  private void serverMetadata(Context ctx) {
    ObjectNode body = json.object();
    body.put("name", SERVER_NAME);
    body.put("version", ServerVersion.get());
    body.putArray("extensions").add("model_repository");
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  private void metadata(Context ctx, String version) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx,
        () -> {
          ModelTarget t = resolver.resolveKnown(name, version);
          ModelMetadata md = events.metadata(t.key());
          if (md == null) {
            try (ModelLease lease = manager.acquire(t.modelId(), null, t.alias())) {
              md = inferenceModel(lease).metadata();
            }
          }
          List<String> versions =
              version != null || t.alias() != null ? List.of(t.version()) : resolver.versions(name);
          return HttpResult.json(200, responses.metadata(name, versions, md));
        });
  }

  private void modelReady(Context ctx, String version) {
    ModelTarget t = resolver.resolveKnown(ctx.pathParam("model"), version);
    ModelState s = null;
    for (ModelDescription d : manager.describeModels()) {
      if (d.modelId().equals(t.key())) {
        s = d.state();
      }
    }
    if (s != ModelState.READY) {
      throw new NotReadyException(
          "model '"
              + t.key()
              + "' is not ready ("
              + (s == null ? events.reason(t.key()) : s.name())
              + ")");
    }
    ObjectNode body = json.object();
    body.put("name", t.name());
    body.put("version", t.version());
    body.put("ready", true);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  private void infer(Context ctx, String version) {
    String name = ctx.pathParam("model");
    byte[] body = ctx.bodyAsBytes();
    runner.submitAsync(
        ctx,
        deadline -> {
          ModelTarget t = resolver.resolve(name, version);
          InferRequest request = codec.parseInfer(json.read(body));
          // queued on the model's own executor, which batches, leases and runs it
          return executors
              .infer(t, request.inputs(), request.outputs(), deadline)
              .thenApply(
                  outputs ->
                      HttpResult.json(
                          200, responses.inferResponse(name, t.version(), request.id(), outputs)));
        });
  }

  static InferenceModel inferenceModel(ModelLease lease) {
    if (!(lease.model() instanceof InferenceModel)) {
      throw new IllegalStateException(
          "model '" + lease.modelId() + "' is a " + lease.model().getClass().getName()
              + ", which cannot run inference");
    }
    return (InferenceModel) lease.model();
  }
}
