package dev.modelkeeper.server.memory;

import dev.modelkeeper.onnx.memory.MemoryCost;
import dev.modelkeeper.onnx.memory.MemoryCosts;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the server knows of each model's memory, by resolved identifier: its measured cost (an alias
 * answers for its target). Thread-safe.
 */
public final class ModelMemory {

  private final MemoryCosts costs;
  private final Supplier<Map<String, String>> aliases;

  /**
   * @param aliases the alias table now, alias to target identifier
   */
  public ModelMemory(MemoryCosts costs, Supplier<Map<String, String>> aliases) {
    this.costs = costs;
    this.aliases = aliases;
  }

  /** The measured cost of the model {@code resolvedId} names, when it was measured here. */
  public Optional<MemoryCost> measured(String resolvedId) {
    String target = aliases.get().getOrDefault(resolvedId, resolvedId);
    return costs.known(target).filter(MemoryCost::measured);
  }
}
