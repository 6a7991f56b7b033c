package dev.modelkeeper.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelLease;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelState;
import dev.modelkeeper.onnx.InferenceModel;
import dev.modelkeeper.onnx.ModelMetadata;
import dev.modelkeeper.onnx.TritonConfig;
import io.javalin.http.Context;
import java.util.List;

/**
 * The Open Inference Protocol REST endpoints: health, server and model metadata, model readiness
 * and inference. Thread-safe; handlers run on HTTP threads, and everything that may load or run a
 * model runs through the {@link RequestRunner}.
 *
 * <p>Inference always holds a lease from {@link ModelManager#acquire}: the model is loaded on
 * demand, cannot be evicted or cleared while it runs, and is released right after it returns,
 * before the response is encoded.
 */
final class OipRoutes {

  static final String SERVER_NAME = "modelkeeper";

  /** The binary tensor data extension's header: the length of the JSON part of a body. */
  static final String HEADER_LENGTH = "Inference-Header-Content-Length";

  /** The protocol extensions this server implements, as {@code GET /v2} and gRPC list them. */
  static final List<String> EXTENSIONS = List.of("model_repository", "binary_tensor_data");

  private final ModelManager manager;
  private final ModelResolver resolver;
  private final ModelEvents events;
  private final ServerMetrics metrics;
  private final InferRequestDecoder decoder;
  private final InferResponses responses;
  private final Json json;
  private final RequestRunner runner;
  private final ServerState state;
  private final InferenceService inference;
  private final ExecutionSettings defaults;

  OipRoutes(
      ModelManager manager,
      ModelResolver resolver,
      ModelEvents events,
      ServerMetrics metrics,
      InferRequestDecoder decoder,
      Json json,
      RequestRunner runner,
      ServerState state,
      InferenceService inference,
      ExecutionSettings defaults) {
    this.manager = manager;
    this.resolver = resolver;
    this.events = events;
    this.metrics = metrics;
    this.decoder = decoder;
    this.responses = new InferResponses(json);
    this.json = json;
    this.runner = runner;
    this.state = state;
    this.inference = inference;
    this.defaults = defaults;
  }

  void register(Routes routes) {
    routes.get("/v2/health/live", this::live);
    routes.get("/v2/health/ready", this::ready);
    routes.get("/v2", this::serverMetadata);
    routes.get("/v2/models/{model}", ctx -> metadata(ctx, null));
    routes.get(
        "/v2/models/{model}/versions/{version}", ctx -> metadata(ctx, ctx.pathParam("version")));
    routes.get("/v2/models/{model}/config", ctx -> config(ctx, null));
    routes.get(
        "/v2/models/{model}/versions/{version}/config",
        ctx -> config(ctx, ctx.pathParam("version")));
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
    EXTENSIONS.forEach(body.putArray("extensions")::add);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  private void metadata(Context ctx, String version) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx,
        () -> {
          ModelInfo info = modelInfo(name, version);
          return HttpResult.json(200, responses.metadata(name, info.versions(), info.metadata()));
        });
  }

  /**
   * A model's versions and metadata.
   *
   * @param versions the versions the name offers (the one asked for when a version was given)
   * @param metadata the metadata of the resolved version
   */
  record ModelInfo(List<String> versions, ModelMetadata metadata) {}

  /** The metadata of {@code name} (and {@code version}, or null); may load the model. */
  ModelInfo modelInfo(String name, String version) {
    ModelTarget t = resolver.resolveKnown(name, version);
    ModelMetadata md = events.metadata(t.key());
    if (md == null) {
      try (ModelLease lease = manager.acquire(t.modelId(), null, t.alias())) {
        md = InferenceService.inferenceModel(lease).metadata();
      }
    }
    List<String> versions =
        version != null || t.alias() != null ? List.of(t.version()) : resolver.versions(name);
    return new ModelInfo(versions, md);
  }

  private void config(Context ctx, String version) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx, () -> HttpResult.json(200, json.write(ProtoJson.object(modelConfig(name, version)))));
  }

  /**
   * The configuration of {@code name} (and {@code version}, or null) as Triton answers it; loads
   * the model when it is not resident.
   */
  dev.modelkeeper.onnx.triton.ModelConfig modelConfig(String name, String version) {
    ModelTarget t = resolver.resolveKnown(name, version);
    try (ModelLease lease = manager.acquire(t.modelId(), null, t.alias())) {
      InferenceModel m = InferenceService.inferenceModel(lease);
      ExecutionSettings s = defaults.overriddenBy(m.config().execution());
      boolean batched = Batches.batchable(m) && m.config().maxBatchSize() != 0;
      return TritonConfig.completed(
          name,
          m.config(),
          m.metadata(),
          batched ? s.maxBatchSize() : 0,
          s.maxQueueDelayNanos() / 1000,
          List.copyOf(new java.util.TreeSet<>(s.preferredBatchSizes())),
          s.maxConcurrency());
    }
  }

  private void modelReady(Context ctx, String version) {
    ModelTarget t = resolver.resolveKnown(ctx.pathParam("model"), version);
    String notReady = notReadyReason(t);
    if (notReady != null) {
      throw new NotReadyException("model '" + t.key() + "' is not ready (" + notReady + ")");
    }
    ObjectNode body = json.object();
    body.put("name", t.name());
    body.put("version", t.version());
    body.put("ready", true);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  /** Null when {@code name} is resident and READY, otherwise why not. */
  String notReadyReason(String name, String version) {
    return notReadyReason(resolver.resolveKnown(name, version));
  }

  private String notReadyReason(ModelTarget t) {
    ModelState s = null;
    for (ModelDescription d : manager.describeModels()) {
      if (d.modelId().equals(t.key())) {
        s = d.state();
      }
    }
    if (s == ModelState.READY) {
      return null;
    }
    return s == null ? events.reason(t.key()) : s.name();
  }

  /**
   * Inference: resolve the model, decode the body (its tensors admitted into the in-flight budget
   * as they are decoded; a JSON header and binary tensor data after it when {@value #HEADER_LENGTH}
   * is given), then the transport-neutral {@link InferenceService}, then encode.
   */
  private void infer(Context ctx, String version) {
    String name = ctx.pathParam("model");
    long headerLength = headerLength(ctx.header(HEADER_LENGTH));
    if (headerLength < 0) {
      Json.checkContentType(ctx.contentType());
    }
    RequestBody body = RequestBody.of(ctx);
    runner.submitAsync(
        ctx,
        (deadline, mayRunModel) -> {
          ModelTarget target = resolver.resolve(name, version);
          InferRequest request =
              decoder.decode(body.stream(), body.length(), body.bytes(), headerLength);
          // run here when the model has a free slot (and this thread may), else queued on the
          // model's own executor, this thread free meanwhile
          return inference
              .inferAsync(
                  name,
                  target,
                  request,
                  deadline,
                  mayRunModel ? InferenceService.ANY_RUN : InferenceService.NO_RUN)
              .thenApply(responses::inferResponse);
        });
  }

  /** The binary extension's JSON header length, or -1 when the header is absent. */
  private static long headerLength(String header) {
    if (header == null) {
      return -1;
    }
    try {
      long length = Long.parseLong(header.trim());
      if (length >= 0) {
        return length;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new BadRequestException(HEADER_LENGTH + " must be a non-negative integer");
  }
}
