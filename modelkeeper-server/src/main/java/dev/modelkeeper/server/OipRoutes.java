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
  private final InferRequestDecoder decoder;
  private final InferResponses responses;
  private final Json json;
  private final RequestRunner runner;
  private final ServerState state;

  OipRoutes(
      ModelManager manager,
      ModelResolver resolver,
      ModelEvents events,
      ServerMetrics metrics,
      InferRequestDecoder decoder,
      Json json,
      RequestRunner runner,
      ServerState state) {
    this.manager = manager;
    this.resolver = resolver;
    this.events = events;
    this.metrics = metrics;
    this.decoder = decoder;
    this.responses = new InferResponses(json);
    this.json = json;
    this.runner = runner;
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

  /**
   * Inference in four steps, each its own method: decode the body (its tensors admitted into the
   * in-flight budget as they are decoded), lease the model, run it, encode the answer.
   */
  private void infer(Context ctx, String version) {
    String name = ctx.pathParam("model");
    Json.checkContentType(ctx.contentType());
    RequestBody body = RequestBody.of(ctx);
    runner.submit(
        ctx,
        () -> {
          ModelTarget target = resolver.resolve(name, version);
          InferRequest request = decode(body);
          Inference result = run(target, request);
          return encode(name, request, result);
        });
  }

  /** Decodes a JSON inference request, reserving its tensors in the request's bytes. */
  InferRequest decode(RequestBody body) {
    return decoder.decode(body.stream(), body.length(), body.bytes());
  }

  /** Leases the target, runs it on the request and releases it before returning. */
  Inference run(ModelTarget target, InferRequest request) {
    try (ModelLease lease = manager.acquire(target.modelId(), null, target.alias())) {
      InferenceModel model = inferenceModel(lease);
      long start = System.nanoTime();
      Map<String, Tensor> outputs = model.infer(request.inputs(), request.outputs());
      metrics.inference(target.key(), System.nanoTime() - start);
      return new Inference(model.metadata().version(), outputs);
    }
  }

  /** The JSON response for {@code result}. */
  HttpResult encode(String name, InferRequest request, Inference result) {
    return HttpResult.json(
        200, responses.inferResponse(name, result.version(), request.id(), result.outputs()));
  }

  /** A model's answer: the version that ran and its outputs. Immutable and thread-safe. */
  record Inference(String version, Map<String, Tensor> outputs) {}

  private static InferenceModel inferenceModel(ModelLease lease) {
    if (!(lease.model() instanceof InferenceModel)) {
      throw new IllegalStateException(
          "model '" + lease.modelId() + "' is a " + lease.model().getClass().getName()
              + ", which cannot run inference");
    }
    return (InferenceModel) lease.model();
  }
}
