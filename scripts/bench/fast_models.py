"""Writes the two models the fast-path scripts serve, as a Triton model repository:

  simple    Triton's "simple" example: INPUT0 and INPUT1 INT32 [16], OUTPUT0 their sum and OUTPUT1
            their difference, max_batch_size 8
  identity  one FP32 [-1] input echoed, max_batch_size 0 (perf_analyzer gives it a shape)

The ONNX files are written with a few lines of protobuf encoding (no onnx package needed).

    python3 fast_models.py REPOSITORY_DIR
"""
import os
import sys

INT32, FLOAT = 6, 1  # ONNX TensorProto element types


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, value):
    """A protobuf field: an int as a varint, bytes or str length-delimited."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


def value_info(name, elem_type, dims):
    shape = b"".join(
        field(1, field(2, d) if isinstance(d, str) else field(1, d)) for d in dims)
    tensor_type = field(1, elem_type) + field(2, shape)
    return field(1, name) + field(2, field(1, tensor_type))


def node(op, inputs, outputs):
    return b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs) + field(4, op)


def model(name, nodes, inputs, outputs):
    graph = (b"".join(field(1, n) for n in nodes) + field(2, name)
             + b"".join(field(11, i) for i in inputs) + b"".join(field(12, o) for o in outputs))
    opset = field(1, "") + field(2, 13)
    return field(1, 8) + field(8, opset) + field(7, graph)  # IR version 8, opset 13


def write(root, name, onnx, config):
    os.makedirs(os.path.join(root, name, "1"), exist_ok=True)
    with open(os.path.join(root, name, "1", "model.onnx"), "wb") as f:
        f.write(onnx)
    with open(os.path.join(root, name, "config.pbtxt"), "w") as f:
        f.write(config)


def main(root):
    batch = ["batch", 16]
    write(root, "simple", model(
        "simple",
        [node("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]), node("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
        [value_info("INPUT0", INT32, batch), value_info("INPUT1", INT32, batch)],
        [value_info("OUTPUT0", INT32, batch), value_info("OUTPUT1", INT32, batch)]),
        'name: "simple"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n'
        'input [\n  { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] },\n'
        '  { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }\n]\n'
        'output [\n  { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 16 ] },\n'
        '  { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 16 ] }\n]\n')
    write(root, "identity", model(
        "identity",
        [node("Identity", ["INPUT0"], ["OUTPUT0"])],
        [value_info("INPUT0", FLOAT, ["n"])],
        [value_info("OUTPUT0", FLOAT, ["n"])]),
        'name: "identity"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n'
        'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n'
        'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]\n')


if __name__ == "__main__":
    main(sys.argv[1])
