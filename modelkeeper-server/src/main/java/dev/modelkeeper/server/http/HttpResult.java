package dev.modelkeeper.server.http;

import dev.modelkeeper.server.http.compression.AnswerCompression;
import io.javalin.http.Context;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A complete response, built off the request thread and written once. Immutable and thread-safe
 * (the body array is never modified after construction).
 *
 * @param status the HTTP status
 * @param contentType the body's media type
 * @param body the encoded body
 * @param headers extra response headers
 */
public record HttpResult(int status, String contentType, byte[] body, Map<String, String> headers) {

  static final String JSON = "application/json";

  private static final System.Logger LOG = System.getLogger(HttpResult.class.getName());

  public HttpResult {
    headers = Map.copyOf(headers);
  }

  public static HttpResult json(int status, byte[] body) {
    return new HttpResult(status, JSON, body, Map.of());
  }

  HttpResult withHeader(String name, String value) {
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.put(name, value);
    return new HttpResult(status, contentType, body, h);
  }

  /**
   * Writes status, headers and body to {@code ctx}; call at most once per request. The body goes
   * straight to the response's output (Jetty's pooled buffer): a body set as the context's result
   * would be copied through a new 32 KB array per response. A client that left before its answer
   * was written costs one DEBUG line: nobody is left to answer, and it is not the server's fault.
   */
  public void writeTo(Context ctx) {
    ctx.status(status);
    headers.forEach(ctx::header);
    ctx.contentType(contentType);
    String coding = AnswerCompression.choose(ctx.header("Accept-Encoding"), body.length);
    byte[] sent = coding == null ? body : AnswerCompression.compress(body, coding);
    if (coding != null) {
      ctx.header("Content-Encoding", coding);
      ctx.header("Vary", "Accept-Encoding");
    }
    ctx.res().setContentLength(sent.length);
    try {
      ctx.outputStream().write(sent);
    } catch (IOException e) {
      LOG.log(
          Level.DEBUG,
          "request {0}: the client left before its answer ({1}, {2} bytes) was sent",
          Routes.requestId(ctx),
          String.valueOf(status),
          String.valueOf(body.length));
    }
  }
}
