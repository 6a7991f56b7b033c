package dev.modelkeeper.benchmarks;

import java.util.List;
import java.util.Optional;

/**
 * Every figure of one run, and how it was run. Immutable once built; safe to share.
 *
 * @param hot hot-path JMH figures (may be empty when that part was not run)
 * @param stampede stampede rounds, in run order
 * @param parallel parallel-load rounds, in run order
 * @param churn churn results, in run order
 * @param settings the workload settings, for the report's method section
 * @param background per part of the run, the share of the CPUs other processes used meanwhile
 */
record Results(
    List<HotPath.Figure> hot,
    List<ColdLoads.Round> stampede,
    List<ColdLoads.Round> parallel,
    List<Churn.Result> churn,
    Settings settings,
    java.util.Map<String, Double> background) {

  Results {
    hot = List.copyOf(hot);
    stampede = List.copyOf(stampede);
    parallel = List.copyOf(parallel);
    churn = List.copyOf(churn);
    background = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(background));
  }

  Optional<HotPath.Figure> hot(String impl, String keys, int threads) {
    return hot.stream()
        .filter(f -> f.impl().equals(impl) && f.keys().equals(keys) && f.threads() == threads)
        .findFirst();
  }

  Optional<Churn.Result> churn(String design, int threads) {
    return churn.stream()
        .filter(r -> r.design().equals(design) && r.threads() == threads)
        .findFirst();
  }

  List<ColdLoads.Round> stampede(String design) {
    return stampede.stream().filter(r -> r.design().equals(design)).toList();
  }

  List<ColdLoads.Round> parallel(String design) {
    return parallel.stream().filter(r -> r.design().equals(design)).toList();
  }
}
