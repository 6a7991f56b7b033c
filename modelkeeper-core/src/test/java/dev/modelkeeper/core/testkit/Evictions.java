package dev.modelkeeper.core.testkit;

import dev.modelkeeper.core.ModelManager;
import dev.modelkeeper.core.RemovalCause;
import dev.modelkeeper.core.ResidencyPolicy;
import dev.modelkeeper.core.Residents;

/** The eviction handle of a manager, as a budget gets it, for tests that evict by hand. */
public final class Evictions {

  private Evictions() {}

  /** Attaches a policy that admits everything and returns the manager's {@link Residents}. */
  public static Residents of(ModelManager manager) {
    return manager.attachPolicy(
        new ResidencyPolicy() {
          @Override
          public void admit(String resolvedId, long predictedBytes) {}

          @Override
          public void loaded(String resolvedId, long sizeBytes) {}

          @Override
          public void loadFailed(String resolvedId) {}

          @Override
          public void removed(String resolvedId, RemovalCause cause) {}

          @Override
          public void idle(String resolvedId) {}
        });
  }
}
