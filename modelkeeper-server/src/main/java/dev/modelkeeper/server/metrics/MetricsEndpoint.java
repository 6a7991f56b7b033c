package dev.modelkeeper.server.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * {@code GET /metrics} on a port of its own, as Triton serves its metrics (port 8002 by default):
 * Prometheus text from a supplier, nothing else (another path is 404, another method 405). Served
 * by the JDK's HTTP server on {@value #THREADS} threads; a scrape only reads counters. Thread-safe.
 */
public final class MetricsEndpoint implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(MetricsEndpoint.class.getName());
  private static final int THREADS = 2;
  private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  private static final AtomicInteger ENDPOINTS = new AtomicInteger();

  private final HttpServer server;
  private final ExecutorService threads;

  private MetricsEndpoint(HttpServer server, ExecutorService threads) {
    this.server = server;
    this.threads = threads;
  }

  /**
   * Listens on {@code host}:{@code port} (0 picks a free port) and answers {@code /metrics} with
   * {@code text}, read at each scrape.
   *
   * @throws IOException when the port cannot be bound
   */
  public static MetricsEndpoint start(String host, int port, Supplier<String> text)
      throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 64);
    int id = ENDPOINTS.incrementAndGet();
    AtomicInteger ids = new AtomicInteger();
    ThreadPoolExecutor threads =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(64),
            r -> {
              Thread t = new Thread(r, "modelkeeper-metrics-" + id + "-" + ids.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            new ThreadPoolExecutor.DiscardPolicy());
    threads.allowCoreThreadTimeOut(true);
    server.setExecutor(threads);
    server.createContext("/", exchange -> answer(exchange, text));
    server.start();
    return new MetricsEndpoint(server, threads);
  }

  private static void answer(HttpExchange exchange, Supplier<String> text) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      boolean head = method.equals("HEAD");
      if (!exchange.getRequestURI().getPath().equals("/metrics")) {
        send(
            exchange,
            404,
            "application/json",
            "{\"error\": \"no such path; metrics are at /metrics\"}",
            head);
      } else if (!head && !method.equals("GET")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        send(
            exchange,
            405,
            "application/json",
            "{\"error\": \"/metrics answers GET and HEAD\"}",
            false);
      } else {
        String body;
        try {
          body = text.get();
        } catch (RuntimeException e) {
          LOG.log(Level.ERROR, "could not read the metrics", e);
          send(
              exchange,
              500,
              "application/json",
              "{\"error\": \"could not read the metrics\"}",
              head);
          return;
        }
        send(exchange, 200, CONTENT_TYPE, body, head);
      }
    }
  }

  private static void send(
      HttpExchange exchange, int status, String type, String body, boolean head)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    if (head) {
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** The bound port. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Stops listening and ends its threads; scrapes in progress are cut off. */
  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
