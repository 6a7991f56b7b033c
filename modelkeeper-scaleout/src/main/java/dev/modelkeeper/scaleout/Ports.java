package dev.modelkeeper.scaleout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free TCP ports on 127.0.0.1. Stateless and thread-safe. */
public final class Ports {

  private Ports() {}

  /** A port that was free on 127.0.0.1 a moment ago. */
  public static int free() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    }
  }
}
