package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The lease word of one lifecycle entry, single-threaded: which calls grant a lease, and which owe
 * an idle report. The manager-level consequences are covered by the lease and stress tests; these
 * pin the protocol itself.
 */
class LifecycleEntryTest {

  private final LifecycleEntry entry = new LifecycleEntry("a");

  @Test
  void newEntry_isClosedToLeases() {
    assertThat(entry.tryLease()).isEqualTo(LifecycleEntry.NO_LEASE);
    assertThat(entry.leases()).isZero();
  }

  @Test
  void openEntry_grantsLeasesAndCountsThem() {
    entry.openLeases();
    int first = entry.tryLease();
    int second = entry.tryLease();
    assertThat(first).isNotNegative().isEqualTo(second);
    assertThat(entry.leases()).isEqualTo(2);
    assertThat(entry.releaseLease(first)).as("no report was requested").isFalse();
    assertThat(entry.releaseLease(second)).isFalse();
    assertThat(entry.leases()).isZero();
  }

  @Test
  void closeLeases_reportsTheLeasesStillOpen_andRefusesNewOnes() {
    entry.openLeases();
    int held = entry.tryLease();
    assertThat(entry.closeLeases()).isEqualTo(1);
    assertThat(entry.tryLease()).isEqualTo(LifecycleEntry.NO_LEASE);
    assertThat(entry.leases()).isEqualTo(1);
    entry.releaseLease(held);
    assertThat(entry.leases()).isZero();
  }

  @Test
  void requestedReport_isOwedOnceByTheCloserOfTheLastLease() {
    entry.openLeases();
    int one = entry.tryLease();
    int two = entry.tryLease();
    entry.closeLeases();
    entry.requestIdleReport();
    assertThat(entry.releaseLease(one)).as("a lease is still open").isFalse();
    assertThat(entry.releaseLease(two)).as("the last lease owes the report").isTrue();
    entry.openLeases();
    int three = entry.tryLease();
    assertThat(entry.releaseLease(three)).as("the report was consumed").isFalse();
  }

  @Test
  void refusedLease_thatLeavesAClosedEntryIdle_owesTheReport() {
    // a lease attempt counts itself before it sees CLOSED; if a report is pending and it was the
    // last to leave, it must report (else a drain waits for nobody)
    entry.closeLeases();
    entry.requestIdleReport();
    assertThat(entry.tryLease()).isEqualTo(LifecycleEntry.REPORT_IDLE);
    assertThat(entry.tryLease()).as("the report was consumed").isEqualTo(LifecycleEntry.NO_LEASE);
    assertThat(entry.leases()).isZero();
  }

  @Test
  void openLeases_keepsAPendingReport() {
    entry.closeLeases();
    entry.requestIdleReport();
    entry.openLeases();
    int lease = entry.tryLease();
    assertThat(lease).isNotNegative();
    assertThat(entry.releaseLease(lease)).isTrue();
  }

  @Test
  void closeIfIdle_idle_closesAndLeavesNoReportBehind() {
    entry.openLeases();
    assertThat(entry.closeIfIdle()).isTrue();
    assertThat(entry.tryLease()).isEqualTo(LifecycleEntry.NO_LEASE);
    // a failed clear reopens the entry: its leases must not owe a report nobody asked for
    entry.openLeases();
    int lease = entry.tryLease();
    assertThat(entry.releaseLease(lease)).isFalse();
  }

  @Test
  void closeIfIdle_leased_staysOpenAndAsksForAReport() {
    entry.openLeases();
    int held = entry.tryLease();
    assertThat(entry.closeIfIdle()).isFalse();
    int another = entry.tryLease();
    assertThat(another).as("still open to leases").isNotNegative();
    assertThat(entry.releaseLease(another)).isFalse();
    assertThat(entry.releaseLease(held)).as("the evictor asked to hear when it is idle").isTrue();
  }

  @Test
  void stripes_spreadConsecutiveThreadIdsOverEveryStripe() {
    Set<Integer> used = new HashSet<>();
    for (long threadId = 1; threadId <= 8L * LifecycleEntry.STRIPES; threadId++) {
      int stripe = LifecycleEntry.stripeOf(threadId);
      assertThat(stripe).isBetween(0, LifecycleEntry.STRIPES - 1);
      used.add(stripe);
    }
    assertThat(used).hasSize(LifecycleEntry.STRIPES);
  }

  @Test
  void leasesFromDifferentStripes_addUp() throws Exception {
    entry.openLeases();
    int mine = entry.tryLease();
    int[] theirs = new int[1];
    Thread other = new Thread(() -> theirs[0] = entry.tryLease());
    other.start();
    other.join(10_000);
    assertThat(other.isAlive()).isFalse();
    assertThat(entry.leases()).isEqualTo(2);
    assertThat(entry.releaseLease(mine)).isFalse();
    assertThat(entry.releaseLease(theirs[0])).isFalse();
    assertThat(entry.leases()).isZero();
  }
}
