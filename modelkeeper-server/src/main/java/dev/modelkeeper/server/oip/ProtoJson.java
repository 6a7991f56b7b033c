package dev.modelkeeper.server.oip;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.MapEntry;
import com.google.protobuf.Message;
import java.math.BigInteger;
import java.util.List;

/**
 * A protobuf message as the JSON Triton answers for it over HTTP: proto field names, enums by name,
 * 64-bit integers as numbers (not strings, as protobuf's own JSON mapping writes them), every
 * scalar and list field present with its default, message fields only when set. Stateless.
 */
final class ProtoJson {

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private ProtoJson() {}

  static ObjectNode object(Message m) {
    ObjectNode out = NODES.objectNode();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (f.isMapField()) {
        ObjectNode map = out.putObject(f.getName());
        for (Object entry : (List<?>) m.getField(f)) {
          MapEntry<?, ?> e = (MapEntry<?, ?>) entry;
          FieldDescriptor valueField = e.getDescriptorForType().findFieldByNumber(2);
          map.set(String.valueOf(e.getKey()), value(valueField, e.getValue()));
        }
      } else if (f.isRepeated()) {
        ArrayNode list = out.putArray(f.getName());
        for (Object v : (List<?>) m.getField(f)) {
          list.add(value(f, v));
        }
      } else if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE
          || f.getRealContainingOneof() != null) {
        if (m.hasField(f)) {
          out.set(f.getName(), value(f, m.getField(f)));
        }
      } else {
        out.set(f.getName(), value(f, m.getField(f)));
      }
    }
    return out;
  }

  private static JsonNode value(FieldDescriptor f, Object v) {
    switch (f.getJavaType()) {
      case MESSAGE:
        return object((Message) v);
      case ENUM:
        return NODES.textNode(((EnumValueDescriptor) v).getName());
      case INT:
        if (f.getType() == FieldDescriptor.Type.UINT32
            || f.getType() == FieldDescriptor.Type.FIXED32) {
          return NODES.numberNode(Integer.toUnsignedLong((Integer) v));
        }
        return NODES.numberNode((Integer) v);
      case LONG:
        if (f.getType() == FieldDescriptor.Type.UINT64
            || f.getType() == FieldDescriptor.Type.FIXED64) {
          return NODES.numberNode(new BigInteger(Long.toUnsignedString((Long) v)));
        }
        return NODES.numberNode((Long) v);
      case FLOAT:
        return NODES.numberNode((Float) v);
      case DOUBLE:
        return NODES.numberNode((Double) v);
      case BOOLEAN:
        return NODES.booleanNode((Boolean) v);
      case BYTE_STRING:
        return NODES.binaryNode(((ByteString) v).toByteArray());
      default:
        return NODES.textNode(String.valueOf(v));
    }
  }
}
