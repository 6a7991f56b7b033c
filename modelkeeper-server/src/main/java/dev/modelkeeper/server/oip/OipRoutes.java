package dev.modelkeeper.server.oip;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.onnx.TritonConfig;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.engine.InferenceService;
import dev.modelkeeper.server.engine.ServerVersion;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.RequestBody;
import dev.modelkeeper.server.http.RequestRunner;
import dev.modelkeeper.server.http.Routes;
import dev.modelkeeper.server.request.InferRequest;
import dev.modelkeeper.server.request.ModelTarget;
import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import io.javalin.http.Context;
import java.util.concurrent.CompletableFuture;

/**
 * The Open Inference Protocol REST endpoints: health, server and model metadata, model readiness,
 * configuration and inference, in JSON and with the binary tensor data extension. A thin transport:
 * it decodes the wire format into engine types, calls the {@link Engine}, and encodes the answer.
 * Thread-safe; handlers run on HTTP threads, and everything that may load or run a model runs
 * through the {@link RequestRunner}.
 */
public final class OipRoutes {

  /** The binary tensor data extension's header: the length of the JSON part of a body. */
  static final String HEADER_LENGTH = "Inference-Header-Content-Length";

  private final Engine engine;
  private final InferRequestDecoder decoder;
  private final InferResponses responses;
  private final Json json;
  private final RequestRunner runner;

  public OipRoutes(
      Engine engine,
      InferRequestDecoder decoder,
      Json json,
      RequestRunner runner,
      SharedMemoryRegions regions) {
    this.engine = engine;
    this.decoder = decoder;
    this.responses = new InferResponses(json, regions);
    this.json = json;
    this.runner = runner;
  }

  public void register(Routes routes) {
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
    engine.checkReady();
    ObjectNode body = json.object();
    body.put("ready", true);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  private void serverMetadata(Context ctx) {
    ObjectNode body = json.object();
    body.put("name", Engine.SERVER_NAME);
    body.put("version", ServerVersion.get());
    Engine.EXTENSIONS.forEach(body.putArray("extensions")::add);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  private void metadata(Context ctx, String version) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx,
        () -> {
          Engine.ModelInfo info = engine.modelInfo(name, version);
          return HttpResult.json(200, responses.metadata(name, info.versions(), info.metadata()));
        });
  }

  private void config(Context ctx, String version) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx,
        () -> {
          Engine.ServedConfig c = engine.modelConfig(name, version);
          return HttpResult.json(
              200,
              json.write(
                  ProtoJson.object(
                      TritonConfig.completed(
                          c.name(),
                          c.config(),
                          c.metadata(),
                          c.maxBatchSize(),
                          c.maxQueueDelayMicros(),
                          c.preferredBatchSizes(),
                          c.instances()))));
        });
  }

  private void modelReady(Context ctx, String version) {
    ModelTarget t = engine.readyModel(ctx.pathParam("model"), version);
    ObjectNode body = json.object();
    body.put("name", t.name());
    body.put("version", t.version());
    body.put("ready", true);
    HttpResult.json(200, json.write(body)).writeTo(ctx);
  }

  /**
   * Inference: resolve the model, decode the body (its tensors admitted into the in-flight budget
   * as they are decoded; a JSON header and binary tensor data after it when {@value #HEADER_LENGTH}
   * is given), then the {@link Engine}, then encode.
   */
  private void infer(Context ctx, String version) {
    String name = ctx.pathParam("model");
    long headerLength = headerLength(ctx.header(HEADER_LENGTH));
    if (headerLength < 0) {
      Json.checkContentType(ctx.contentType());
    }
    RequestBody body = RequestBody.of(ctx);
    RequestTrace span = Routes.span(ctx);
    runner.submitAsync(
        ctx,
        (deadline, mayRunModel) -> {
          ModelTarget target = engine.resolve(name, version);
          InferRequest request =
              decoder.decode(body.stream(), body.length(), body.bytes(), headerLength);
          // run here when the model has a free slot (and this thread may), else queued on the
          // model's own executor, this thread free meanwhile
          CompletableFuture<InferenceService.Result> started =
              engine.infer(
                  name,
                  target,
                  span.recording() ? request.traced(span) : request,
                  deadline,
                  mayRunModel ? Engine.ANY_RUN : Engine.NO_RUN);
          if (!span.recording()) {
            return started.thenApply(responses::inferResponse);
          }
          return started.thenApply(
              result -> span.measure("encode", () -> responses.inferResponse(result)));
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
