package dev.modelkeeper.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.core.ManagerStats;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.WithFixedSizeCache;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.server.memory.MemoryGuard;
import dev.modelkeeper.server.memory.ModelMemory;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The management API in the style of Roboflow Inference: add (load, optionally under an alias),
 * remove, clear, and the registry of loaded models. Thread-safe; add, remove and clear run through
 * the {@link RequestRunner}.
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
final class ManagementRoutes {

  /** The request header that may name the model of an add or remove. */
  static final String MODEL_HEADER = "X-Model-Id";

  private final ModelManager manager;
  private final WithFixedSizeCache budget;
  private final ModelResolver resolver;
  private final ModelEvents events;
  private final Json json;
  private final RequestRunner runner;

  private final ModelMemory modelMemory;
  private final MemoryGuard guard;

  ManagementRoutes(
      WithFixedSizeCache budget,
      ModelResolver resolver,
      ModelEvents events,
      Json json,
      RequestRunner runner,
      ModelMemory models,
      MemoryGuard guard) {
    this.modelMemory = models;
    this.guard = guard;
    this.manager = budget;
    this.budget = budget;
    this.resolver = resolver;
    this.events = events;
    this.json = json;
    this.runner = runner;
  }

  void register(Routes routes) {
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
          ModelTarget t = resolver.resolveId(modelId);
          String key = t.modelId();
          if (alias == null) {
            manager.addModel(t.modelId(), apiKey);
          } else {
            boolean added = resolver.putAlias(alias, t.modelId());
            try {
              manager.addModel(t.modelId(), apiKey, alias);
            } catch (RuntimeException e) {
              if (added) {
                resolver.forgetAlias(alias);
              }
              throw e;
            }
            key = alias;
          }
          ObjectNode out = json.object();
          out.put("model_id", key);
          if (alias != null) {
            out.put("alias_of", t.modelId());
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
          List<String> removed = new ArrayList<>();
          if (resolver.aliasTarget(modelId) != null) {
            removeIfPresent(modelId, removed);
            resolver.forgetAlias(modelId);
            events.forget(modelId);
          } else {
            ModelId id = ModelId.parse(modelId);
            if (id.isLatest()) {
              for (ModelDescription d : manager.describeModels()) {
                if (d.modelId().startsWith(id.name() + "/")) {
                  removeIfPresent(d.modelId(), removed);
                }
              }
            } else {
              removeIfPresent(id.toString(), removed);
            }
          }
          ObjectNode out = json.object();
          out.put("model_id", modelId);
          ArrayNode ids = out.putArray("removed");
          removed.forEach(ids::add);
          return HttpResult.json(200, json.write(out));
        });
  }

  private void removeIfPresent(String key, List<String> removed) {
    boolean present = manager.contains(key);
    manager.remove(key);
    if (present) {
      removed.add(key);
    }
  }

  private void clear(Context ctx) {
    runner.submit(
        ctx,
        () -> {
          Set<String> before = manager.keys();
          manager.clear();
          resolver.aliases().keySet().forEach(events::forget);
          resolver.forgetAliases();
          ObjectNode out = json.object();
          ArrayNode ids = out.putArray("removed");
          before.stream().sorted().forEach(ids::add);
          return HttpResult.json(200, json.write(out));
        });
  }

  private void registry(Context ctx) {
    Map<String, String> aliases = resolver.aliases();
    Set<String> pinned = budget.pinned();
    List<ModelDescription> models = new ArrayList<>(manager.describeModels());
    models.sort(Comparator.comparing(ModelDescription::modelId));
    ManagerStats stats = manager.stats();
    ObjectNode out = json.object();
    ArrayNode rows = out.putArray("models");
    for (ModelDescription d : models) {
      ObjectNode row = rows.addObject();
      row.put("model_id", d.modelId());
      String target = aliases.get(d.modelId());
      if (target != null) {
        row.put("alias_of", target);
      }
      row.put("state", d.state().name());
      row.put("size_bytes", d.sizeBytes());
      row.put("charged_bytes", Math.max(0, d.sizeBytes()));
      Optional<MemoryCost> cost = modelMemory.measured(d.modelId());
      putOrNull(row, "measured_bytes", cost.map(MemoryCost::idleBytes));
      putOrNull(row, "measured_load_peak_bytes", cost.map(MemoryCost::loadPeakBytes));
      Optional<MemoryCost> run = cost.filter(MemoryCost::runMeasured);
      putOrNull(row, "measured_working_bytes", run.map(MemoryCost::workingBytes));
      putOrNull(row, "measured_working_rows", run.map(c -> (long) c.workingRows()));
      row.put("load_seconds", d.loadNanos() / 1e9);
      row.put("leases", d.leases());
      row.put("pinned", pinned.contains(d.modelId()));
      ArrayNode names = row.putArray("aliases");
      aliases.forEach(
          (alias, t) -> {
            if (t.equals(d.modelId())) {
              names.add(alias);
            }
          });
    }
    out.put("resident_models", stats.residentModels());
    out.put("resident_bytes", stats.residentBytes());
    out.put("max_models", budget.options().maxSize());
    out.put("max_bytes", budget.options().maxBytes());
    ObjectNode mem = out.putObject("memory");
    long rss = guard.residentBytes();
    mem.put("cap_bytes", guard.cap().bytes());
    mem.put("cap_source", guard.cap().source());
    mem.put("resident_bytes", rss);
    mem.put("headroom_bytes", rss < 0 ? -1 : guard.cap().bytes() - rss);
    mem.put("jvm_bytes", guard.jvmBytes());
    mem.put("models_bytes", budget.usedBytes());
    mem.put("working_bytes", budget.workingBytes());
    mem.put("unaccounted_bytes", budget.outsideBytes());
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
