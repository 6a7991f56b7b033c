package dev.modelkeeper.scaleout;

import java.util.List;
import java.util.SplittableRandom;

/** Picks the model of the next request. Implementations are stateless and thread-safe. */
@FunctionalInterface
public interface Workload {

  /** The model to ask for next, drawn with {@code random} (one per client thread). */
  String next(SplittableRandom random);

  /** Every model equally often. */
  static Workload even(List<String> models) {
    List<String> m = List.copyOf(models);
    return r -> m.get(r.nextInt(m.size()));
  }

  /** {@code hot} for {@code hotShare} of the requests, the others evenly for the rest. */
  static Workload hot(List<String> models, String hot, double hotShare) {
    List<String> others = models.stream().filter(m -> !m.equals(hot)).toList();
    return r -> r.nextDouble() < hotShare ? hot : others.get(r.nextInt(others.size()));
  }
}
