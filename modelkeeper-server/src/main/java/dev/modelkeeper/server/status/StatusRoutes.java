package dev.modelkeeper.server.status;

import dev.modelkeeper.server.engine.Engine;
import dev.modelkeeper.server.http.HttpResult;
import dev.modelkeeper.server.http.Routes;
import dev.modelkeeper.server.observability.StatusBoard;
import io.javalin.http.Context;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The status page at {@code /} and {@code /v2/status}: plain HTML rendered here, read-only, the
 * same information as {@code /model/registry} and {@code /metrics} plus recent activity. A small
 * script in the page fetches it again every two seconds and swaps its content in; without the
 * script the page is complete as served. Thread-safe.
 */
public final class StatusRoutes {

  private final Engine engine;
  private final StatusBoard board;

  public StatusRoutes(Engine engine, StatusBoard board) {
    this.engine = engine;
    this.board = board;
  }

  public void register(Routes routes) {
    routes.get("/", this::page);
    routes.get("/v2/status", this::page);
  }

  private void page(Context ctx) {
    String html =
        new StatusPage(
                engine.index(false),
                engine.registry(),
                engine.memoryWaits(),
                board.view(),
                System.currentTimeMillis())
            .render();
    new HttpResult(
            200,
            "text/html; charset=utf-8",
            html.getBytes(StandardCharsets.UTF_8),
            Map.of("Cache-Control", "no-store"))
        .writeTo(ctx);
  }
}
