package dev.modelkeeper.scaleout;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A small HTTP/1.1 client with a timeout on every call. Thread-safe.
 *
 * <p>Why a client of our own here: the scale-out tests (ScaleOutIT, ReplicaIT) assert on single
 * answers (one request's status and JSON body: a replica's registry, HAProxy's view of a server)
 * and on every request of a run; it is test plumbing, not a load generator. No figure is measured
 * with it: the scale-out benchmark loads the proxy with wrk ({@code scripts/bench-scaleout.sh}).
 */
public final class Http {

  /** The longest any request may take. */
  public static final Duration TIMEOUT = Duration.ofSeconds(30);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /**
   * One answer. Immutable and thread-safe.
   *
   * @param status the HTTP status
   * @param body the body as text
   */
  public record Answer(int status, String body) {
    public JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("not JSON: " + body, e);
      }
    }
  }

  public Answer get(String url) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build());
  }

  public Answer post(String url, String body) throws IOException, InterruptedException {
    return send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(TIMEOUT)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  public Answer send(HttpRequest request) throws IOException, InterruptedException {
    HttpResponse<String> r = client.send(request, HttpResponse.BodyHandlers.ofString());
    return new Answer(r.statusCode(), r.body());
  }

  /** GET {@code url}, or null when it cannot be reached; never throws for I/O. */
  public Answer tryGet(String url) throws InterruptedException {
    try {
      return get(url);
    } catch (IOException e) {
      return null;
    }
  }
}
