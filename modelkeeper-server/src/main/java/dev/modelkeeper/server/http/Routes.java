package dev.modelkeeper.server.http;

import dev.modelkeeper.server.engine.BearerAuth;
import dev.modelkeeper.server.engine.RequestIds;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;

/**
 * Registers handlers, and tags every request that matched a route with the route's template (before
 * any filter runs), which metrics use as a bounded label. Used only while the server is configured,
 * on one thread; not thread-safe.
 */
public final class Routes {

  private static final String ATTRIBUTE = "modelkeeper.route";
  private static final String REQUEST_ID = "modelkeeper.requestId";

  /** The header that carries a request's identifier both ways. */
  static final String REQUEST_ID_HEADER = "X-Request-Id";

  static final String UNMATCHED = "unmatched";

  private final RoutesConfig routes;

  public Routes(RoutesConfig routes) {
    this.routes = routes;
    routes.beforeMatched(
        ctx -> {
          io.javalin.router.Endpoint matched = ctx.endpoints().matchedHttpEndpoint();
          if (matched != null) {
            ctx.attribute(ATTRIBUTE, matched.path);
          }
        });
  }

  public void get(String path, Handler handler) {
    routes.get(path, handler);
  }

  public void post(String path, Handler handler) {
    routes.post(path, handler);
  }

  /** Runs {@code filter} before matched requests whose path matches {@code pathPattern}. */
  public void filter(String pathPattern, Handler filter) {
    routes.beforeMatched(pathPattern, filter);
  }

  /** The route template that answered {@code ctx}, or {@value #UNMATCHED}. */
  public static String of(Context ctx) {
    String route = ctx.attribute(ATTRIBUTE);
    return route != null ? route : UNMATCHED;
  }

  /**
   * Gives {@code ctx} its identifier (the client's {@value #REQUEST_ID_HEADER} when it is short and
   * plain, else a new one) and echoes it in the response header; runs before every handler.
   */
  public static void assignRequestId(Context ctx, RequestIds ids) {
    String id = ids.accept(ctx.header(REQUEST_ID_HEADER));
    ctx.attribute(REQUEST_ID, id);
    ctx.header(REQUEST_ID_HEADER, id);
  }

  /** The identifier {@link #assignRequestId} gave {@code ctx}, or {@code "-"} before that. */
  public static String requestId(Context ctx) {
    String id = ctx.attribute(REQUEST_ID);
    return id != null ? id : "-";
  }

  /** A filter that lets only requests with {@code auth}'s bearer token through. */
  public static Handler requiring(BearerAuth auth) {
    return ctx -> auth.check(ctx.header("Authorization"));
  }
}
