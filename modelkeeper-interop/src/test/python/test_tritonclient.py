"""tritonclient (HTTP with binary tensors, HTTP with JSON, gRPC) against a running ModelKeeper.

The server's addresses come from MK_HTTP and MK_GRPC (host:port); MK_TOKEN is its bearer token
for the repository methods.
"""
import os

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

TOKEN = os.environ["MK_TOKEN"]
AUTH = {"Authorization": "Bearer " + TOKEN}
GAUTH = {"authorization": "Bearer " + TOKEN}  # gRPC metadata keys are lowercase

IRIS = np.array([[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]], dtype=np.float32)

# protocol name -> (client module, binary tensors?)
PROTOCOLS = {
    "http-binary": (httpclient, True),
    "http-json": (httpclient, False),
    "grpc": (grpcclient, None),
}


@pytest.fixture(params=list(PROTOCOLS))
def proto(request, http, grpc):
    module, binary = PROTOCOLS[request.param]
    return module, (http if module is httpclient else grpc), binary


def make_input(module, binary, name, array, datatype):
    i = module.InferInput(name, list(array.shape), datatype)
    if binary is None:
        i.set_data_from_numpy(array)
    else:
        i.set_data_from_numpy(array, binary_data=binary)
    return i


def make_output(module, binary, name):
    if binary is None:
        return module.InferRequestedOutput(name)
    return module.InferRequestedOutput(name, binary_data=binary)


def test_health_and_server_metadata(http, grpc):
    assert http.is_server_live() and http.is_server_ready()
    assert grpc.is_server_live() and grpc.is_server_ready()
    md = http.get_server_metadata()
    assert md["name"] == "modelkeeper"
    assert {"binary_tensor_data", "model_repository"} <= set(md["extensions"])
    gmd = grpc.get_server_metadata()
    assert gmd.name == "modelkeeper" and "binary_tensor_data" in gmd.extensions


def test_model_metadata(http, grpc):
    md = http.get_model_metadata("iris")
    assert md["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 4]}]
    assert {o["name"] for o in md["outputs"]} == {"probabilities", "label"}
    gmd = grpc.get_model_metadata("iris")
    assert gmd.name == "iris" and gmd.platform == md["platform"]
    assert gmd.inputs[0].name == "input" and list(gmd.inputs[0].shape) == [-1, 4]
    assert http.is_model_ready("iris") and grpc.is_model_ready("iris")


def test_infer_iris(proto):
    module, client, binary = proto
    result = client.infer("iris", [make_input(module, binary, "input", IRIS, "FP32")])
    probabilities = result.as_numpy("probabilities")
    label = result.as_numpy("label")
    assert probabilities.shape == (2, 3) and probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(axis=1), [1.0, 1.0], rtol=1e-5)
    assert label.dtype == np.int64
    assert list(label) == list(probabilities.argmax(axis=1))
    assert list(label) == [0, 2]


def test_outputs_filter(proto):
    module, client, binary = proto
    result = client.infer(
        "iris",
        [make_input(module, binary, "input", IRIS, "FP32")],
        outputs=[make_output(module, binary, "label")],
        request_id="filtered-1",
    )
    assert list(result.as_numpy("label")) == [0, 2]
    assert result.as_numpy("probabilities") is None
    response = result.get_response()
    if module is httpclient:
        assert response["id"] == "filtered-1" and len(response["outputs"]) == 1
    else:
        assert response.id == "filtered-1" and len(response.outputs) == 1


TYPES = {
    "fp32": (np.array([1.5, -2.25, 3.0e30], dtype=np.float32), "FP32"),
    "fp64": (np.array([1.5, -2.25, 1.0e300], dtype=np.float64), "FP64"),
    "int32": (np.array([1, -7, 2**30 - 1], dtype=np.int32), "INT32"),
    "int64": (np.array([1, -7, 2**52], dtype=np.int64), "INT64"),
    "int16": (np.array([1, -32768, 32767], dtype=np.int16), "INT16"),
    "int8": (np.array([1, -128, 127], dtype=np.int8), "INT8"),
    "uint8": (np.array([0, 200, 255], dtype=np.uint8), "UINT8"),
    "bool": (np.array([True, False, True]), "BOOL"),
    "bytes": (np.array([b"a", "h\u00e9llo".encode(), b""], dtype=np.object_), "BYTES"),
}


def test_infer_every_datatype(proto):
    module, client, binary = proto
    inputs = [make_input(module, binary, k + "_in", a, dt) for k, (a, dt) in TYPES.items()]
    result = client.infer("types", inputs)
    for k in ("fp32", "fp64", "int32", "int64"):
        a = TYPES[k][0]
        np.testing.assert_array_equal(result.as_numpy(k + "_out"), a + a)
        assert result.as_numpy(k + "_out").dtype == a.dtype
    for k in ("int16", "int8", "uint8"):
        np.testing.assert_array_equal(result.as_numpy(k + "_out"), TYPES[k][0])
        assert result.as_numpy(k + "_out").dtype == TYPES[k][0].dtype
    np.testing.assert_array_equal(result.as_numpy("bool_out"), ~TYPES["bool"][0])
    np.testing.assert_array_equal(
        result.as_numpy("int64_as_fp32"), TYPES["int64"][0].astype(np.float32))
    got = [bytes(b) if not isinstance(b, str) else b.encode() for b in result.as_numpy("bytes_out")]
    assert got == list(TYPES["bytes"][0])


def test_repository_index_load_and_unload(http, grpc):
    names = {m["name"] for m in http.get_model_repository_index(headers=AUTH)}
    assert {"iris", "mlp-small", "mlp-medium", "types"} <= names
    gnames = {m.name for m in grpc.get_model_repository_index(headers=GAUTH).models}
    assert gnames == names

    grpc.load_model("mlp-small", headers=GAUTH)
    assert grpc.is_model_ready("mlp-small") and http.is_model_ready("mlp-small")
    grpc.unload_model("mlp-small", headers=GAUTH)
    assert not grpc.is_model_ready("mlp-small")

    http.load_model("mlp-small", headers=AUTH)
    assert http.is_model_ready("mlp-small")
    http.unload_model("mlp-small", headers=AUTH)
    assert not http.is_model_ready("mlp-small")


def test_repository_needs_the_token(http, grpc):
    with pytest.raises(InferenceServerException) as e:
        http.load_model("mlp-small")
    assert e.value.status() == "401"
    with pytest.raises(InferenceServerException) as e:
        grpc.load_model("mlp-small")
    assert e.value.status() == "StatusCode.UNAUTHENTICATED"


def test_unknown_model_is_the_clients_not_found(proto):
    module, client, binary = proto
    with pytest.raises(InferenceServerException) as e:
        client.infer("no-such-model", [make_input(module, binary, "input", IRIS, "FP32")])
    assert e.value.status() in ("404", "StatusCode.NOT_FOUND")
    assert "no-such-model" in e.value.message()


def test_bad_shape_is_the_clients_invalid_argument(proto):
    module, client, binary = proto
    bad = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(InferenceServerException) as e:
        client.infer("iris", [make_input(module, binary, "input", bad, "FP32")])
    assert e.value.status() in ("400", "StatusCode.INVALID_ARGUMENT")
    assert "shape" in e.value.message()


def test_classification_answers_the_top_classes_with_labels(proto):
    # class_count asks for Triton's classification extension: the output's top classes as
    # "score:index:label" strings in its place; iris's config.json gives the labels
    module, client, binary = proto
    if binary is None:
        wanted = module.InferRequestedOutput("probabilities", class_count=2)
    else:
        wanted = module.InferRequestedOutput("probabilities", binary_data=binary, class_count=2)
    result = client.infer(
        "iris", [make_input(module, binary, "input", IRIS, "FP32")], outputs=[wanted]
    )
    top = result.as_numpy("probabilities")
    assert top.shape == (2, 2)
    rows = [[s.decode() if isinstance(s, bytes) else s for s in row] for row in top]
    assert rows[0][0].endswith(":0:setosa") and rows[1][0].endswith(":2:virginica")
    assert float(rows[0][0].split(":")[0]) >= float(rows[0][1].split(":")[0])
