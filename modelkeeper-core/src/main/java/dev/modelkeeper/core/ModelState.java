package dev.modelkeeper.core;

/** Where one resolved identifier stands in its lifecycle. */
public enum ModelState {
  /** The constructor is running. */
  LOADING,
  /** Resident and leasable. */
  READY,
  /** A removal waits for open leases to close; no new leases are granted. */
  DRAINING,
  /** {@code clearCache()} is running; the model still counts against budgets. */
  UNLOADING
}
