package dev.modelkeeper.cli.readme;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Runs the subset of shell and curl the README uses, exactly as a shell would read it: single- and
 * double-quoted words, backslash line continuations, {@code curl -s [-X METHOD] [-H 'K: V'] [-d
 * DATA] URL}, and an optional {@code | grep -E 'REGEX'} filter. Anything else is refused, so the
 * README cannot drift into commands this runner does not understand. Immutable and thread-safe.
 */
public final class CurlCommand {

  private final String method;
  private final String url;
  private final Map<String, String> headers;
  private final String data;
  private final Pattern grep;

  private CurlCommand(
      String method, String url, Map<String, String> headers, String data, Pattern grep) {
    this.method = method;
    this.url = url;
    this.headers = headers;
    this.data = data;
    this.grep = grep;
  }

  /** Reads a command; {@code host} replaces the README's {@code localhost:8000}. */
  public static CurlCommand parse(String command, String host) {
    List<String> words = words(command);
    int pipe = words.indexOf("|");
    List<String> curl = pipe < 0 ? words : words.subList(0, pipe);
    Pattern grep = null;
    if (pipe >= 0) {
      List<String> filter = words.subList(pipe + 1, words.size());
      if (filter.size() != 3 || !filter.get(0).equals("grep") || !filter.get(1).equals("-E")) {
        throw new IllegalArgumentException("only '| grep -E REGEX' is supported: " + command);
      }
      grep = Pattern.compile(filter.get(2));
    }
    if (curl.isEmpty() || !curl.get(0).equals("curl")) {
      throw new IllegalArgumentException("not a curl command: " + command);
    }
    String method = null;
    String url = null;
    String data = null;
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < curl.size(); i++) {
      String w = curl.get(i);
      switch (w) {
        case "-s":
          break;
        case "-X":
          method = curl.get(++i);
          break;
        case "-H":
          String h = curl.get(++i);
          int colon = h.indexOf(':');
          headers.put(h.substring(0, colon).trim(), h.substring(colon + 1).trim());
          break;
        case "-d":
          data = curl.get(++i);
          break;
        default:
          if (w.startsWith("-") || url != null) {
            throw new IllegalArgumentException("unsupported curl word '" + w + "' in: " + command);
          }
          url = w;
      }
    }
    if (url == null) {
      throw new IllegalArgumentException("no URL in: " + command);
    }
    if (!url.startsWith("localhost:8000/")) {
      throw new IllegalArgumentException("examples must address localhost:8000: " + command);
    }
    url = "http://" + host + url.substring("localhost:8000".length());
    if (data != null) {
      headers.putIfAbsent("Content-Type", "application/x-www-form-urlencoded");
    }
    if (method == null) {
      method = data != null ? "POST" : "GET";
    }
    return new CurlCommand(method, url, headers, data, grep);
  }

  /** Sends the request and returns what the shell would print (the body, filtered by grep). */
  public String run(HttpClient client) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60));
    headers.forEach(b::header);
    b.method(
        method,
        data == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(data, StandardCharsets.UTF_8));
    String body = client.send(b.build(), HttpResponse.BodyHandlers.ofString()).body();
    if (grep == null) {
      return body;
    }
    return body.lines().filter(l -> grep.matcher(l).find()).collect(Collectors.joining("\n"));
  }

  /** Splits a command into shell words, with quotes removed and line continuations joined. */
  static List<String> words(String command) {
    List<String> out = new ArrayList<>();
    StringBuilder word = null;
    char quote = 0;
    for (int i = 0; i < command.length(); i++) {
      char c = command.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else if (quote == '"' && c == '\\' && i + 1 < command.length()) {
          word.append(command.charAt(++i));
        } else {
          word.append(c);
        }
      } else if (c == '\\' && i + 1 < command.length() && command.charAt(i + 1) == '\n') {
        i++;
      } else if (c == '\'' || c == '"') {
        quote = c;
        word = word == null ? new StringBuilder() : word;
      } else if (Character.isWhitespace(c)) {
        if (word != null) {
          out.add(word.toString());
          word = null;
        }
      } else if (c == '|') {
        if (word != null) {
          out.add(word.toString());
          word = null;
        }
        out.add("|");
      } else {
        word = word == null ? new StringBuilder() : word;
        word.append(c);
      }
    }
    if (quote != 0) {
      throw new IllegalArgumentException("unclosed quote in: " + command);
    }
    if (word != null) {
      out.add(word.toString());
    }
    return out;
  }
}
