package dev.modelkeeper.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.core.ModelDescription;
import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.ModelNotFoundException;
import dev.modelkeeper.core.ModelState;
import dev.modelkeeper.onnx.ModelId;
import dev.modelkeeper.onnx.RepositoryEntry;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.server.memory.ModelMemory;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The repository extension of the Open Inference Protocol: the index of every repository model with
 * its state, and explicit load and unload by model name. Thread-safe; load and unload run through
 * the {@link RequestRunner}.
 *
 * <p>States: {@code READY} (resident), {@code LOADING}, {@code UNLOADING} (draining leases or
 * clearing) and {@code UNAVAILABLE} with a {@code reason} (never loaded, unloaded, evicted, or the
 * last load's failure). Loading a name loads its highest version (a no-op when resident); unloading
 * a name unloads every resident version of it.
 */
final class RepositoryRoutes {

  private final ModelManager manager;
  private final ModelResolver resolver;
  private final ModelEvents events;
  private final Json json;
  private final RequestRunner runner;

  private final ModelMemory models;

  RepositoryRoutes(
      ModelManager manager,
      ModelResolver resolver,
      ModelEvents events,
      Json json,
      RequestRunner runner,
      ModelMemory models) {
    this.models = models;
    this.manager = manager;
    this.resolver = resolver;
    this.events = events;
    this.json = json;
    this.runner = runner;
  }

  void register(Routes routes) {
    routes.post("/v2/repository/index", this::index);
    routes.post("/v2/repository/models/{model}/load", this::load);
    routes.post("/v2/repository/models/{model}/unload", this::unload);
  }

  private void index(Context ctx) {
    JsonNode request = json.readOptional(ctx.bodyAsBytes());
    if (!request.isObject()) {
      throw new BadRequestException("an index request must be a JSON object");
    }
    JsonNode readyNode = request.get("ready");
    if (readyNode != null && !readyNode.isBoolean()) {
      throw new BadRequestException("'ready' must be true or false");
    }
    boolean readyOnly = readyNode != null && readyNode.booleanValue();
    ArrayNode rows = json.object().arrayNode();
    for (IndexRow r : index(readyOnly)) {
      ObjectNode row = rows.addObject();
      row.put("name", r.name());
      row.put("version", r.version());
      row.put("state", r.state());
      row.put("reason", r.reason());
      row.put("charged_bytes", r.chargedBytes());
      Optional<MemoryCost> cost = models.measured(r.key());
      if (cost.isPresent()) {
        row.put("measured_bytes", cost.get().idleBytes());
      } else {
        row.putNull("measured_bytes");
      }
    }
    HttpResult.json(200, json.write(rows)).writeTo(ctx);
  }

  /**
   * One row of the repository index.
   *
   * @param key the resolved identifier the model is (or would be) resident under
   * @param chargedBytes what the budget charges the model now (0 when not resident)
   */
  record IndexRow(
      String name, String version, String state, String reason, String key, long chargedBytes) {}

  /** Every repository model and alias with its state; only READY ones when {@code readyOnly}. */
  List<IndexRow> index(boolean readyOnly) {
    Map<String, ModelState> states = new HashMap<>();
    Map<String, Long> charged = new HashMap<>();
    for (ModelDescription d : manager.describeModels()) {
      states.put(d.modelId(), d.state());
      charged.put(d.modelId(), Math.max(0, d.sizeBytes()));
    }
    List<IndexRow> rows = new ArrayList<>();
    for (RepositoryEntry e : resolver.list()) {
      row(rows, e.name(), e.version(), e.id(), states, charged, readyOnly);
    }
    resolver
        .aliases()
        .forEach(
            (alias, target) ->
                row(
                    rows,
                    alias,
                    ModelId.parse(target).version(),
                    alias,
                    states,
                    charged,
                    readyOnly));
    return rows;
  }

  private void row(
      List<IndexRow> rows,
      String name,
      String version,
      String key,
      Map<String, ModelState> states,
      Map<String, Long> charged,
      boolean readyOnly) {
    ModelState s = states.get(key);
    String state = indexState(s);
    if (readyOnly && !state.equals("READY")) {
      return;
    }
    rows.add(
        new IndexRow(
            name,
            version,
            state,
            s == null ? events.reason(key) : "",
            key,
            charged.getOrDefault(key, 0L)));
  }

  private static String indexState(ModelState s) {
    if (s == null) {
      return "UNAVAILABLE";
    }
    switch (s) {
      case READY:
        return "READY";
      case LOADING:
        return "LOADING";
      default:
        return "UNLOADING";
    }
  }

  private void load(Context ctx) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx,
        () -> {
          ModelTarget t = load(name);
          return HttpResult.json(200, json.write(status(name, t.version(), "READY")));
        });
  }

  private void unload(Context ctx) {
    String name = ctx.pathParam("model");
    runner.submit(
        ctx,
        () -> {
          List<String> keys = unload(name);
          ObjectNode body = status(name, null, "UNAVAILABLE");
          ArrayNode unloaded = body.putArray("unloaded");
          keys.forEach(unloaded::add);
          return HttpResult.json(200, json.write(body));
        });
  }

  /** Loads the highest version of {@code name} (a no-op when resident); blocks until READY. */
  ModelTarget load(String name) {
    ModelTarget t = resolver.resolve(name, null);
    manager.addModel(t.modelId(), null, t.alias());
    return t;
  }

  /** Unloads every resident version of {@code name}; the identifiers it unloaded. */
  List<String> unload(String name) {
    List<String> keys = residentKeys(name);
    for (String key : keys) {
      manager.remove(key);
    }
    return keys;
  }

  /** The registered identifiers that unloading {@code name} removes; 404 when it names nothing. */
  private List<String> residentKeys(String name) {
    List<String> keys = new ArrayList<>();
    if (resolver.aliasTarget(name) != null) {
      keys.add(name);
      return keys;
    }
    new ModelId(name, null);
    String prefix = name + "/";
    for (ModelDescription d : manager.describeModels()) {
      if (d.modelId().startsWith(prefix)) {
        keys.add(d.modelId());
      }
    }
    if (keys.isEmpty() && resolver.versions(name).isEmpty()) {
      throw new ModelNotFoundException("no model '" + name + "' in the repository");
    }
    return keys;
  }

  private ObjectNode status(String name, String version, String state) {
    ObjectNode body = json.object();
    body.put("name", name);
    if (version != null) {
      body.put("version", version);
    }
    body.put("state", state);
    return body;
  }
}
