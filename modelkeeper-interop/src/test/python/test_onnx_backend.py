"""The ONNX backend node tests through a running ModelKeeper, over HTTP binary, HTTP JSON and gRPC.

MK_MANIFEST names the manifest `onnx_backend.prepare` wrote for the server's repository (MK_REPO).
Every test that Python ONNX Runtime passes must pass here, on every protocol, with the same
tolerance (exact for integers, bools and bytes), except the documented limits below, which the
server must refuse at load, clearly and the same way each time.
"""
import json
import os

import grpc as grpclib
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

import onnx_backend

REPO = os.environ["MK_REPO"]
with open(os.environ["MK_MANIFEST"]) as f:
    MANIFEST = json.load(f)

# ONNX element types that ONNX Runtime's Java API cannot create as inputs (it has no Java type for
# them; it reads them as outputs): a model taking one is refused at load, naming the tensor.
JAVA_UNCREATABLE = {"UINT16", "UINT32", "UINT64"}

PROTOCOLS = ["http-binary", "http-json", "grpc"]


def limit(test):
    """The documented limit that makes the server refuse this test's model, or None."""
    if not test["tensors_only"]:
        return "non-tensor: " + ", ".join(test["non_tensor"])
    model = onnx_backend.onnx.load(
        os.path.join(onnx_backend.NODE_TESTS, test["test"], "model.onnx"),
        load_external_data=False,
    )
    for graph_input in model.graph.input:
        name = onnx_backend.onnx.TensorProto.DataType.Name(graph_input.type.tensor_type.elem_type)
        if name in JAVA_UNCREATABLE:
            return "input of type " + name
    return None


CASES = []
for t in MANIFEST["tests"]:
    if t["tensors_only"] and t["ort_failure"] is not None:
        continue  # Python ONNX Runtime fails it too: nothing to hold the server to
    reason = limit(t)
    for p in PROTOCOLS:
        CASES.append(pytest.param(t, p, reason, id=t["test"] + "-" + p))


@pytest.fixture(scope="module")
def clients(http, grpc):
    return {"http": http, "grpc": grpc}


def infer(clients, protocol, model, inputs, outputs):
    if protocol == "grpc":
        module, client, binary = grpcclient, clients["grpc"], None
    else:
        module, client, binary = httpclient, clients["http"], protocol == "http-binary"
    request = []
    for name, array in inputs.items():
        i = module.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        if binary is None:
            i.set_data_from_numpy(array)
        else:
            i.set_data_from_numpy(array, binary_data=binary)
        request.append(i)
    wanted = [
        module.InferRequestedOutput(n)
        if binary is None
        else module.InferRequestedOutput(n, binary_data=binary)
        for n in outputs
    ]
    result = client.infer(model, request, outputs=wanted)
    return {n: result.as_numpy(n) for n in outputs}


@pytest.mark.parametrize("test,protocol,reason", CASES)
def test_node(clients, test, protocol, reason):
    model_dir = os.path.join(onnx_backend.NODE_TESTS, test["test"])
    model = onnx_backend.onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False)
    if reason is not None:
        refused(clients, protocol, test, reason)
        return
    for inputs, expected in onnx_backend.data_sets(model_dir, model):
        got = infer(clients, protocol, test["model"], inputs, list(expected))
        for name, want in expected.items():
            why = onnx_backend.mismatch(want, got[name], test["rtol"], test["atol"])
            assert why is None, f"output '{name}': {why}"


def refused(clients, protocol, test, reason):
    """The model of a documented limit is refused at load: not retryable, no server path."""
    with pytest.raises(InferenceServerException) as caught:
        infer(clients, protocol, test["model"], {}, [])
    e = caught.value
    message = e.message()
    assert REPO not in message
    if protocol == "grpc":
        assert e.status() in ("StatusCode.FAILED_PRECONDITION", "StatusCode.UNIMPLEMENTED"), message
    else:
        assert e.status() == "400", message
    assert "cannot be served" in message, message
