package dev.modelkeeper.server;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.Handler;

/**
 * Registers handlers, and tags every request that matched a route with the route's template (before
 * any filter runs), which metrics use as a bounded label. Used only while the server is configured,
 * on one thread; not thread-safe.
 */
final class Routes {

  private static final String ATTRIBUTE = "modelkeeper.route";
  static final String UNMATCHED = "unmatched";

  private final RoutesConfig routes;

  Routes(RoutesConfig routes) {
    this.routes = routes;
    routes.beforeMatched(
        ctx -> {
          io.javalin.router.Endpoint matched = ctx.endpoints().matchedHttpEndpoint();
          if (matched != null) {
            ctx.attribute(ATTRIBUTE, matched.path);
          }
        });
  }

  void get(String path, Handler handler) {
    routes.get(path, handler);
  }

  void post(String path, Handler handler) {
    routes.post(path, handler);
  }

  /** Runs {@code filter} before matched requests whose path matches {@code pathPattern}. */
  void filter(String pathPattern, Handler filter) {
    routes.beforeMatched(pathPattern, filter);
  }

  /** The route template that answered {@code ctx}, or {@value #UNMATCHED}. */
  static String of(Context ctx) {
    String route = ctx.attribute(ATTRIBUTE);
    return route != null ? route : UNMATCHED;
  }
}
