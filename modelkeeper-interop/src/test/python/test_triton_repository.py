"""tritonclient against ModelKeeper serving a repository in Triton's layout (config.pbtxt).

The repository is written by TritonRepository.java; MK_HTTP and MK_GRPC give the server's
addresses, MK_TOKEN its bearer token for the repository methods.
"""
import json
import os
import time

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

AUTH = {"Authorization": "Bearer " + os.environ["MK_TOKEN"]}
GAUTH = {"authorization": "Bearer " + os.environ["MK_TOKEN"]}  # gRPC metadata keys are lowercase

A = np.arange(16, dtype=np.int32).reshape(1, 16)
B = np.ones((1, 16), dtype=np.int32)


@pytest.fixture(params=["http", "grpc"])
def client(request, http, grpc):
    return (httpclient, http) if request.param == "http" else (grpcclient, grpc)


def inputs(module, arrays, datatype):
    out = []
    for name, array in arrays.items():
        i = module.InferInput(name, list(array.shape), datatype)
        i.set_data_from_numpy(array)
        out.append(i)
    return out


def config(client):
    module, c = client
    if module is httpclient:
        return lambda name: c.get_model_config(name)
    # the gRPC answer as the same dict: field names kept, 64-bit integers as numbers
    from google.protobuf.json_format import MessageToDict

    def read(name):
        d = MessageToDict(
            c.get_model_config(name).config, preserving_proto_field_name=True
        )
        for tensor in d.get("input", []) + d.get("output", []):
            tensor["dims"] = [int(x) for x in tensor.get("dims", [])]
        return d

    return read


def index_rows(client):
    module, c = client
    index = c.get_model_repository_index(headers=AUTH if module is httpclient else GAUTH)
    if module is httpclient:
        return index
    return [
        {"name": m.name, "version": m.version, "state": m.state, "reason": m.reason}
        for m in index.models
    ]


def test_every_servable_model_is_ready_on_a_fresh_server(client):
    # first in this file: nothing has been loaded yet; readiness loads nothing either
    module, c = client
    assert c.is_server_ready()
    for name in ("addsub", "addsub_nobatch", "plus_latest", "plus_specific", "classifier"):
        assert c.is_model_ready(name), name
    assert c.is_model_ready("plus_latest", "2")
    rows = {r["name"]: r for r in index_rows(client)}
    assert rows["classifier"]["state"] == "UNAVAILABLE"  # ready, but not resident yet
    assert "not loaded" in rows["classifier"]["reason"]
    for name in ("broken", "ensemble", "sequence", "pytorch_model", "decoupled"):
        assert not c.is_model_ready(name), name


def test_addsub_infers(client):
    module, c = client
    result = c.infer("addsub", inputs(module, {"INPUT0": A, "INPUT1": B}, "INT32"))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), A + B)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), A - B)


@pytest.fixture(params=["http-binary", "http-json", "grpc"])
def strings_client(request, http, grpc):
    """A client and whether BYTES travel as binary data (HTTP JSON carries them as strings)."""
    if request.param == "grpc":
        return grpcclient, grpc, True
    return httpclient, http, request.param == "http-binary"


def bytes_inputs(module, arrays, binary):
    """BYTES inputs from object arrays; over HTTP as binary data or as JSON strings."""
    out = []
    for name, array in arrays.items():
        i = module.InferInput(name, list(array.shape), "BYTES")
        if module is httpclient:
            i.set_data_from_numpy(array, binary_data=binary)
        else:
            i.set_data_from_numpy(array)
        out.append(i)
    return out


def bytes_outputs(module, names, binary):
    if module is httpclient:
        return [httpclient.InferRequestedOutput(n, binary_data=binary) for n in names]
    return [grpcclient.InferRequestedOutput(n) for n in names]


def as_bytes(array):
    return [v if isinstance(v, bytes) else v.encode("utf-8") for v in array.reshape(-1)]


def test_simple_string_adds_and_subtracts_numbers_sent_as_strings(strings_client):
    # what Triton's simple string examples do: 0..15 and sixteen 1s as decimal strings
    module, c, binary = strings_client
    a = np.array([str(x).encode("utf-8") for x in range(16)], dtype=np.object_).reshape(1, 16)
    b = np.array([b"1"] * 16, dtype=np.object_).reshape(1, 16)
    result = c.infer(
        "simple_string",
        bytes_inputs(module, {"INPUT0": a, "INPUT1": b}, binary),
        outputs=bytes_outputs(module, ["OUTPUT0", "OUTPUT1"], binary),
    )
    assert [int(v) for v in as_bytes(result.as_numpy("OUTPUT0"))] == [x + 1 for x in range(16)]
    assert [int(v) for v in as_bytes(result.as_numpy("OUTPUT1"))] == [x - 1 for x in range(16)]


TEXT = ["he\x00llo", "\U0001F600 and \U0001F916", "", "\x00", "na\u00efve \u2603"]


def test_simple_identity_carries_nul_emoji_and_empty_strings(strings_client):
    module, c, binary = strings_client
    sent = [t.encode("utf-8") for t in TEXT]
    data = np.array(sent, dtype=np.object_).reshape(1, len(sent))
    result = c.infer(
        "simple_identity",
        bytes_inputs(module, {"INPUT0": data}, binary),
        outputs=bytes_outputs(module, ["OUTPUT0"], binary),
    )
    assert as_bytes(result.as_numpy("OUTPUT0")) == sent
    assert list(result.as_numpy("OUTPUT0").shape) == [1, len(sent)]


def test_simple_identity_carries_every_byte_value_in_every_position(client):
    module, c = client
    sent = []
    for v in range(256):
        sent += [bytes([v]), bytes([ord("a"), v, ord("z")]), bytes([ord("a"), v])]
    data = np.array(sent, dtype=np.object_).reshape(3, 256)
    result = c.infer(
        "simple_identity",
        bytes_inputs(module, {"INPUT0": data}, True),
        outputs=bytes_outputs(module, ["OUTPUT0"], True),
    )
    assert as_bytes(result.as_numpy("OUTPUT0")) == sent


def test_addsub_config_is_triton_shaped(client):
    cfg = config(client)("addsub")
    assert cfg["name"] == "addsub"
    assert cfg["platform"] == "onnxruntime_onnx"
    assert cfg["backend"] == "onnxruntime"
    assert cfg["max_batch_size"] == 8
    assert [i["name"] for i in cfg["input"]] == ["INPUT0", "INPUT1"]
    assert cfg["input"][0]["data_type"] == "TYPE_INT32"
    assert cfg["input"][0]["dims"] == [16]
    assert cfg["instance_group"][0]["count"] == 2
    assert cfg["instance_group"][0]["kind"] == "KIND_CPU"
    assert [int(x) for x in cfg["dynamic_batching"]["preferred_batch_size"]] == [4, 8]
    assert int(cfg["dynamic_batching"]["max_queue_delay_microseconds"]) == 100
    assert "latest" in cfg["version_policy"]


def test_addsub_refuses_a_batch_over_max_batch_size(client):
    module, c = client
    a = np.zeros((9, 16), dtype=np.int32)
    with pytest.raises(InferenceServerException) as e:
        c.infer("addsub", inputs(module, {"INPUT0": a, "INPUT1": a}, "INT32"))
    assert "max_batch_size 8" in e.value.message()


def test_model_without_batch_dimension(client):
    module, c = client
    a, b = A.reshape(16), B.reshape(16)
    result = c.infer("addsub_nobatch", inputs(module, {"INPUT0": a, "INPUT1": b}, "INT32"))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    cfg = config(client)("addsub_nobatch")
    assert cfg.get("max_batch_size", 0) == 0
    assert cfg["input"][0]["dims"] == [16]
    with pytest.raises(InferenceServerException):
        c.infer("addsub_nobatch", inputs(module, {"INPUT0": A, "INPUT1": B}, "INT32"))


def plus(client, name, version=""):
    module, c = client
    x = np.array([[10.0]], dtype=np.float32)
    result = c.infer(name, inputs(module, {"X": x}, "FP32"), model_version=version)
    return float(result.as_numpy("Y")[0][0]) - 10.0


def test_version_policy_latest_serves_the_two_highest(client):
    module, c = client
    assert plus(client, "plus_latest") == 3.0
    assert plus(client, "plus_latest", "2") == 2.0
    with pytest.raises(InferenceServerException) as e:
        plus(client, "plus_latest", "1")
    assert "not served" in e.value.message()
    assert sorted(versions(client, "plus_latest")) == ["2", "3"]


def test_version_policy_specific_serves_only_the_listed(client):
    assert plus(client, "plus_specific") == 1.0
    with pytest.raises(InferenceServerException) as e:
        plus(client, "plus_specific", "3")
    assert "not served" in e.value.message()
    assert versions(client, "plus_specific") == ["1"]


def versions(client, name):
    module, c = client
    md = c.get_model_metadata(name)
    return list(md["versions"] if module is httpclient else md.versions)


def test_classification_answers_top_labels(client):
    module, c = client
    scores = np.array([[0.1, 0.7, 0.15, 0.05]], dtype=np.float32)
    if module is httpclient:
        wanted = module.InferRequestedOutput("SCORES", binary_data=True, class_count=2)
    else:
        wanted = module.InferRequestedOutput("SCORES", class_count=2)
    result = c.infer(
        "classifier", inputs(module, {"SCORES_IN": scores}, "FP32"), outputs=[wanted]
    )
    top = [s.decode() if isinstance(s, bytes) else s for s in result.as_numpy("SCORES")[0]]
    assert [t.split(":")[1:] for t in top] == [["1", "dog"], ["2", "bird"]]
    assert float(top[0].split(":")[0]) == pytest.approx(0.7)


def test_broken_config_is_unavailable_with_its_parse_error(client):
    module, c = client
    assert not c.is_model_ready("broken")
    index = c.get_model_repository_index(headers=AUTH if module is httpclient else GAUTH)
    rows = index if module is httpclient else [
        {"name": m.name, "version": m.version, "state": m.state, "reason": m.reason}
        for m in index.models
    ]
    broken = [r for r in rows if r["name"] == "broken"]
    assert broken and broken[0]["state"] == "UNAVAILABLE"
    assert "config.pbtxt" in broken[0]["reason"] and "line 4" in broken[0]["reason"]
    with pytest.raises(InferenceServerException) as e:
        c.infer("broken", inputs(module, {"INPUT0": A, "INPUT1": B}, "INT32"))
    assert "config.pbtxt" in e.value.message() and "line 4" in e.value.message()
    assert "Exception" not in e.value.message()
    # the rest serves
    assert c.is_model_ready("addsub")


# What ModelKeeper does not serve: listed as UNAVAILABLE with the reason, refused the same way every
# time with a client error naming the feature, never a retryable code, never a server path.
UNSERVABLE = {
    "ensemble": "ensemble",
    "sequence": "sequence_batching",
    "pytorch_model": "backend 'pytorch'",
    "decoupled": "decoupled",
}


@pytest.mark.parametrize("name", sorted(UNSERVABLE))
def test_unservable_models_are_listed_and_refused(client, name):
    module, c = client
    feature = UNSERVABLE[name]
    row = [r for r in index_rows(client) if r["name"] == name]
    assert row and row[0]["state"] == "UNAVAILABLE" and feature in row[0]["reason"]
    assert not c.is_model_ready(name)
    answers = []
    for _ in range(2):
        with pytest.raises(InferenceServerException) as e:
            c.infer(name, inputs(module, {"INPUT0": A, "INPUT1": B}, "INT32"))
        answers.append((e.value.status(), e.value.message()))
    assert answers[0] == answers[1]  # the same refusal, no back-off window to wait out
    status, message = answers[0]
    assert status == ("400" if module is httpclient else "StatusCode.UNIMPLEMENTED")
    assert message.startswith("failed to load") and feature in message
    assert os.environ["MK_REPOSITORY"] not in message and "Exception" not in message
    with pytest.raises(InferenceServerException) as e:
        c.load_model(name, headers=AUTH if module is httpclient else GAUTH)
    assert e.value.status() == ("400" if module is httpclient else "StatusCode.UNIMPLEMENTED")
    assert feature in e.value.message()


def test_errors_start_with_tritons_words(client):
    module, c = client
    with pytest.raises(InferenceServerException) as e:
        c.get_model_metadata("no_such_model")
    assert e.value.message().startswith("Request for unknown model")
    with pytest.raises(InferenceServerException) as e:
        c.get_model_metadata("addsub", model_version="one")
    assert e.value.message().startswith(
        "failed to get model version from specified version string 'one'"
    )


def test_grpc_answers_typed_content_requests_in_raw_output_contents(grpc):
    # as NVIDIA's grpc_explicit_int_content_client.py sends it: the generated stub, typed contents
    from tritonclient.grpc import service_pb2, service_pb2_grpc
    import grpc as grpclib

    with grpclib.insecure_channel(os.environ["MK_GRPC"]) as channel:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        request = service_pb2.ModelInferRequest(model_name="addsub")
        for name, array in (("INPUT0", A), ("INPUT1", B)):
            t = request.inputs.add(name=name, datatype="INT32", shape=list(array.shape))
            t.contents.int_contents[:] = array.flatten().tolist()
        response = stub.ModelInfer(request)
        assert len(response.raw_output_contents) == 2
        assert not response.outputs[0].HasField("contents")
        out0 = np.frombuffer(response.raw_output_contents[0], dtype=np.int32).reshape(1, 16)
        np.testing.assert_array_equal(out0, A + B)
        # raw and typed contents in one request: Triton's words first
        request.raw_input_contents.append(A.tobytes())
        request.raw_input_contents.append(B.tobytes())
        with pytest.raises(grpclib.RpcError) as e:
            stub.ModelInfer(request)
        assert e.value.code() == grpclib.StatusCode.INVALID_ARGUMENT
        assert e.value.details().startswith(
            "contents field must not be specified when using raw_input_contents for 'INPUT0'"
        )


def load(client, name, **kwargs):
    module, c = client
    c.load_model(name, headers=AUTH if module is httpclient else GAUTH, **kwargs)


def test_load_with_a_config_override_applies_it_until_the_next_load(client):
    module, c = client
    load(client, "addsub", config=json.dumps({"max_batch_size": 16}))
    try:
        assert config(client)("addsub")["max_batch_size"] == 16
        a = np.zeros((12, 16), dtype=np.int32)  # more than the repository's 8
        result = c.infer("addsub", inputs(module, {"INPUT0": a, "INPUT1": a}, "INT32"))
        assert result.as_numpy("OUTPUT0").shape == (12, 16)
        a = np.zeros((17, 16), dtype=np.int32)
        with pytest.raises(InferenceServerException) as e:
            c.infer("addsub", inputs(module, {"INPUT0": a, "INPUT1": a}, "INT32"))
        assert "max_batch_size 16" in e.value.message()
    finally:
        load(client, "addsub")  # a load without a config: the repository's own again
    assert config(client)("addsub")["max_batch_size"] == 8


@pytest.mark.parametrize(
    "override, reason",
    [
        ('{"max_batch_size": 16', "not a valid model configuration in JSON"),
        ('{"max_batch_sise": 16}', "max_batch_sise"),
        ('{"name": "other"}', "name 'other'"),
        ('{"max_batch_size": 4, "sequence_batching": {}}', "sequence_batching"),
        (
            '{"max_batch_size": 4, "input": [{"name": "NOPE", "data_type": "TYPE_INT32",'
            ' "dims": [16]}]}',
            "NOPE",
        ),
    ],
)
def test_load_with_a_malformed_or_contradicting_override_is_refused(client, override, reason):
    module, c = client
    with pytest.raises(InferenceServerException) as e:
        load(client, "addsub", config=override)
    assert e.value.message().startswith("failed to load")
    assert reason in e.value.message()
    assert "Exception" not in e.value.message()
    # the repository's configuration still applies
    assert config(client)("addsub")["max_batch_size"] == 8
    assert c.is_model_ready("addsub")


def identity_model():
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 4])
    graph = helper.make_graph([helper.make_node("Neg", ["X"], ["Y"])], "uploaded", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def test_load_with_a_file_override_serves_the_files_sent(client):
    module, c = client
    name = "uploaded_" + ("http" if module is httpclient else "grpc")
    cfg = json.dumps({"name": name, "backend": "onnxruntime", "max_batch_size": 4})
    load(client, name, config=cfg, files={"file:1/model.onnx": identity_model()})
    assert c.is_model_ready(name)
    assert config(client)(name)["max_batch_size"] == 4
    x = np.array([[1.0, -2.0, 3.0, 0.5]], dtype=np.float32)
    np.testing.assert_array_equal(c.infer(name, inputs(module, {"X": x}, "FP32")).as_numpy("Y"), -x)
    with pytest.raises(InferenceServerException) as e:
        load(client, name, config=cfg, files={"file:../escape/model.onnx": identity_model()})
    assert "not a path inside the model's folder" in e.value.message()
    c.unload_model(
        name, headers=AUTH if module is httpclient else GAUTH, unload_dependents=True
    )
    assert not c.is_model_ready(name)


def statistics(client, name, version=""):
    """The model's statistics of version 1 as one dict of ints, the same over HTTP and gRPC."""
    module, c = client
    if module is httpclient:
        answer = c.get_inference_statistics(name, version)
    else:  # protobuf's JSON: 64-bit integers as strings, zeros left out
        answer = c.get_inference_statistics(name, version, as_json=True)
    (s,) = [m for m in answer["model_stats"] if m["name"] == name and m["version"] == "1"]
    out = {k: int(s.get(k, 0)) for k in ("last_inference", "inference_count", "execution_count")}
    for k in ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output"):
        d = s.get("inference_stats", {}).get(k, {})
        out[k] = (int(d.get("count", 0)), int(d.get("ns", 0)))
    out["batches"] = {
        int(b["batch_size"]): int(b.get("compute_infer", {}).get("count", 0))
        for b in s.get("batch_stats", [])
    }
    return out


def test_statistics_count_known_requests_exactly(client):
    module, c = client
    before = statistics(client, "addsub")
    rows = [1, 1, 2, 4, 1]  # one after another: each request runs alone, a batch of its rows
    for n in rows:
        a = np.tile(A, (n, 1))
        c.infer("addsub", inputs(module, {"INPUT0": a, "INPUT1": a}, "INT32"))
    after = statistics(client, "addsub")

    def grew(key):
        return after[key][0] - before[key][0], after[key][1] - before[key][1]

    assert after["inference_count"] - before["inference_count"] == sum(rows)
    assert after["execution_count"] - before["execution_count"] == len(rows)
    requests, total_ns = grew("success")
    assert requests == len(rows) and total_ns > 0
    assert grew("fail") == (0, 0)
    parts = 0
    for key in ("queue", "compute_input", "compute_infer", "compute_output"):
        count, ns = grew(key)
        assert count == len(rows), key
        assert ns > 0, key
        parts += ns
    assert parts <= total_ns  # queueing and the run's phases lie within each request's time
    for size, runs in {1: 3, 2: 1, 4: 1}.items():
        assert after["batches"].get(size, 0) - before["batches"].get(size, 0) == runs, size
    assert after["last_inference"] >= before["last_inference"]
    assert abs(after["last_inference"] / 1000 - time.time()) < 60


def test_statistics_of_every_model_and_of_one_version(client):
    module, c = client
    c.infer("addsub", inputs(module, {"INPUT0": A, "INPUT1": B}, "INT32"))
    if module is httpclient:
        everything = c.get_inference_statistics()
    else:
        everything = c.get_inference_statistics(as_json=True)
    assert ("addsub", "1") in {(m["name"], m["version"]) for m in everything["model_stats"]}
    assert statistics(client, "addsub", "1")["execution_count"] > 0


def test_statistics_of_an_unknown_model_say_so_in_tritons_words(client):
    module, c = client
    with pytest.raises(InferenceServerException) as e:
        c.get_inference_statistics("no_such_model")
    assert "Request for unknown model" in str(e.value)
    assert "no_such_model" in str(e.value)


def test_server_metadata_lists_statistics(client):
    module, c = client
    md = c.get_server_metadata()
    extensions = md["extensions"] if module is httpclient else md.extensions
    assert "statistics" in extensions
