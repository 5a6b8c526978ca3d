"""The lane matrix: the shipped file is valid, and every kind of mistake is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.core.errors import ConfigError, UsageError
from ci.lanes.matrix import default_matrix_path, load_matrix

VALID = """
default_lane = "cpu-a"

[indexes.pypi]
url = "https://pypi.example/simple"
env = "FLAGCI_INDEX_PYPI"

[indexes.flagos]
env = "FLAGCI_INDEX_FLAGOS"

[families]
cpu = ["cpu-a"]
kunlun = ["kun-base", "kun-new"]

[lanes.cpu-a]
description = "cpu"
vendor = "cpu"
base_image = "debian:bookworm"
python = "3.11"
compiler = { package = "triton", version = "3.6.0", triton = "3.6.0" }
targets = [{ backend = "cuda", arch = 80, warp_size = 32, shared_limit = 166912 }]
inductor_backend = "cuda"
execution = "interpreter"
pins = [{ name = "triton", version = "3.6.0", index = "pypi", sha256 = "%s" }]
tests = ["backends"]
timeout_s = 60
test_timeout_s = 30

[lanes.kun-base]
description = "kunlun base"
vendor = "kunlun"
base_image = "xre"
python = "3.10"
compiler = { package = "flagtree", version = "0.6.1+xpu3.6", triton = "3.6.0" }
targets = [{ backend = "cuda", arch = 3, warp_size = 64, shared_limit = 262144, name = "xpu3" }]
inductor_backend = "cuda"
execution = "device"
pins = [{ name = "flagtree", version = "0.6.1+xpu3.6", index = "flagos" }]
tests = ["backends", "vllm"]
timeout_s = 60
test_timeout_s = 30
[lanes.kun-base.model]
name = "Qwen3.6-27B"
path = "/models/q"
tensor_parallel_size = 1
max_model_len = 4096

[lanes.kun-new]
description = "kunlun new"
vendor = "kunlun"
base_image = "xre"
python = "3.10"
compiler = { package = "flagtree", version = "0.7.0rc2+xpu3.6", triton = "3.6.0" }
baseline = "kun-base"
targets = [{ backend = "cuda", arch = 3, warp_size = 64, shared_limit = 262144 }]
inductor_backend = "cuda"
execution = "device"
pins = [{ name = "flagtree", version = "0.7.0rc2+xpu3.6", index = "flagos" }]
tests = ["backends"]
timeout_s = 60
test_timeout_s = 30
""" % ("a" * 64)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lanes.toml"
    path.write_text(text)
    return path


def error_for(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_matrix(path)
    message = str(caught.value)
    assert str(path) in message, message
    return message


def test_shipped_matrix_has_every_lane_of_the_mission() -> None:
    matrix = load_matrix()
    assert set(matrix.lanes) == {
        "iluvatar-flagtree-0.6.0",
        "iluvatar-triton-3.2.0",
        "kunlun-flagtree-0.6.1",
        "kunlun-flagtree-0.6.1a1",
        "kunlun-flagtree-0.7.0rc2",
        "ascend-triton-3.2.0",
        "nvidia-triton-3.6.0",
        *(f"cpu-triton-{v}" for v in ("3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0", "3.9.0")),
        "cpu-vllm-0.20.2",
        "cpu-vllm-0.33.0",
    }
    # vLLM as an axis: the default lane is in the Triton family and in the vLLM one, whose
    # lanes differ only in the vllm pin (checked when the file is read).
    vllm = matrix.family("cpu-vllm")
    assert [matrix.release("cpu-vllm", lane) for lane in vllm] == [
        "vllm 0.20.2",
        "vllm 0.24.0",
        "vllm 0.33.0",
    ]
    assert matrix.default in vllm and matrix.default in matrix.family("cpu")
    assert matrix.default.name == "cpu-triton-3.6.0"
    assert [t.label for t in matrix.default.targets] == [
        "sm_80",
        "sm_90",
        "sm_100",
        "gfx942",
        "gfx950",
    ]
    flagtree = matrix.lane("iluvatar-flagtree-0.6.0")
    assert flagtree.baseline == "iluvatar-triton-3.2.0"
    assert flagtree.compiler.version == "0.6.0+iluvatar3.6"
    assert [t.backend for t in flagtree.targets] == ["corex"]
    assert [lane.name for lane in matrix.family("kunlun")] == [
        "kunlun-flagtree-0.6.1",
        "kunlun-flagtree-0.6.1a1",
        "kunlun-flagtree-0.7.0rc2",
    ]
    for name in matrix.families["kunlun"]:
        assert matrix.lanes[name].device.env["XPU_EVENT_KL3_ENABLE"] == "1"
    # Every pin of the default lane is hash-pinned: it is built offline from a wheelhouse.
    assert all(pin.sha256 for pin in matrix.default.pins)


def test_lane_facts_follow_flagtrees_sources() -> None:
    """The facts FlagTree's backends state (see the comments in lanes.toml for the files)."""
    matrix = load_matrix()
    baseline = matrix.lane("iluvatar-triton-3.2.0").targets[0]
    assert (baseline.backend, baseline.arch, baseline.warp_size) == ("cuda", 71, 64)
    for name in matrix.families["kunlun"]:
        (xpu,) = matrix.lanes[name].targets
        assert (xpu.warp_size, xpu.shared_limit) == (1, 0)  # no warps; shared is -1
    assert matrix.lane("kunlun-flagtree-0.6.1").targets[0].backend == "xpu"  # before #1211
    (npu,) = matrix.lane("ascend-triton-3.2.0").targets
    assert (npu.backend, npu.warp_size, npu.last_stage) == ("npu", 0, "ttadapter")


def test_the_upstream_family_extends_the_default_lane() -> None:
    matrix = load_matrix()
    family = matrix.family("cpu")
    assert [lane.compiler.version for lane in family] == [
        "3.2.0",
        "3.3.1",
        "3.4.0",
        "3.5.1",
        "3.6.0",
        "3.9.0",
    ]
    for lane in family:
        assert lane.pin("triton").version == lane.compiler.version  # type: ignore[union-attr]
        # Everything but the compiler is the default lane's, and hash-pinned.
        others = {p.name: p for p in lane.pins if p.name != "triton"}
        assert others == {p.name: p for p in matrix.default.pins if p.name != "triton"}
        assert all(pin.sha256 for pin in lane.pins)
        if lane != matrix.default:
            assert [t.label for t in lane.targets] == ["sm_80", "gfx942"]


def test_extends_errors_name_the_lane_and_key(tmp_path: Path) -> None:
    base = VALID.split("[lanes.")[0]
    lane = "[lanes." + VALID.split("[lanes.", 1)[1]
    missing = base + lane + '\n[lanes."child"]\nextends = "nowhere"\n'
    assert "lane 'child': key 'extends': no lane named 'nowhere'" in error_for(tmp_path, missing)
    loop = base + '[lanes."a"]\nextends = "b"\n[lanes."b"]\nextends = "a"\n'
    assert "key 'extends': a loop (a -> b -> a)" in error_for(tmp_path, loop)


def test_models_are_frozen() -> None:
    lane = load_matrix(default_matrix_path()).default
    with pytest.raises(ValueError):
        lane.python = "3.12"  # type: ignore[misc]


def test_valid_minimal_matrix(tmp_path: Path) -> None:
    matrix = load_matrix(write(tmp_path, VALID))
    assert matrix.lane("kun-new").baseline == "kun-base"
    assert matrix.lane("kun-base").targets[0].label == "xpu3"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "test_timeout_s = 30\n\n[lanes.kun-base]",
            'test_timeout_s = 30\ncolour = "red"\n\n[lanes.kun-base]',
            "lane 'cpu-a': key 'colour': Extra inputs are not permitted",
        ),
        (
            'sha256 = "',
            'sha = "',
            "lane 'cpu-a': key 'pins[0].sha': Extra inputs are not permitted",
        ),
        ("warp_size = 32", 'warp_size = "32"', "lane 'cpu-a': key 'targets[0].warp_size'"),
        ('python = "3.11"', 'python = "3.11.7"', "lane 'cpu-a': key 'python'"),
        ('sha256 = "aaaa', 'sha256 = "zzzz', "lane 'cpu-a': key 'pins[0].sha256'"),
        ('execution = "interpreter"', 'execution = "gpu"', "lane 'cpu-a': key 'execution'"),
        (
            'tests = ["backends"]\n',
            'tests = ["backends", "fuzz"]\n',
            "lane 'cpu-a': key 'tests[1]'",
        ),
        (
            'tests = ["backends"]\n',
            'tests = ["backends", "backends"]\n',
            "a smoke test is listed twice",
        ),
        ('description = "cpu"\n', "", "lane 'cpu-a': key 'description': Field required"),
        ("timeout_s = 60\ntest", "timeout_s = 0\ntest", "lane 'cpu-a': key 'timeout_s'"),
        ('vendor = "cpu"', 'vendor = "amd"', "lane 'cpu-a': key 'vendor'"),
        (
            'default_lane = "cpu-a"',
            'default_lane = "cpu-b"',
            "key 'default_lane': no lane named 'cpu-b'",
        ),
        (
            'index = "pypi"',
            'index = "mirror"',
            "lane 'cpu-a': key 'pins[0].index': no index named 'mirror'",
        ),
        (
            'baseline = "kun-base"',
            'baseline = "kun-old"',
            "lane 'kun-new': key 'baseline': no lane named 'kun-old'",
        ),
        (
            'baseline = "kun-base"',
            'baseline = "cpu-a"',
            "lane 'kun-new': key 'baseline': 'cpu-a' is a cpu lane",
        ),
        ('baseline = "kun-base"', 'baseline = "kun-new"', "a lane cannot be its own baseline"),
        (
            'kunlun = ["kun-base", "kun-new"]',
            'kunlun = ["kun-base"]',
            "lane 'kun-new': key 'vendor': the lane is in no family",
        ),
        (
            'kunlun = ["kun-base", "kun-new"]',
            'kunlun = ["kun-base", "kun-new", "kun-x"]',
            "key 'families.kunlun': no lane named 'kun-x'",
        ),
        ('cpu = ["cpu-a"]', 'cpu = ["cpu-a", "kun-base"]', "key 'families.cpu': lane 'kun-base'"),
        (
            '{ name = "flagtree", version = "0.7.0rc2+xpu3.6", index = "flagos" }',
            '{ name = "flagtree", version = "0.7.0rc1+xpu3.6", index = "flagos" }',
            "lane 'kun-new': key 'compiler': flagtree 0.7.0rc2+xpu3.6 is not in pins",
        ),
        (
            'pins = [{ name = "flagtree", version = "0.6.1+xpu3.6", index = "flagos" }]',
            'pins = [{ name = "flagtree", version = "0.6.1+xpu3.6", index = "flagos" }, '
            '{ name = "vllm_plugin_fl", version = "0.2.0", index = "flagos" }, '
            '{ name = "vllm-plugin.fl", version = "0.2.0", index = "flagos" }]',
            "lane 'kun-base': key 'pins': package 'vllm-plugin.fl' is pinned twice",
        ),
        (
            '[lanes.kun-base.model]\nname = "Qwen3.6-27B"\npath = "/models/q"\ntensor_parallel_size = 1\nmax_model_len = 4096\n',
            "",
            "lane 'kun-base': key 'model': the 'vllm' smoke test needs a [model] table",
        ),
        (
            "tensor_parallel_size = 1",
            "tensor_parallel_size = 0",
            "lane 'kun-base': key 'model.tensor_parallel_size'",
        ),
        ('env = "FLAGCI_INDEX_FLAGOS"', 'env = "flagci-index"', "key 'indexes.flagos.env'"),
        ("[families]", "[families]\namd = []", "key 'families.amd': not a vendor"),
        (
            'kunlun = ["kun-base", "kun-new"]',
            'kunlun = ["kun-base", "kun-new", "kun-base"]',
            "key 'families.kunlun': lane 'kun-base' is listed twice",
        ),
        (
            "[families]",
            '[families]\nkunlun-vllm = ["kun-base", "kun-new"]',
            "key 'families.kunlun-vllm': lane 'kun-base' does not pin 'vllm'",
        ),
        (
            "[families]",
            '[families]\nkunlun-flagtree = ["kun-base", "kun-new"]',
            "key 'families.kunlun-flagtree': lane 'kun-new' differs from 'kun-base' in more"
            " than its flagtree pin: compiler",
        ),
        (
            "[families]",
            '[families]\nkunlun-flagtree = ["kun-base", "kun-base"]',
            "key 'families.kunlun-flagtree': lane 'kun-base' is listed twice",
        ),
    ],
)
def test_each_mistake_names_file_lane_and_key(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    assert old in VALID, old
    message = error_for(tmp_path, VALID.replace(old, new, 1))
    assert expected in message, message


def test_an_axis_family_names_each_release_once(tmp_path: Path) -> None:
    # kun-new made kun-base's stack: the same compiler and pins, so nothing is left to vary.
    text = VALID.replace('"0.7.0rc2+xpu3.6"', '"0.6.1+xpu3.6"').replace(
        "[families]", '[families]\nkunlun-flagtree = ["kun-base", "kun-new"]'
    )
    message = error_for(tmp_path, text)
    assert (
        "key 'families.kunlun-flagtree': lanes 'kun-base' and 'kun-new' pin flagtree 0.6.1+xpu3.6"
        in message
    ), message


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    message = error_for(tmp_path, VALID.replace('vendor = "cpu"', "vendor = cpu"))
    assert "not valid TOML" in message and "line" in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="lane matrix not found"):
        load_matrix(tmp_path / "nope.toml")


def test_unknown_lane_is_a_usage_error() -> None:
    with pytest.raises(
        UsageError, match=r"no lane named 'cpu-triton-9'.*known: .*cpu-triton-3.6.0"
    ):
        load_matrix().lane("cpu-triton-9")


def test_index_url_is_a_setting(tmp_path: Path) -> None:
    matrix = load_matrix(write(tmp_path, VALID))
    assert matrix.index_url("pypi") == "https://pypi.example/simple"
    mirrored = matrix.with_index_urls({"pypi": "http://mirror/simple"})
    assert mirrored.index_url("pypi") == "http://mirror/simple"
    assert matrix.index_url("pypi") == "https://pypi.example/simple"  # the matrix stays as read
    assert mirrored.lanes == matrix.lanes and mirrored.indexes["pypi"].env == "FLAGCI_INDEX_PYPI"
    with pytest.raises(
        ConfigError,
        match="index 'flagos' has no URL: set the environment variable FLAGCI_INDEX_FLAGOS",
    ):
        mirrored.index_url("flagos")


def test_smoke_context_is_plain_json_data() -> None:
    import json

    context = load_matrix().lane("kunlun-flagtree-0.6.1").smoke_context("p800-01")
    again = json.loads(json.dumps(context))
    assert again["node"] == "p800-01"
    assert again["model"]["tensor_parallel_size"] == 1
    assert again["targets"][0]["name"] == "xpu3"
    assert again["env"]["XPU_EVENT_KL3_ENABLE"] == "1"


def test_every_vendor_lane_compiles_both_corpora_with_its_own_flaggems_vendor() -> None:
    from ci.smoke.realkernels import flaggems_corpus

    matrix = load_matrix()
    for family in ("iluvatar", "kunlun"):
        for lane in matrix.family(family):
            assert {"vllm_kernels", "flaggems_kernels"} <= set(lane.tests), lane.name
            assert {"vllm", "flag-gems"} <= {p.name for p in lane.pins}, lane.name
            wanted = {flaggems_corpus.vendor(lane.vendor, t.backend) for t in lane.targets}
            assert wanted == {lane.device.env["GEMS_VENDOR"]}, lane.name


def test_lanes_running_vllm_plugin_fl_capture_what_the_plugin_dispatches() -> None:
    from ci.smoke.realkernels import flaggems_corpus

    matrix = load_matrix()
    plugin = [lane for lane in matrix.lanes.values() if lane.device.env.get("VLLM_PLUGINS")]
    assert {lane.name for lane in plugin} == set(matrix.families["iluvatar"])
    for lane in plugin:
        assert lane.device.env["VLLM_PLUGINS"] == "fl" and lane.pin("vllm-plugin-fl"), lane.name
        assert lane.device.env["GEMS_VENDOR"] in flaggems_corpus.PLUGIN_VENDORS, lane.name
    others = {lane.device.env.get("GEMS_VENDOR") for lane in matrix.lanes.values()} - {
        lane.device.env["GEMS_VENDOR"] for lane in plugin
    }
    assert not others & set(flaggems_corpus.PLUGIN_VENDORS)
