package dev.modelkeeper.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The LRU order over recorded uses, single-threaded: uses recorded in different lease stripes
 * compare by the order they were recorded in, whatever their stripe, and the read buffer's stripes
 * record into their own threads' lease stripes.
 */
class AccessOrderTest {

  private final AccessOrder order = new AccessOrder();
  private final LifecycleEntry a = new LifecycleEntry("a");
  private final LifecycleEntry b = new LifecycleEntry("b");
  private final LifecycleEntry c = new LifecycleEntry("c");

  private List<String> ids() {
    return order.snapshot().stream().map(e -> e.id).toList();
  }

  @Test
  void linkedEntries_areOrderedByTheirLastUse_whateverTheStripeThatRecordedIt() {
    order.link(a.node, 1);
    order.link(b.node, 2);
    order.link(c.node, 3);
    assertThat(ids()).containsExactly("a", "b", "c");

    order.touch(a.node, 3, 4);
    assertThat(ids()).containsExactly("b", "c", "a");

    order.touch(b.node, 3, 5);
    order.touch(c.node, 7, 6);
    assertThat(ids()).containsExactly("a", "b", "c");

    // a's use in stripe 3 is older than b's and c's; its newer use in stripe 0 counts
    order.touch(a.node, 0, 7);
    assertThat(ids()).containsExactly("b", "c", "a");
    assertThat(a.lastUsedAt()).isEqualTo(7);
    assertThat(b.lastUsedAt()).isEqualTo(5);

    // the manager's own use (an idle check that found a lease) counts as well
    order.touch(b.node, 8);
    assertThat(ids()).containsExactly("c", "a", "b");
    assertThat(b.lastUsedAt()).isEqualTo(8);
  }

  @Test
  void unlinkedEntries_leaveTheOrder_andLaterUsesOfThemAreIgnored() {
    order.link(a.node, 1);
    order.link(b.node, 2);
    order.link(c.node, 3);
    order.unlink(a.node);
    order.unlink(a.node);
    order.touch(a.node, 2, 4);
    assertThat(ids()).containsExactly("b", "c");

    order.link(a.node, 5);
    order.unlink(c.node);
    assertThat(ids()).containsExactly("b", "a");
  }

  @Test
  void aSerial_namesTheNodeLinkedUnderIt_untilItIsUnlinked_andIsReusedAfterwards() {
    order.link(a.node, 1);
    order.link(b.node, 2);
    int serialOfA = a.node.serial;
    assertThat(serialOfA).isPositive().isNotEqualTo(b.node.serial);

    order.touch(serialOfA, 1, 3);
    order.touch(0, 1, 3);
    order.touch(1_000, 1, 3);
    assertThat(ids()).containsExactly("b", "a");

    order.unlink(a.node);
    assertThat(a.node.serial).isZero();
    order.touch(serialOfA, 1, 4);
    assertThat(ids()).containsExactly("b");

    order.link(c.node, 5);
    assertThat(c.node.serial).isEqualTo(serialOfA);
    order.touch(b.node, 1, 6);
    assertThat(ids()).containsExactly("c", "b");
  }

  @Test
  void aReadBufferStripe_recordsIntoItsThreadsLeaseStripe() {
    for (int stripes : new int[] {4, 8, 64}) {
      ReadBuffer reads = new ReadBuffer(stripes);
      for (long thread = 1; thread < 200; thread++) {
        long hash = thread * 0x9E37_79B9_7F4A_7C15L;
        int readStripe = (int) (hash >>> (64 - Integer.numberOfTrailingZeros(stripes)));
        int leaseStripe = reads.leaseStripe(readStripe);
        assertThat(leaseStripe).isBetween(0, LifecycleEntry.STRIPES - 1);
        if (stripes >= LifecycleEntry.STRIPES) {
          assertThat(leaseStripe).isEqualTo(LifecycleEntry.stripeOf(thread));
        }
      }
    }
  }
}
