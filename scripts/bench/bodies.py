#!/usr/bin/env python3
"""Prepared request bodies for the load tools, shaped by a model's metadata.

    bodies.py URL MODEL[/VERSION] ROWS OUTDIR

reads GET URL/v2/models/MODEL[/versions/VERSION] and writes, for ROWS rows (the first variable dimension of each
input; any other variable one takes 1) of pseudo-random values:

    OUTDIR/MODEL[-vVERSION]-ROWS.json        JSON REST body (Open Inference Protocol)
    OUTDIR/MODEL-ROWS.bin         REST body with the binary tensor extension (outputs binary too)
    OUTDIR/MODEL-ROWS.bin.hlen    its Inference-Header-Content-Length
    OUTDIR/MODEL-ROWS.grpc        a serialized inference.ModelInferRequest (raw_input_contents),
                                  for ghz --binary-file

and prints the three paths and the header length. Floating-point inputs hold values in [0, 1) at
full precision, other numbers zero, strings "x". Standard library only.
"""
import json
import random
import struct
import sys
import urllib.request

FORMATS = {"FP16": "e", "FP32": "f", "FP64": "d", "INT8": "b", "INT16": "h", "INT32": "i",
           "INT64": "q", "UINT8": "B", "UINT16": "H", "UINT32": "I", "UINT64": "Q", "BOOL": "?"}


def values(datatype, count, rng):
    if datatype.startswith("FP"):
        # at the precision the type holds, as a client would print them (FP32: 9 digits)
        digits = {"FP16": 5, "FP32": 9}.get(datatype, 17)
        return [float("%.*g" % (digits, rng.random())) for _ in range(count)]
    if datatype == "BOOL":
        return [False] * count
    if datatype == "BYTES":
        return ["x"] * count
    return [0] * count


def raw(datatype, data):
    if datatype == "BYTES":
        return b"".join(struct.pack("<I", len(s)) + s.encode() for s in data)
    return struct.pack("<%d%s" % (len(data), FORMATS[datatype]), *data)


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field (strings, bytes, messages, packed numbers)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def grpc_request(model, tensors):
    msg = field(1, model.encode())
    for name, datatype, shape, _ in tensors:
        tensor = field(1, name.encode()) + field(2, datatype.encode())
        tensor += field(3, b"".join(varint(d) for d in shape))
        msg += field(5, tensor)
    for *_, data in tensors:
        msg += field(7, data)
    return msg


def main(url, model, rows, outdir):
    rows = int(rows)
    model, _, version = model.partition("/")
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "")
    meta = json.load(urllib.request.urlopen(url + path, timeout=120))
    rng = random.Random(model)
    tensors, json_inputs, bin_inputs = [], [], []
    for spec in meta["inputs"]:
        shape, batched = [], False
        for d in spec["shape"]:
            if d < 0:
                d, batched = (1 if batched else rows), True
            shape.append(d)
        count = 1
        for d in shape:
            count *= d
        data = values(spec["datatype"], count, rng)
        blob = raw(spec["datatype"], data)
        tensors.append((spec["name"], spec["datatype"], shape, blob))
        base = {"name": spec["name"], "datatype": spec["datatype"], "shape": shape}
        json_inputs.append(dict(base, data=data))
        bin_inputs.append(dict(base, parameters={"binary_data_size": len(blob)}))
    stem = f"{outdir}/{model}{'-v' + version if version else ''}-{rows}"
    with open(stem + ".json", "w") as f:
        json.dump({"inputs": json_inputs}, f, separators=(",", ":"))
    header = json.dumps({"inputs": bin_inputs, "parameters": {"binary_data_output": True}},
                        separators=(",", ":")).encode()
    with open(stem + ".bin", "wb") as f:
        f.write(header + b"".join(t[3] for t in tensors))
    with open(stem + ".bin.hlen", "w") as f:
        f.write(str(len(header)))
    with open(stem + ".grpc", "wb") as f:
        f.write(grpc_request(model, tensors))
    return stem, len(header)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    stem, header_length = main(*sys.argv[1:])
    print(stem + ".json", stem + ".bin", stem + ".grpc", header_length)
