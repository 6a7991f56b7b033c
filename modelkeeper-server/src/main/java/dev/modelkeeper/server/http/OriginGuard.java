package dev.modelkeeper.server.http;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Refuses (403) a request that may change state ({@code POST}, {@code PUT}, {@code DELETE}, ...)
 * when it carries an {@code Origin} header that is neither the server itself nor one of the allowed
 * origins: a web page in a user's browser cannot drive a server on their machine. Requests without
 * {@code Origin} (curl, SDKs, other servers) pass. Immutable and thread-safe.
 */
public final class OriginGuard extends Handler.Wrapper {

  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

  private final Set<String> allowed;
  private final boolean any;
  private final ErrorMapper errors;

  /** {@code allowed} holds origins like {@code https://app.example.com}; {@code *} allows any. */
  public OriginGuard(List<String> allowed, ErrorMapper errors) {
    this.allowed =
        allowed.stream().map(OriginGuard::normalize).collect(Collectors.toUnmodifiableSet());
    this.any = this.allowed.contains("*");
    this.errors = errors;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String origin = request.getHeaders().get(HttpHeader.ORIGIN);
    if (origin == null || any || SAFE.contains(request.getMethod()) || allowed(request, origin)) {
      return super.handle(request, response, callback);
    }
    HttpResult r =
        errors.toResult(
            new ForbiddenException(
                "requests from the web origin '"
                    + origin
                    + "' may not change this server;"
                    + " the server's --allowed-origins setting lists the origins that may"),
            request.getId());
    response.setStatus(r.status());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, r.contentType());
    response.getHeaders().put(HttpHeader.CONNECTION, "close");
    response.write(true, ByteBuffer.wrap(r.body()), callback);
    return true;
  }

  private boolean allowed(Request request, String origin) {
    String o = normalize(origin);
    if (allowed.contains(o)) {
      return true;
    }
    // same origin: a page served by this server itself
    String host = request.getHeaders().get(HttpHeader.HOST);
    String scheme = request.getHttpURI().getScheme();
    return host != null && o.equals(normalize((scheme != null ? scheme : "http") + "://" + host));
  }

  private static String normalize(String origin) {
    String o = origin.trim().toLowerCase(Locale.ROOT);
    return o.endsWith("/") ? o.substring(0, o.length() - 1) : o;
  }
}
