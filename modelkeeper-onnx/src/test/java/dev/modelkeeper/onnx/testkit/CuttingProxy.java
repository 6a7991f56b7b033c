package dev.modelkeeper.onnx.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP relay on a free loopback port in front of a server; once told to, it closes each connection
 * after relaying a given number of response bytes, as a store that goes away mid-download does.
 * Thread-safe.
 */
public final class CuttingProxy implements AutoCloseable {

  private final ServerSocket listener;
  private final int target;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private volatile long cutAfter = Long.MAX_VALUE;
  private final AtomicLong arming = new AtomicLong();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  /** Starts relaying to {@code 127.0.0.1:targetPort}. */
  public CuttingProxy(int targetPort) throws IOException {
    this.target = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::accept);
  }

  public int port() {
    return listener.getLocalPort();
  }

  /**
   * Every connection, open or new, closes once it has relayed {@code bytes} more response bytes
   * from now; MAX_VALUE: never.
   */
  public void cutAfter(long bytes) {
    cutAfter = bytes;
    arming.incrementAndGet();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(client);
        open.add(server);
        threads.execute(() -> relay(client, server, false));
        threads.execute(() -> relay(server, client, true));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void relay(Socket from, Socket to, boolean responses) {
    byte[] buf = new byte[8192];
    long armed = arming.get();
    long sent = 0;
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      for (int n; (n = in.read(buf)) >= 0; ) {
        if (arming.get() != armed) { // counted from the latest arming
          armed = arming.get();
          sent = 0;
        }
        long limit = responses ? cutAfter : Long.MAX_VALUE;
        int allowed = (int) Math.min(n, limit - sent);
        out.write(buf, 0, allowed);
        out.flush();
        sent += allowed;
        if (sent >= limit) {
          break;
        }
      }
    } catch (IOException e) {
      // the other side closed
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private void closeQuietly(Socket s) {
    open.remove(s);
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() throws Exception {
    listener.close();
    for (Socket s : open) {
      closeQuietly(s); // a relay blocked in a read ends only when its socket closes
    }
    threads.shutdownNow();
    threads.awaitTermination(10, TimeUnit.SECONDS);
  }
}
