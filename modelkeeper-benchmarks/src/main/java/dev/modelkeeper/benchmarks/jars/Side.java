package dev.modelkeeper.benchmarks.jars;

import java.util.List;

/** Which of the two jars compared a run belongs to. Immutable and thread-safe. */
enum Side {
  BEFORE("before"),
  AFTER("after");

  private final String label;

  Side(String label) {
    this.label = label;
  }

  /** How the report and the log name this side, as the option that selects its jar does. */
  String label() {
    return label;
  }

  /**
   * The order the jars run in during round {@code round} (counted from 1): before then after in odd
   * rounds, after then before in even ones, so neither jar always runs on the machine as the other
   * left it.
   */
  static List<Side> order(int round) {
    return round % 2 == 1 ? List.of(BEFORE, AFTER) : List.of(AFTER, BEFORE);
  }
}
