package dev.modelkeeper.scaleout;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class PortsTest {

  @Test
  void free_neverHandsOutAPortTwice_norOneInTheEphemeralRange() {
    // bind(0) hands out the same port twice in about 1 of 500 groups of five here
    Set<Integer> seen = new HashSet<>();
    int[] ephemeral = Ports.ephemeralRange();
    for (int i = 0; i < 2000; i++) {
      int port = Ports.free();
      assertThat(seen.add(port)).as("port %d handed out twice", port).isTrue();
      assertThat(port).isBetween(1024, 65_535);
      assertThat(port < ephemeral[0] || port > ephemeral[1])
          .as("port %d outside the ephemeral range %d-%d", port, ephemeral[0], ephemeral[1])
          .isTrue();
    }
  }
}
