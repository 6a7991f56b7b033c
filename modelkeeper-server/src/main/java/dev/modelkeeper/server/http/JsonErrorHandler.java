package dev.modelkeeper.server.http;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's error pages as {@code {"error": "..."}} JSON, for the requests Jetty refuses before they
 * reach a route (an illegal URI, a malformed request line, oversized headers). Stateless apart from
 * the shared {@link Json}; thread-safe.
 */
public final class JsonErrorHandler extends ErrorHandler {

  private final Json json;

  public JsonErrorHandler(Json json) {
    this.json = json;
  }

  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      String message,
      Throwable cause,
      Callback callback) {
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, HttpResult.JSON);
    response.write(true, ByteBuffer.wrap(json.error(text(code, message))), callback);
  }

  private static String text(int code, String message) {
    String reason = HttpStatus.getMessage(code);
    return message == null || message.isBlank() || message.equals(reason)
        ? code + " " + reason
        : code + " " + reason + ": " + message;
  }
}
