package dev.modelkeeper.server.management;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.core.MemoryWait;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.RequestRunner;
import dev.modelkeeper.server.http.Routes;
import io.javalin.http.Context;
import java.util.List;
import java.util.Optional;

/**
 * The management API in the style of Roboflow Inference: add (load, optionally under an alias),
 * remove, clear, and the registry of loaded models. Thread-safe; add, remove and clear run through
 * the {@link RequestRunner}; the {@link Engine} does the work.
 *
 * <p>A {@code model_id} is {@code name} (its highest version) or {@code name/version}; models are
 * registered as {@code name/version} unless {@code model_id_alias} names them. An alias stays known
 * (and loads on demand) until it is removed or cleared.
 *
 * <p>{@code /model/add} and {@code /model/remove} also take the model from an {@value
 * #MODEL_HEADER} header, so a proxy can route them by model without reading the body: the header
 * alone names the {@code model_id} (the body may then be empty); with both, the header must name
 * the body's {@code model_id} or its {@code model_id_alias} (the name clients will call), else 400.
 */
public final class ManagementRoutes {

  /** The request header that may name the model of an add or remove. */
  static final String MODEL_HEADER = "X-Model-Id";

  private final Engine engine;
  private final Json json;
  private final RequestRunner runner;

  public ManagementRoutes(Engine engine, Json json, RequestRunner runner) {
    this.engine = engine;
    this.json = json;
    this.runner = runner;
  }

  public void register(Routes routes) {
    routes.post("/model/add", this::add);
    routes.post("/model/remove", this::remove);
    routes.post("/model/clear", this::clear);
    routes.get("/model/registry", this::registry);
  }

  private void add(Context ctx) {
    Json.checkContentType(ctx.contentType());
    JsonNode body = body(ctx);
    String alias = text(body, "model_id_alias", false);
    String modelId = modelId(ctx, body, alias);
    String apiKey = text(body, "api_key", false);
    runner.submit(
        ctx,
        () -> {
          Engine.Added added = engine.add(modelId, alias, apiKey);
          ObjectNode out = json.object();
          out.put("model_id", added.key());
          if (alias != null) {
            out.put("alias_of", added.modelId());
          }
          out.put("state", "READY");
          return HttpResult.json(200, json.write(out));
        });
  }

  private void remove(Context ctx) {
    Json.checkContentType(ctx.contentType());
    String modelId = modelId(ctx, body(ctx), null);
    runner.submit(
        ctx,
        () -> {
          List<String> removed = engine.remove(modelId);
          ObjectNode out = json.object();
          out.put("model_id", modelId);
          ArrayNode ids = out.putArray("removed");
          removed.forEach(ids::add);
          return HttpResult.json(200, json.write(out));
        });
  }

  private void clear(Context ctx) {
    runner.submit(
        ctx,
        () -> {
          List<String> removed = engine.clear();
          ObjectNode out = json.object();
          ArrayNode ids = out.putArray("removed");
          removed.forEach(ids::add);
          return HttpResult.json(200, json.write(out));
        });
  }

  private void registry(Context ctx) {
    Engine.Registry registry = engine.registry();
    ObjectNode out = json.object();
    ArrayNode rows = out.putArray("models");
    for (Engine.Resident r : registry.models()) {
      ModelDescription d = r.model();
      ObjectNode row = rows.addObject();
      row.put("model_id", d.modelId());
      if (r.aliasOf() != null) {
        row.put("alias_of", r.aliasOf());
      }
      row.put("state", d.state().name());
      row.put("size_bytes", d.sizeBytes());
      row.put("charged_bytes", Math.max(0, d.sizeBytes()));
      Optional<MemoryCost> cost = r.measured();
      putOrNull(row, "measured_bytes", cost.map(MemoryCost::idleBytes));
      putOrNull(row, "measured_load_peak_bytes", cost.map(MemoryCost::loadPeakBytes));
      Optional<MemoryCost> run = cost.filter(MemoryCost::runMeasured);
      putOrNull(row, "measured_working_bytes", run.map(MemoryCost::workingBytes));
      putOrNull(row, "measured_working_rows", run.map(c -> (long) c.workingRows()));
      row.put("load_seconds", d.loadNanos() / 1e9);
      row.put("leases", d.leases());
      row.put("pinned", r.pinned());
      ArrayNode names = row.putArray("aliases");
      r.aliases().forEach(names::add);
    }
    out.put("resident_models", registry.stats().residentModels());
    out.put("resident_bytes", registry.stats().residentBytes());
    out.put("max_models", registry.maxModels());
    out.put("max_bytes", registry.maxBytes());
    Engine.Memory m = registry.memory();
    ObjectNode mem = out.putObject("memory");
    mem.put("cap_bytes", m.capBytes());
    mem.put("cap_source", m.capSource());
    mem.put("resident_bytes", m.residentBytes());
    mem.put("headroom_bytes", m.residentBytes() < 0 ? -1 : m.capBytes() - m.residentBytes());
    mem.put("jvm_bytes", m.jvmBytes());
    mem.put("models_bytes", m.modelsBytes());
    mem.put("working_bytes", m.workingBytes());
    mem.put("unaccounted_bytes", m.unaccountedBytes());
    ArrayNode waits = mem.putArray("waits");
    for (MemoryWait w : engine.memoryWaits()) {
      waits
          .addObject()
          .put("model_id", w.modelId())
          .put("for", w.load() ? "load" : "run")
          .put("bytes", w.bytes())
          .put("waited_seconds", w.waited().toNanos() / 1e9)
          .put("holds_lease", w.holdsLease());
    }
    HttpResult.json(200, json.write(out)).writeTo(ctx);
  }

  private static void putOrNull(ObjectNode row, String field, Optional<Long> value) {
    if (value.isPresent()) {
      row.put(field, value.get());
    } else {
      row.putNull(field);
    }
  }

  /** The JSON body; an empty body is an empty object when the model header names the model. */
  private JsonNode body(Context ctx) {
    byte[] bytes = ctx.bodyAsBytes();
    if (bytes.length == 0 && ctx.header(MODEL_HEADER) != null) {
      return json.object();
    }
    return json.read(bytes);
  }

  /** The {@code model_id} from the body or the model header, checking that the two agree. */
  private static String modelId(Context ctx, JsonNode body, String alias) {
    String header = ctx.header(MODEL_HEADER);
    if (header != null && header.isBlank()) {
      throw new BadRequestException("'" + MODEL_HEADER + "' must not be empty");
    }
    String inBody = text(body, "model_id", header == null);
    if (inBody == null) {
      return header.trim();
    }
    if (header != null && !header.trim().equals(inBody) && !header.trim().equals(alias)) {
      throw new BadRequestException(
          "'"
              + MODEL_HEADER
              + ": "
              + header.trim()
              + "' names neither 'model_id' nor"
              + " 'model_id_alias' of the body");
    }
    return inBody;
  }

  private static String text(JsonNode body, String field, boolean required) {
    if (!body.isObject()) {
      throw new BadRequestException("the request body must be a JSON object");
    }
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      if (required) {
        throw new BadRequestException("'" + field + "' is required");
      }
      return null;
    }
    if (!v.isTextual() || v.textValue().isEmpty()) {
      throw new BadRequestException("'" + field + "' must be a non-empty string");
    }
    return v.textValue();
  }
}
