package dev.modelkeeper.core;

/**
 * A claim on a resident model: while it is open, the model is neither evicted nor cleared. A lease
 * belongs to the thread or request that took it; {@link #close()} may run on any thread and is
 * idempotent.
 */
public interface ModelLease extends AutoCloseable {

  Model model();

  /** The resolved identifier: the alias when one was given, else the model ID. */
  String modelId();

  @Override
  void close();
}
