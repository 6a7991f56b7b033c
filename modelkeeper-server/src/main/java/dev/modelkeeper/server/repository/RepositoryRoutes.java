package dev.modelkeeper.server.repository;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.server.control.ModelControl;
import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.RequestRunner;
import dev.modelkeeper.server.http.Routes;
import dev.modelkeeper.server.request.ModelTarget;
import io.javalin.http.Context;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The repository extension of the Open Inference Protocol: the index of every repository model with
 * its state, and explicit load and unload by model name. Thread-safe; load and unload run through
 * the {@link RequestRunner}; the {@link Engine} does the work.
 *
 * <p>States: {@code READY} (resident), {@code LOADING}, {@code UNLOADING} (draining leases or
 * clearing) and {@code UNAVAILABLE} with a {@code reason} (never loaded, unloaded, evicted, or the
 * last load's failure). Loading a name loads its highest version (a no-op when resident); its
 * {@code parameters} may carry {@code config} (the model configuration in JSON, a string) and
 * {@code file:<path>} (a model file in base64), which {@link ModelControl} applies until the next
 * load. Unloading a name unloads every resident version of it ({@code unload_dependents} is
 * accepted).
 */
public final class RepositoryRoutes {

  private final Engine engine;
  private final ModelControl control;
  private final Json json;
  private final RequestRunner runner;

  public RepositoryRoutes(Engine engine, ModelControl control, Json json, RequestRunner runner) {
    this.engine = engine;
    this.control = control;
    this.json = json;
    this.runner = runner;
  }

  public void register(Routes routes) {
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
    for (Engine.IndexRow r : engine.index(readyOnly)) {
      ObjectNode row = rows.addObject();
      row.put("name", r.name());
      row.put("version", r.version());
      row.put("state", r.state());
      row.put("reason", r.reason());
      row.put("charged_bytes", r.chargedBytes());
      Optional<MemoryCost> cost = r.measured();
      if (cost.isPresent()) {
        row.put("measured_bytes", cost.get().idleBytes());
      } else {
        row.putNull("measured_bytes");
      }
    }
    HttpResult.json(200, json.write(rows)).writeTo(ctx);
  }

  private void load(Context ctx) {
    String name = ctx.pathParam("model");
    Map<String, Object> parameters = new LinkedHashMap<>();
    parameters(ctx, "load")
        .properties()
        .forEach(
            p -> {
              String key = p.getKey();
              JsonNode v = p.getValue();
              if (key.startsWith(ModelControl.FILE_PREFIX) && v.isTextual()) {
                try {
                  parameters.put(key, Base64.getDecoder().decode(v.textValue()));
                } catch (IllegalArgumentException e) {
                  throw new BadRequestException(
                      "load parameter '" + key + "' must be the file's bytes in base64", e);
                }
              } else if (v.isTextual() || v.isObject()) { // a config given as an object: its JSON
                parameters.put(key, v.isTextual() ? v.textValue() : v.toString());
              } else if (v.isBoolean()) {
                parameters.put(key, v.booleanValue());
              } else {
                parameters.put(key, v.isIntegralNumber() ? (Object) v.longValue() : v.toString());
              }
            });
    ModelControl.Load load = ModelControl.Load.of(parameters);
    runner.submit(
        ctx,
        () -> {
          ModelTarget t = control.load(name, load);
          return HttpResult.json(200, json.write(status(name, t.version(), "READY")));
        });
  }

  /** The {@code parameters} object of a load or unload request's body; empty when none. */
  private JsonNode parameters(Context ctx, String what) {
    JsonNode request = json.readOptional(ctx.bodyAsBytes());
    if (!request.isObject()) {
      throw new BadRequestException("a " + what + " request must be a JSON object");
    }
    JsonNode parameters = request.path("parameters");
    if (parameters.isMissingNode() || parameters.isNull()) {
      return json.object();
    }
    if (!parameters.isObject()) {
      throw new BadRequestException("'parameters' of a " + what + " request must be an object");
    }
    return parameters;
  }

  private void unload(Context ctx) {
    String name = ctx.pathParam("model");
    boolean dependents = false;
    for (var p : parameters(ctx, "unload").properties()) {
      if (!p.getKey().equals(ModelControl.UNLOAD_DEPENDENTS) || !p.getValue().isBoolean()) {
        throw new BadRequestException(
            "an unload takes one parameter, '"
                + ModelControl.UNLOAD_DEPENDENTS
                + "' (true or false); not '"
                + p.getKey()
                + "' = "
                + p.getValue());
      }
      dependents = p.getValue().booleanValue();
    }
    boolean unloadDependents = dependents;
    runner.submit(
        ctx,
        () -> {
          List<String> keys = control.unload(name, unloadDependents);
          ObjectNode body = status(name, null, "UNAVAILABLE");
          ArrayNode unloaded = body.putArray("unloaded");
          keys.forEach(unloaded::add);
          return HttpResult.json(200, json.write(body));
        });
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
