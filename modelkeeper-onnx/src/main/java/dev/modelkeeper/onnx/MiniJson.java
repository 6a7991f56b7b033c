package dev.modelkeeper.onnx;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict, small JSON reader for the repository's config files: objects become {@link
 * LinkedHashMap}, arrays {@link ArrayList}, numbers {@link Long} when integral else {@link Double}.
 * Stateless and thread-safe.
 */
final class MiniJson {

  private static final int MAX_DEPTH = 32;

  private final String text;
  private int pos;

  private MiniJson(String text) {
    this.text = text;
  }

  /** Parses one JSON value that fills the whole text. */
  static Object parse(String text) {
    MiniJson p = new MiniJson(text);
    p.skipSpace();
    Object value = p.value(0);
    p.skipSpace();
    if (p.pos != text.length()) {
      throw p.error("unexpected text after the value");
    }
    return value;
  }

  /** {@code s} as a JSON string literal. */
  static String quote(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        case '\n':
          sb.append("\\n");
          break;
        case '\r':
          sb.append("\\r");
          break;
        case '\t':
          sb.append("\\t");
          break;
        default:
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    return sb.append('"').toString();
  }

  private Object value(int depth) {
    if (depth > MAX_DEPTH) {
      throw error("nested too deeply");
    }
    if (pos >= text.length()) {
      throw error("unexpected end of text");
    }
    char c = text.charAt(pos);
    switch (c) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          return number();
        }
        throw error("unexpected character '" + c + "'");
    }
  }

  private Map<String, Object> object(int depth) {
    Map<String, Object> map = new LinkedHashMap<>();
    pos++; // '{'
    skipSpace();
    if (peek() == '}') {
      pos++;
      return map;
    }
    while (true) {
      skipSpace();
      if (peek() != '"') {
        throw error("expected a string key");
      }
      String key = string();
      skipSpace();
      expect(':');
      skipSpace();
      if (map.containsKey(key)) {
        throw error("duplicate key \"" + key + "\"");
      }
      map.put(key, value(depth + 1));
      skipSpace();
      char c = next();
      if (c == '}') {
        return map;
      }
      if (c != ',') {
        throw error("expected ',' or '}'");
      }
    }
  }

  private List<Object> array(int depth) {
    List<Object> list = new ArrayList<>();
    pos++; // '['
    skipSpace();
    if (peek() == ']') {
      pos++;
      return list;
    }
    while (true) {
      skipSpace();
      list.add(value(depth + 1));
      skipSpace();
      char c = next();
      if (c == ']') {
        return list;
      }
      if (c != ',') {
        throw error("expected ',' or ']'");
      }
    }
  }

  private String string() {
    pos++; // opening quote
    StringBuilder sb = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') {
        return sb.toString();
      }
      if (c < 0x20) {
        throw error("control character in string");
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      char e = next();
      switch (e) {
        case '"':
        case '\\':
        case '/':
          sb.append(e);
          break;
        case 'b':
          sb.append('\b');
          break;
        case 'f':
          sb.append('\f');
          break;
        case 'n':
          sb.append('\n');
          break;
        case 'r':
          sb.append('\r');
          break;
        case 't':
          sb.append('\t');
          break;
        case 'u':
          if (pos + 4 > text.length()) {
            throw error("truncated \\u escape");
          }
          try {
            sb.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
          } catch (NumberFormatException ex) {
            throw error("bad \\u escape");
          }
          pos += 4;
          break;
        default:
          throw error("bad escape '\\" + e + "'");
      }
    }
  }

  private Object number() {
    int start = pos;
    if (peek() == '-') {
      pos++;
    }
    boolean integral = true;
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c >= '0' && c <= '9') {
        pos++;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        integral = false;
        pos++;
      } else {
        break;
      }
    }
    String s = text.substring(start, pos);
    try {
      return integral ? (Object) Long.parseLong(s) : (Object) Double.parseDouble(s);
    } catch (NumberFormatException e) {
      throw error("bad number '" + s + "'");
    }
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, pos)) {
      throw error("unexpected text");
    }
    pos += word.length();
    return value;
  }

  private void skipSpace() {
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        pos++;
      } else {
        break;
      }
    }
  }

  private char peek() {
    return pos < text.length() ? text.charAt(pos) : '\0';
  }

  private char next() {
    if (pos >= text.length()) {
      throw error("unexpected end of text");
    }
    return text.charAt(pos++);
  }

  private void expect(char c) {
    if (next() != c) {
      pos--;
      throw error("expected '" + c + "'");
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("invalid JSON at offset " + pos + ": " + what);
  }
}
