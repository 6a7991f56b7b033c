package dev.modelkeeper.server.http;

import dev.modelkeeper.server.auth.BearerAuth;
import dev.modelkeeper.server.request.RequestIds;
import dev.modelkeeper.server.request.RequestTrace;
import dev.modelkeeper.server.request.RequestTracer;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.router.Endpoint;
import java.util.Map;

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

  private static final String SPAN = "modelkeeper.span";

  private final RoutesConfig routes;

  /** Routes whose requests are not traced. */
  public Routes(RoutesConfig routes) {
    this(routes, RequestTracer.OFF);
  }

  /**
   * Routes whose requests each get a server span in {@code tracing}, named by method and route
   * template and continuing the caller's {@code traceparent}; {@link #endSpan} ends it.
   */
  public Routes(RoutesConfig routes, RequestTracer tracing) {
    this.routes = routes;
    routes.beforeMatched(
        ctx -> {
          Endpoint matched = ctx.endpoints().matchedHttpEndpoint();
          if (matched != null) {
            ctx.attribute(ATTRIBUTE, matched.path);
            if (tracing.on()) {
              String method = ctx.method().name();
              ctx.attribute(
                  SPAN,
                  tracing.start(
                      method + " " + matched.path,
                      ctx::header,
                      Map.of("http.request.method", method, "http.route", matched.path)));
            }
          }
        });
  }

  /** The trace of {@code ctx}, {@link RequestTrace#NONE} when it is not traced. */
  public static RequestTrace span(Context ctx) {
    RequestTrace span = ctx.attribute(SPAN);
    return span != null ? span : RequestTrace.NONE;
  }

  /** Ends the server span of {@code ctx}, if any, with its response's status. */
  public static void endSpan(Context ctx) {
    RequestTrace span = ctx.attribute(SPAN);
    if (span != null) {
      int status = ctx.statusCode();
      span.attribute("http.response.status_code", status);
      span.end(status >= 500, "HTTP " + status);
    }
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

  /**
   * Counts {@code ctx} under route {@code template} (for a request no route of its method took).
   */
  static void label(Context ctx, String template) {
    ctx.attribute(ATTRIBUTE, template);
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
