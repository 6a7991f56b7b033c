package dev.modelkeeper.server.http;

import dev.modelkeeper.server.observability.ServerMetrics;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * Closes a new connection that is still sending the headers of its first request when the body read
 * timeout has passed: slow headers cannot keep connections open (reading headers holds no thread;
 * the connection limit bounds how many may be open). Thread-safe; callbacks run on Jetty's threads
 * and the timer.
 */
public final class HeaderDeadline implements Connection.Listener {

  private final Duration timeout;
  private final ScheduledExecutorService timer;
  private final ServerMetrics metrics;

  public HeaderDeadline(Duration timeout, ScheduledExecutorService timer, ServerMetrics metrics) {
    this.timeout = timeout;
    this.timer = timer;
    this.metrics = metrics;
  }

  @Override
  public void onOpened(Connection connection) {
    if (!(connection instanceof HttpConnection)) {
      return;
    }
    HttpConnection http = (HttpConnection) connection;
    timer.schedule(
        () -> {
          if (http.getEndPoint().isOpen()
              && http.getMessagesIn() == 0
              && http.getParser().inHeaderState()
              && !http.getParser().isStart()) {
            metrics.slowClient();
            http.close();
          }
        },
        timeout.toNanos(),
        TimeUnit.NANOSECONDS);
  }
}
