package dev.modelkeeper.scaleout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Listening ports on 127.0.0.1 for processes that must keep their port across restarts. A port is
 * drawn below the kernel's ephemeral range, so no outgoing connection and no other {@code bind(0)}
 * can take it while its process is down, and never twice in one JVM. Thread-safe.
 */
public final class Ports {

  private static final int LOWEST = 20_000;
  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private Ports() {}

  /** A port that was free on 127.0.0.1 a moment ago and that this JVM has not handed out. */
  public static synchronized int free() {
    int below = ephemeralLow();
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
      if (!HANDED_OUT.contains(port) && bindable(port)) {
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new IllegalStateException(
        "no free port on 127.0.0.1 in [" + LOWEST + ", " + below + ") after 1000 attempts");
  }

  /** The first port of the kernel's ephemeral range (32768 where it cannot be read). */
  static int ephemeralLow() {
    try {
      int low = Integer.parseInt(Files.readString(EPHEMERAL_RANGE).trim().split("\\s+")[0]);
      return low > LOWEST + 1000 ? low : 32_768;
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
