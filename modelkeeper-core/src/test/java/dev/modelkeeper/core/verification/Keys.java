package dev.modelkeeper.core.verification;

import dev.modelkeeper.core.ModelKeeperException;
import dev.modelkeeper.core.ModelLoadException;

/**
 * The small key space of the model-checking scenarios. A key is a request: the model ID the caller
 * names and the alias it may give. Key 0 asks for {@code a}; key 1 asks for {@code a} under the
 * alias {@code x}, so it resolves to a second identifier whose factory still receives {@code a};
 * key 2 names a third identifier, {@code b}, whose behaviour each scenario scripts (a constructor
 * that always fails, or a first {@code clearCache()} that fails). Stateless.
 */
final class Keys {

  static final String CONF = "0:2";
  static final String A = "a";
  static final String X = "x";
  static final String B = "b";

  private Keys() {}

  /** The model ID the caller passes. */
  static String requested(int key) {
    return key == 2 ? B : A;
  }

  /** The alias the caller passes, or null. */
  static String alias(int key) {
    return key == 1 ? X : null;
  }

  /** The identifier the model is registered, locked and leased under. */
  static String resolved(int key) {
    return key == 0 ? A : key == 1 ? X : B;
  }

  /**
   * A comparable outcome for a failure: the exception families the contract names collapse to one
   * word (a back-off refusal is a load failure too); anything else keeps its full text, which no
   * sequential model returns, so an unexpected exception fails the check.
   */
  static String outcome(RuntimeException e) {
    if (e instanceof ModelLoadException) {
      return "load failed";
    }
    if (e instanceof ModelKeeperException) {
      return e.getClass().getSimpleName();
    }
    return "unexpected " + e;
  }
}
