package dev.modelkeeper.server.oip.sharedmemory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.server.auth.BearerAuth;
import dev.modelkeeper.server.errors.BadRequestException;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Json;
import dev.modelkeeper.server.http.Routes;
import dev.modelkeeper.server.sharedmemory.SharedMemoryException;
import dev.modelkeeper.server.sharedmemory.SharedMemoryRegions;
import io.javalin.http.Context;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The REST endpoints of Triton's system shared memory extension, and its CUDA one refused. Register
 * and unregister need the bearer token when one is configured, as the repository's operations do;
 * registering also needs a client on a loopback address ({@link SharedMemoryRegions}). Thread-safe.
 */
public final class SharedMemoryRoutes {

  private static final String SYSTEM = "/v2/systemsharedmemory";
  private static final String CUDA = "/v2/cudasharedmemory";

  private final SharedMemoryRegions regions;
  private final Json json;
  private final BearerAuth auth;

  /**
   * @param auth the bearer token register and unregister need, or null for none
   */
  public SharedMemoryRoutes(SharedMemoryRegions regions, Json json, BearerAuth auth) {
    this.regions = regions;
    this.json = json;
    this.auth = auth;
  }

  public void register(Routes routes) {
    routes.get(SYSTEM + "/status", ctx -> status(ctx, null));
    routes.get(SYSTEM + "/region/{name}/status", ctx -> status(ctx, ctx.pathParam("name")));
    routes.post(SYSTEM + "/region/{name}/register", this::registerRegion);
    routes.post(SYSTEM + "/unregister", ctx -> unregister(ctx, null));
    routes.post(
        SYSTEM + "/region/{name}/unregister", ctx -> unregister(ctx, ctx.pathParam("name")));
    routes.get(CUDA + "/status", this::cudaStatus);
    routes.get(CUDA + "/region/{name}/status", this::cudaStatus);
    routes.post(CUDA + "/region/{name}/register", this::cudaRegister);
    routes.post(CUDA + "/unregister", this::cudaUnregister);
    routes.post(CUDA + "/region/{name}/unregister", this::cudaUnregister);
  }

  private void status(Context ctx, String name) {
    ArrayNode rows = json.object().arrayNode();
    for (SharedMemoryRegions.Status s : regions.status(name)) {
      ObjectNode row = rows.addObject();
      row.put("name", s.name());
      row.put("key", s.key());
      row.put("offset", s.offset());
      row.put("byte_size", s.byteSize());
    }
    HttpResult.json(200, json.write(rows)).writeTo(ctx);
  }

  private void registerRegion(Context ctx) throws Exception {
    checkToken(ctx);
    JsonNode body = json.readOptional(ctx.bodyAsBytes());
    if (!body.isObject()) {
      throw new BadRequestException(
          "a register request must be a JSON object with 'key', 'offset' and 'byte_size'");
    }
    JsonNode key = body.get("key");
    if (key == null || !key.isTextual()) {
      throw new BadRequestException("'key' must be the shared memory key, e.g. \"/my_region\"");
    }
    regions.register(
        ctx.pathParam("name"),
        key.textValue(),
        whole(body, "offset", 0),
        whole(body, "byte_size", -1),
        peer(ctx));
    HttpResult.json(200, json.write(json.object())).writeTo(ctx);
  }

  private static long whole(JsonNode body, String field, long absent) {
    JsonNode n = body.get(field);
    if (n == null && absent >= 0) {
      return absent;
    }
    if (n == null || !n.canConvertToExactIntegral() || !n.canConvertToLong() || n.longValue() < 0) {
      throw new BadRequestException("'" + field + "' must be a non-negative integer");
    }
    return n.longValue();
  }

  /**
   * The client's address; null (unknown) for a request a proxy forwarded, whose client is elsewhere
   * whatever the connection's address.
   */
  private static InetAddress peer(Context ctx) {
    if (ctx.header("X-Forwarded-For") != null || ctx.header("Forwarded") != null) {
      return null;
    }
    try {
      return InetAddress.getByName(ctx.req().getRemoteAddr()); // an address literal: no lookup
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private void unregister(Context ctx, String name) throws Exception {
    checkToken(ctx);
    if (name == null) {
      regions.unregisterAll();
    } else {
      regions.unregister(name);
    }
    HttpResult.json(200, json.write(json.object())).writeTo(ctx);
  }

  private void checkToken(Context ctx) throws Exception {
    if (auth != null) {
      Routes.requiring(auth).handle(ctx);
    }
  }

  private void cudaStatus(Context ctx) {
    HttpResult.json(200, json.write(json.object().arrayNode())).writeTo(ctx);
  }

  private void cudaRegister(Context ctx) throws Exception {
    checkToken(ctx);
    throw SharedMemoryException.cudaUnsupported();
  }

  private void cudaUnregister(Context ctx) throws Exception {
    checkToken(ctx);
    HttpResult.json(200, json.write(json.object())).writeTo(ctx);
  }
}
