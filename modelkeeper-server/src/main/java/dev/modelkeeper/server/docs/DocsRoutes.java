package dev.modelkeeper.server.docs;

import dev.modelkeeper.server.engine.ServerVersion;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Routes;
import io.javalin.http.Context;
import io.javalin.http.NotFoundResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The REST API's own description: the OpenAPI document at {@value #OPENAPI} and Swagger UI at
 * {@value #PAGE}, both served from the server's jar: Swagger UI's bundle and stylesheet come from
 * its webjar, so the page fetches nothing from elsewhere. Immutable and thread-safe.
 */
public final class DocsRoutes {

  /** Where the OpenAPI document is served. */
  public static final String OPENAPI = "/v2/openapi.json";

  /** Where the Swagger UI page is served; its files are served under it. */
  public static final String PAGE = "/v2/docs";

  private static final String OWN = "/dev/modelkeeper/server/docs/";

  /** The files of Swagger UI the page uses, by name, with their media types. */
  private static final Map<String, String> ASSETS =
      Map.of(
          "swagger-ui-bundle.js", "text/javascript; charset=utf-8",
          "swagger-ui.css", "text/css; charset=utf-8",
          "swagger-ui-bundle.js.LICENSE.txt", "text/plain; charset=utf-8");

  private final byte[] openapi;
  private final byte[] page;
  private final String assetFolder;

  private DocsRoutes(byte[] openapi, byte[] page, String assetFolder) {
    this.openapi = openapi;
    this.page = page;
    this.assetFolder = assetFolder;
  }

  /** Reads the document and the page from the jar; Swagger UI's files are read per request. */
  public static DocsRoutes load() {
    return new DocsRoutes(
        read(OWN + "openapi.json"),
        read(OWN + "index.html"),
        "/META-INF/resources/webjars/swagger-ui/" + ServerVersion.of("swagger-ui") + "/");
  }

  public void register(Routes routes) {
    routes.get(
        OPENAPI, ctx -> new HttpResult(200, "application/json", openapi, Map.of()).writeTo(ctx));
    routes.get(
        PAGE, ctx -> new HttpResult(200, "text/html; charset=utf-8", page, Map.of()).writeTo(ctx));
    routes.get(PAGE + "/{file}", this::asset);
  }

  /** One of Swagger UI's files, read from the jar (a client that leaves costs a DEBUG line). */
  private void asset(Context ctx) throws IOException {
    String file = ctx.pathParam("file");
    String type = ASSETS.get(file);
    InputStream in = type == null ? null : DocsRoutes.class.getResourceAsStream(assetFolder + file);
    if (in == null) {
      throw new NotFoundResponse(
          "the docs page has no file '"
              + file
              + "'; it serves "
              + String.join(", ", ASSETS.keySet().stream().sorted().toList()));
    }
    byte[] bytes;
    try (in) {
      bytes = in.readAllBytes();
    }
    new HttpResult(200, type, bytes, Map.of("Cache-Control", "public, max-age=86400")).writeTo(ctx);
  }

  private static byte[] read(String resource) {
    try (InputStream in = DocsRoutes.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("the server's jar lacks " + resource);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
