package dev.modelkeeper.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The HTTP test client: HTTP/1.1 over loopback, a timeout on every call, JSON bodies parsed on
 * demand. Paths are relative to its base URL, or whole URLs for {@link #Http()}. Thread-safe.
 */
public final class Http {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  public static final Duration TIMEOUT = Duration.ofSeconds(60);

  private final String base;
  private final HttpClient client;
  private volatile String token;

  public Http(String base) {
    this.base = base;
    this.client =
        HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(10))
            .version(HttpClient.Version.HTTP_1_1)
            .build();
  }

  /** A client whose paths are whole URLs. */
  public Http() {
    this("");
  }

  public static Http to(int port) {
    return new Http("http://127.0.0.1:" + port);
  }

  /** Sends {@code Authorization: Bearer token} from now on; null stops it. */
  public Http withToken(String token) {
    this.token = token;
    return this;
  }

  public String base() {
    return base;
  }

  public Response get(String path) {
    return send(request(path).GET());
  }

  /** GET {@code path}, or null when nothing answers there; never throws for I/O. */
  public Response tryGet(String path) {
    try {
      return get(path);
    } catch (UncheckedIOException e) {
      return null;
    }
  }

  public Response post(String path, String json) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)));
  }

  public Response post(String path, byte[] body) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
  }

  public Response send(String method, String path, String body) {
    return send(
        request(path)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)));
  }

  /**
   * Posts an inference request with the binary tensor data extension: {@code json}, then {@code
   * binary}; returns the answer split into its JSON part and the binary bytes after it.
   */
  public BinaryResponse postBinary(String path, String json, byte[] binary) {
    byte[] head = json.getBytes(StandardCharsets.UTF_8);
    byte[] body = new byte[head.length + binary.length];
    System.arraycopy(head, 0, body, 0, head.length);
    System.arraycopy(binary, 0, body, head.length, binary.length);
    try {
      HttpResponse<byte[]> r =
          client.send(
              request(path)
                  .header("Inference-Header-Content-Length", Integer.toString(head.length))
                  .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray());
      int jsonLength =
          r.headers()
              .firstValue("Inference-Header-Content-Length")
              .map(Integer::parseInt)
              .orElse(r.body().length);
      return new BinaryResponse(
          r.statusCode(),
          MAPPER.readTree(r.body(), 0, jsonLength),
          ByteBuffer.wrap(r.body(), jsonLength, r.body().length - jsonLength)
              .slice()
              .order(ByteOrder.LITTLE_ENDIAN));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * An answer of {@link #postBinary}: its status, JSON part and binary part (little-endian).
   * Immutable.
   */
  public record BinaryResponse(int status, JsonNode json, ByteBuffer binary) {}

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(TIMEOUT);
    String t = token;
    if (t != null) {
      b.header("Authorization", "Bearer " + t);
    }
    return b;
  }

  public Response send(HttpRequest.Builder builder) {
    try {
      HttpResponse<String> r = client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
      return new Response(
          r.statusCode(),
          r.body(),
          r.headers().firstValue("Retry-After").orElse(null),
          r.headers().firstValue("Content-Type").orElse(""));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * One response. Immutable and thread-safe.
   *
   * @param status the status code
   * @param body the body text
   * @param retryAfter the Retry-After header, or null
   * @param contentType the Content-Type header, or empty
   */
  public record Response(int status, String body, String retryAfter, String contentType) {

    /** The body as JSON. */
    public JsonNode json() {
      try {
        return MAPPER.readTree(body);
      } catch (IOException e) {
        throw new AssertionError("not JSON (" + status + "): " + body, e);
      }
    }

    /** The {@code error} field of a JSON error body. */
    public String error() {
      JsonNode e = json().get("error");
      if (e == null || !e.isTextual()) {
        throw new AssertionError("no JSON error in (" + status + "): " + body);
      }
      return e.textValue();
    }

    @Override
    public String toString() {
      return status + " " + (body.length() > 300 ? body.substring(0, 300) + "..." : body);
    }
  }
}
