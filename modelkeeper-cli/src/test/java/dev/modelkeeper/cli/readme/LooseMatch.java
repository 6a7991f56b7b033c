package dev.modelkeeper.cli.readme;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Compares an actual answer with the one the README shows, strictly where the answer is
 * deterministic and loosely where it varies: the same JSON structure and keys, equal strings,
 * integers and booleans, floating-point numbers within 1e-3, any value for timings, sizes, memory
 * figures and error texts; metrics lines with the same names, labels and values. Stateless and
 * thread-safe.
 */
public final class LooseMatch {

  /** Keys whose values change between runs or machines: only their type is compared. */
  private static final Set<String> VARYING =
      Set.of(
          "load_seconds",
          "size_bytes",
          "resident_bytes",
          "error",
          "description",
          "charged_bytes",
          "measured_bytes",
          "measured_load_peak_bytes",
          "measured_working_bytes",
          "measured_working_rows",
          "max_bytes",
          "memory");

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private LooseMatch() {}

  /** The differences between {@code shown} and {@code actual}; empty when they match. */
  public static List<String> differences(String language, String shown, String actual) {
    List<String> out = new ArrayList<>();
    if (language.equals("json")) {
      try {
        compare("$", null, MAPPER.readTree(shown), MAPPER.readTree(actual), out);
      } catch (IOException e) {
        out.add("not JSON: " + e.getMessage());
      }
    } else {
      List<String> want = shown.strip().lines().toList();
      List<String> got = actual.strip().lines().toList();
      if (!want.equals(got)) {
        out.add("lines differ: shown " + want + " but got " + got);
      }
    }
    return out;
  }

  private static void compare(
      String path, String key, JsonNode want, JsonNode got, List<String> out) {
    if (got == null) {
      out.add(path + ": missing");
      return;
    }
    if (want.getNodeType() != got.getNodeType()) {
      out.add(path + ": shown " + want.getNodeType() + " but got " + got);
      return;
    }
    if (key != null && VARYING.contains(key)) {
      return;
    }
    if (want.isObject()) {
      Set<String> wantKeys = names(want);
      Set<String> gotKeys = names(got);
      if (!wantKeys.equals(gotKeys)) {
        out.add(path + ": keys shown " + wantKeys + " but got " + gotKeys);
      }
      for (String k : wantKeys) {
        compare(path + "." + k, k, want.get(k), got.get(k), out);
      }
    } else if (want.isArray()) {
      if (want.size() != got.size()) {
        out.add(path + ": shown " + want.size() + " elements but got " + got.size() + ": " + got);
        return;
      }
      for (int i = 0; i < want.size(); i++) {
        compare(path + "[" + i + "]", key, want.get(i), got.get(i), out);
      }
    } else if (want.isNumber() && (want.isFloatingPointNumber() || got.isFloatingPointNumber())) {
      if (Math.abs(want.doubleValue() - got.doubleValue()) > 1e-3) {
        out.add(path + ": shown " + want + " but got " + got);
      }
    } else if (!want.equals(got)) {
      out.add(path + ": shown " + want + " but got " + got);
    }
  }

  private static Set<String> names(JsonNode object) {
    Set<String> names = new TreeSet<>();
    for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
      names.add(it.next());
    }
    return names;
  }
}
