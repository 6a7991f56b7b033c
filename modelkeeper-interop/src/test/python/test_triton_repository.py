"""tritonclient against ModelKeeper serving a repository in Triton's layout (config.pbtxt).

The repository is written by TritonRepository.java; MK_HTTP and MK_GRPC give the server's
addresses, MK_TOKEN its bearer token for the repository methods.
"""
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


def test_addsub_infers(client):
    module, c = client
    result = c.infer("addsub", inputs(module, {"INPUT0": A, "INPUT1": B}, "INT32"))
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), A + B)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), A - B)


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
