"""The ONNX backend node tests, as shipped in the `onnx` wheel, made into a model repository.

`prepare(repository, manifest)` copies every node test's model into `repository` as
`<name>/1/model.onnx` and runs it once on Python ONNX Runtime (the server's version), writing
`manifest` (JSON): per test, the model name in the repository, whether every input and output is a
tensor, and whether Python ONNX Runtime passes it (its outputs match the expected ones within the
test's tolerance). The conformance test (`test_onnx_backend.py`) sends the same inputs to the
server and holds it to what Python ONNX Runtime did.

Run by hand: `python onnx_backend.py <repository> <manifest>`.
"""
import glob
import hashlib
import json
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

NODE_TESTS = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
RTOL = 1e-3  # the onnx test runner's defaults; a test's data.json may set its own
ATOL = 1e-7
MAX_NAME = 64  # the longest model name the server takes


def model_name(test):
    """The repository name of a test: its own, or a shortened one with a digest when too long."""
    if len(test) <= MAX_NAME:
        return test
    digest = hashlib.sha256(test.encode()).hexdigest()[:8]
    return test[: MAX_NAME - 9] + "-" + digest


def value_kind(type_proto):
    """'tensor', or the ONNX type of a non-tensor value (sequence, optional, map, sparse)."""
    return type_proto.WhichOneof("value")


def load_value(path, type_proto):
    """A test data file: a numpy array for a tensor, else None (the server takes tensors only)."""
    if value_kind(type_proto) != "tensor_type":
        return None
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def data_sets(test_dir, model):
    """Each test data set of a test: (inputs by name, expected outputs by name), in order."""
    out = []
    for set_dir in sorted(glob.glob(os.path.join(test_dir, "test_data_set_*"))):
        inputs = {}
        for i in range(len(glob.glob(os.path.join(set_dir, "input_*.pb")))):
            graph_input = model.graph.input[i]
            inputs[graph_input.name] = load_value(
                os.path.join(set_dir, f"input_{i}.pb"), graph_input.type
            )
        expected = {}
        for i in range(len(glob.glob(os.path.join(set_dir, "output_*.pb")))):
            graph_output = model.graph.output[i]
            expected[graph_output.name] = load_value(
                os.path.join(set_dir, f"output_{i}.pb"), graph_output.type
            )
        out.append((inputs, expected))
    return out


def tolerances(test_dir):
    rtol, atol = RTOL, ATOL
    data = os.path.join(test_dir, "data.json")
    if os.path.exists(data):
        with open(data) as f:
            d = json.load(f)
        rtol, atol = d.get("rtol", rtol), d.get("atol", atol)
    return rtol, atol


def mismatch(expected, actual, rtol, atol):
    """Why `actual` is not `expected` (None when it is): exact for integers, bools and bytes."""
    if expected is None:
        return None
    actual = np.asarray(actual)
    if expected.shape != actual.shape:
        return f"shape {list(actual.shape)}, expected {list(expected.shape)}"
    if expected.dtype == object or expected.dtype.kind in "biuSU":
        if expected.dtype == object or expected.dtype.kind in "SU":
            want = [as_bytes(e) for e in expected.ravel().tolist()]
            got = [as_bytes(a) for a in actual.ravel().tolist()]
            return None if want == got else f"values {got[:8]}, expected {want[:8]}"
        if expected.dtype != actual.dtype:
            return f"dtype {actual.dtype}, expected {expected.dtype}"
        return None if np.array_equal(expected, actual) else "integer values differ"
    if expected.dtype != actual.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    try:
        np.testing.assert_allclose(
            actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol
        )
    except AssertionError as e:
        return str(e).strip().splitlines()[-1][:200]
    return None


def as_bytes(element):
    """A BYTES element as bytes: numpy holds some as str (UTF-8 text)."""
    return element.encode() if isinstance(element, str) else element


def reference(model_file, sets, rtol, atol):
    """None when Python ONNX Runtime passes the test, else why not."""
    try:
        session = ort.InferenceSession(model_file, providers=["CPUExecutionProvider"])
        for inputs, expected in sets:
            names = list(expected)
            results = session.run(names, inputs)
            for name, got in zip(names, results):
                why = mismatch(expected[name], got, rtol, atol)
                if why is not None:
                    return f"output '{name}': {why}"
    except Exception as e:  # noqa: BLE001 - any failure of the reference means "ORT fails"
        return (type(e).__name__ + ": " + str(e)).splitlines()[0][:300]
    return None


def prepare(repository, manifest):
    os.makedirs(repository, exist_ok=True)
    tests = []
    for test in sorted(os.listdir(NODE_TESTS)):
        test_dir = os.path.join(NODE_TESTS, test)
        model_file = os.path.join(test_dir, "model.onnx")
        if not os.path.isfile(model_file):
            continue
        model = onnx.load(model_file, load_external_data=False)
        kinds = [value_kind(v.type) for v in list(model.graph.input) + list(model.graph.output)]
        tensors_only = all(k == "tensor_type" for k in kinds)
        rtol, atol = tolerances(test_dir)
        sets = data_sets(test_dir, model) if tensors_only else []
        ort_failure = reference(model_file, sets, rtol, atol) if tensors_only else "non-tensor"
        name = model_name(test)
        target = os.path.join(repository, name, "1")
        os.makedirs(target, exist_ok=True)
        shutil.copyfile(model_file, os.path.join(target, "model.onnx"))
        tests.append(
            {
                "test": test,
                "model": name,
                "tensors_only": tensors_only,
                "non_tensor": sorted({k for k in kinds if k != "tensor_type"}),
                "ort_failure": ort_failure,
                "rtol": rtol,
                "atol": atol,
            }
        )
    with open(manifest, "w") as f:
        json.dump({"onnx": onnx.__version__, "onnxruntime": ort.__version__, "tests": tests}, f, indent=1)
    return tests


if __name__ == "__main__":
    done = prepare(sys.argv[1], sys.argv[2])
    passing = sum(1 for t in done if t["ort_failure"] is None)
    print(f"{len(done)} node tests, {passing} pass on Python ONNX Runtime {ort.__version__}")
