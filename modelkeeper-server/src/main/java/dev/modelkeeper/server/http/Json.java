package dev.modelkeeper.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelkeeper.server.errors.BadRequestException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Locale;

/**
 * The server's JSON codec: one configured {@link ObjectMapper} with bounded nesting and number
 * lengths, reading request bodies into trees and writing responses. Thread-safe.
 */
public final class Json {

  /** Deeper than any tensor a model takes; protects the parser's stack. */
  static final int MAX_NESTING = 64;

  private final ObjectMapper mapper;

  public Json() {
    JsonFactory factory =
        JsonFactory.builder()
            .streamReadConstraints(
                StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_NESTING)
                    .maxNumberLength(400)
                    .build())
            .enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER)
            // NaN, Infinity and -Infinity, as Python's json module and tritonclient write them
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .build();
    this.mapper =
        new ObjectMapper(factory)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  }

  /**
   * Parses a request body.
   *
   * @throws BadRequestException when the body is empty or not valid JSON
   */
  public JsonNode read(byte[] body) {
    return read(body, 0, body == null ? 0 : body.length);
  }

  /** As {@link #read(byte[])} for the {@code length} bytes of {@code body} from {@code offset}. */
  public JsonNode read(byte[] body, int offset, int length) {
    if (body == null || length == 0) {
      throw new BadRequestException("request body is empty; expected a JSON object");
    }
    try {
      JsonNode node = mapper.readTree(body, offset, length);
      if (node == null || node.isMissingNode()) {
        throw new BadRequestException("request body is empty; expected a JSON object");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new BadRequestException(describe(e));
    } catch (IOException e) {
      throw new BadRequestException("cannot read the request body", e);
    }
  }

  /** A streaming parser over {@code body}, with the same limits as {@link #read}. */
  public JsonParser parser(InputStream body) throws IOException {
    return mapper.getFactory().createParser(body);
  }

  /**
   * What is wrong with a document, for a client: the parser's own words and where, without the
   * names of library classes or options that some of its messages carry.
   */
  public static String describe(JsonProcessingException e) {
    String m = e.getOriginalMessage() == null ? "unreadable input" : e.getOriginalMessage();
    // a location inside the message ("start marker at [Source: ...; line: 1, column: 1]")
    m = m.replaceAll("\\[Source: [^;\\]]*; (line: \\d+, column: \\d+)]", "$1");
    int tick = m.indexOf('`');
    if (tick >= 0) {
      m = m.substring(0, tick).replaceAll("[\\s(,:;]*(enable|from|bound as)?[\\s(,:;]*$", "");
      long open = m.chars().filter(c -> c == '(').count();
      long close = m.chars().filter(c -> c == ')').count();
      if (open > close) {
        m = m + ")";
      }
    }
    if (m.length() > 200) {
      m = m.substring(0, 200) + "...";
    }
    JsonLocation where = e.getLocation();
    return where == null || where.getLineNr() < 0
        ? "malformed JSON: " + m
        : "malformed JSON at line "
            + where.getLineNr()
            + ", column "
            + where.getColumnNr()
            + ": "
            + m;
  }

  /** Parses a body that may be empty (an empty body reads as an empty object). */
  public JsonNode readOptional(byte[] body) {
    if (body == null) {
      return mapper.createObjectNode();
    }
    for (byte b : body) {
      if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
        return read(body);
      }
    }
    return mapper.createObjectNode();
  }

  /**
   * Checks that a JSON endpoint's body may be JSON: {@code application/json} (any parameters), no
   * content type at all, or {@code application/x-www-form-urlencoded}, which is what {@code curl
   * -d} sends when not told otherwise.
   *
   * @throws UnsupportedMediaTypeException for any other type
   */
  public static void checkContentType(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return;
    }
    String type = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    if (!type.equals("application/json") && !type.equals("application/x-www-form-urlencoded")) {
      throw new UnsupportedMediaTypeException(
          "Content-Type '" + contentType + "' is not accepted here; send application/json");
    }
  }

  public ObjectNode object() {
    return mapper.createObjectNode();
  }

  public byte[] write(JsonNode node) {
    try {
      return mapper.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  byte[] error(String message) {
    ObjectNode n = mapper.createObjectNode();
    n.put("error", message);
    return write(n);
  }

  /** Streams a document with {@code writer}; for large tensor responses. */
  public byte[] stream(GeneratorBody writer) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    try (JsonGenerator g = mapper.getFactory().createGenerator(out)) {
      writer.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** Writes one document to a generator; called once, on the thread that encodes. */
  @FunctionalInterface
  public interface GeneratorBody {
    void write(JsonGenerator g) throws IOException;
  }
}
