package dev.modelkeeper.server;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;

/**
 * Registers handlers and tags each request with its route template, which metrics use as a
 * bounded label. Used only while the server is configured, on one thread; not thread-safe.
 */
final class Routes {

  private static final String ATTRIBUTE = "modelkeeper.route";
  static final String UNMATCHED = "unmatched";

  private final RoutesConfig routes;

  Routes(RoutesConfig routes) {
    this.routes = routes;
  }

  void get(String path, Handler handler) {
    routes.get(path, tagged(path, handler));
  }

  void post(String path, Handler handler) {
    routes.post(path, tagged(path, handler));
  }

  /** Runs {@code handler} before every request whose path matches {@code pathPattern}. */
  void before(String pathPattern, Handler handler) {
    routes.before(pathPattern, handler);
  }

  private static Handler tagged(String path, Handler handler) {
    return ctx -> {
      ctx.attribute(ATTRIBUTE, path);
      handler.handle(ctx);
    };
  }

  /** The route template that answered {@code ctx}, or {@value #UNMATCHED}. */
  static String of(Context ctx) {
    String route = ctx.attribute(ATTRIBUTE);
    return route != null ? route : UNMATCHED;
  }
}
