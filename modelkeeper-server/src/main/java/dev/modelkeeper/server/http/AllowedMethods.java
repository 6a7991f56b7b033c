package dev.modelkeeper.server.http;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.router.ParsedEndpoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Answers a request that no route of its method matched: when routes of other methods match its
 * path (templates included), {@code 405 Method Not Allowed} with an {@code Allow} header listing
 * the methods they accept, or {@code 204} with {@code Allow} to {@code OPTIONS}; when no route
 * matches the path at all, {@code 404} as before. The methods come from the router's registered
 * routes, so a new route needs nothing here. {@code HEAD} is accepted wherever {@code GET} is (the
 * router answers it with the {@code GET} route, without a body), and {@code OPTIONS} wherever a
 * route is. Thread-safe once the server has started (the routes no longer change).
 */
public final class AllowedMethods {

  /** The order methods are listed in {@code Allow}. */
  private static final List<String> ORDER =
      List.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");

  private final Supplier<? extends List<ParsedEndpoint>> routes;
  private final ErrorMapper errors;

  /** {@code routes} supplies the router's registered routes, read at each request. */
  public AllowedMethods(Supplier<? extends List<ParsedEndpoint>> routes, ErrorMapper errors) {
    this.routes = routes;
    this.errors = errors;
  }

  /** The methods the routes matching {@code path} accept; empty when no route matches it. */
  public List<String> at(String path) {
    TreeSet<String> methods =
        new TreeSet<>(
            Comparator.comparingInt((String m) -> rank(m))
                .thenComparing(Comparator.naturalOrder()));
    for (ParsedEndpoint route : routes.get()) {
      HandlerType method = route.endpoint.method;
      if (method.isHttpMethod() && route.matches(path)) {
        methods.add(method.name());
        if (method.equals(HandlerType.GET)) {
          methods.add(HandlerType.HEAD.name());
        }
      }
    }
    if (!methods.isEmpty()) {
      methods.add(HandlerType.OPTIONS.name());
    }
    return new ArrayList<>(methods);
  }

  /**
   * The answer to {@code ctx}, which matched no route of its method; {@code notFound} is the
   * router's 404, kept when no route matches the path at all.
   */
  public HttpResult answer(Context ctx, Exception notFound, String requestId) {
    String path = ctx.path();
    List<String> allowed = at(path);
    if (allowed.isEmpty()) {
      return errors.toResult(notFound, requestId);
    }
    String allow = String.join(", ", allowed);
    Routes.label(ctx, template(path)); // counted under the route, not as unmatched
    if (ctx.method().equals(HandlerType.OPTIONS)) {
      return new HttpResult(204, HttpResult.JSON, new byte[0], Map.of("Allow", allow));
    }
    return errors
        .error(
            405,
            "method "
                + ctx.method().name()
                + " is not allowed on "
                + path
                + "; it accepts "
                + allow)
        .withHeader("Allow", allow);
  }

  /** The template of the first route that matches {@code path}, which {@link #at} found. */
  private String template(String path) {
    for (ParsedEndpoint route : routes.get()) {
      if (route.endpoint.method.isHttpMethod() && route.matches(path)) {
        return route.endpoint.path;
      }
    }
    throw new IllegalStateException("no route matches " + path);
  }

  private static int rank(String method) {
    int i = ORDER.indexOf(method);
    return i < 0 ? ORDER.size() : i;
  }
}
