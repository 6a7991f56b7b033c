package dev.modelkeeper.server.config;

import java.time.Duration;
import java.util.List;

/** The range checks of the settings records, each naming its setting. Stateless. */
final class Check {

  private Check() {}

  static void atLeast(String setting, long value, long least) {
    if (value < least) {
      throw new InvalidConfigException(setting, "must be at least " + least + ", was " + value);
    }
  }

  static void between(String setting, int value, int least, int most) {
    if (value < least || value > most) {
      throw new InvalidConfigException(
          setting, "must be between " + least + " and " + most + ", was " + value);
    }
  }

  static void positive(String setting, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new InvalidConfigException(setting, "must be a positive duration, was " + d);
    }
  }

  static void notNegative(String setting, Duration d) {
    if (d == null || d.isNegative()) {
      throw new InvalidConfigException(setting, "must not be negative, was " + d);
    }
  }

  static void notEmpty(String setting, String value) {
    if (value == null || value.isBlank()) {
      throw new InvalidConfigException(setting, "must not be empty");
    }
  }

  static void notBlank(String setting, List<String> values, String what) {
    for (String v : values) {
      if (v == null || v.isBlank()) {
        throw new InvalidConfigException(setting, "contains an empty " + what);
      }
    }
  }
}
