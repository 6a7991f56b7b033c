package dev.modelkeeper.scaleout;

import com.google.errorprone.annotations.concurrent.GuardedBy;
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
 * drawn outside the kernel's ephemeral range, so no outgoing connection and no other {@code
 * bind(0)} can take it while its process is down, and never twice in one JVM. Thread-safe.
 *
 * <p>Why it binds sockets: HAProxy's configuration names the replicas' ports before they start, and
 * a restarted replica must come back on its port (ReplicaIT), so a port is chosen up front and
 * checked free by binding it once. Test plumbing; it measures nothing.
 */
public final class Ports {

  private static final int LOWEST = 20_000;
  private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

  @GuardedBy("Ports.class")
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private Ports() {}

  /** A port that was free on 127.0.0.1 a moment ago and that this JVM has not handed out. */
  public static synchronized int free() {
    int[] range = drawnFrom();
    for (int attempt = 0; attempt < 1000; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(range[0], range[1]);
      if (!HANDED_OUT.contains(port) && bindable(port)) {
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new IllegalStateException(
        "no free port on 127.0.0.1 in [" + range[0] + ", " + range[1] + ") after 1000 attempts");
  }

  /**
   * The ports {@link #free} draws from, {@code [from, to)}: below the kernel's ephemeral range when
   * there is room for a few thousand there, else above it.
   */
  static int[] drawnFrom() {
    int[] ephemeral = ephemeralRange();
    if (ephemeral[0] - LOWEST >= 1000) {
      return new int[] {LOWEST, ephemeral[0]};
    }
    if (65_536 - (ephemeral[1] + 1) >= 1000) {
      return new int[] {ephemeral[1] + 1, 65_536};
    }
    throw new IllegalStateException(
        "the ephemeral port range "
            + ephemeral[0]
            + "-"
            + ephemeral[1]
            + " ("
            + EPHEMERAL_RANGE
            + ") leaves no room for the replicas' fixed ports");
  }

  /** The kernel's ephemeral port range, inclusive (Linux's default where it cannot be read). */
  static int[] ephemeralRange() {
    try {
      String[] bounds = Files.readString(EPHEMERAL_RANGE).trim().split("\\s+");
      return new int[] {Integer.parseInt(bounds[0]), Integer.parseInt(bounds[1])};
    } catch (IOException | RuntimeException e) {
      return new int[] {32_768, 60_999};
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
