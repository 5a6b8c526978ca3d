"""Lane images built for real on the local Docker engine.

The CPU lane's image is built once per session, from the debootstrapped Debian base and the
lane's wheelhouse only (builds run without network), then run. The vendor families' build
arguments are built from the stand-in lanes of tests/fixtures/lanes-substituted.toml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import threading
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci import cli
from ci.build import baseimage, environment, images
from ci.build.engine import Engine, connect
from ci.commands.options import cache_from, with_index_settings
from ci.core.errors import InfrastructureError
from ci.lanes.matrix import Lane, LaneMatrix, load_matrix

pytestmark = [pytest.mark.integration, pytest.mark.docker]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SUBSTITUTED = FIXTURES / "lanes-substituted.toml"
CPU_LANE = "cpu-triton-3.6.0"


def canonical(requirement: str) -> str:
    name, _, version = requirement.partition("==")
    return f"{re.sub(r'[-_.]+', '-', name).lower()}=={version}"


def pins_of(lane: Lane) -> set[str]:
    return {canonical(pin.requirement) for pin in lane.pins}


def wheels_in_filesystem(engine: Engine, ref: str) -> list[str]:
    """Every ``*.whl`` in the file system of a container of ``ref``, sorted."""
    run = engine.run(ref, ["find", "/", "-xdev", "-name", "*.whl"], user="0")
    assert run.exit_code == 0, run.output
    return sorted(run.output.split())


def wheels_in_layers(engine: Engine, ref: str) -> list[str]:
    """Every ``*.whl`` in any layer of ``ref`` (one deleted by a later layer included), read
    from its ``docker save`` archive as it streams; sorted, once per layer holding it."""
    reader, writer = os.pipe()
    found: list[str] = []

    def feed() -> None:
        with os.fdopen(writer, "wb") as sink:
            for chunk in engine.save(ref):
                sink.write(chunk)

    feeder = threading.Thread(target=feed)
    feeder.start()
    layers = 0
    with os.fdopen(reader, "rb") as source, tarfile.open(fileobj=source, mode="r|") as archive:
        for member in archive:
            if not member.isfile() or member.name.endswith((".json", "repositories")):
                continue
            blob = archive.extractfile(member)
            assert blob is not None
            try:
                with tarfile.open(fileobj=blob, mode="r|") as layer:
                    found += [
                        "/" + m.name.removeprefix("./") for m in layer if m.name.endswith(".whl")
                    ]
                layers += 1
            except tarfile.ReadError:  # a config blob of an OCI-layout archive
                continue
    feeder.join()
    assert layers > 0
    return sorted(found)


def freeze(engine: Engine, ref: str) -> set[str]:
    run = engine.run(ref, ["pip", "freeze", "--all", "--exclude", "pip", "--exclude", "flagci"])
    assert run.exit_code == 0, run.output
    return {canonical(line) for line in run.output.splitlines() if line.strip()}


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    with connect() as engine:
        yield engine


@pytest.fixture(scope="session")
def wheels() -> Path:
    return cache_from(os.environ) / "wheelhouse"


@pytest.fixture(scope="session")
def cpu_image(engine: Engine) -> tuple[Lane, str]:
    """The CPU lane's image, built through the command line as an operator would."""
    assert cli.main(["images", "build", CPU_LANE]) == 0
    lane = load_matrix().lane(CPU_LANE)
    return lane, images.recipe_for(lane).ref


@pytest.fixture(scope="session")
def substituted() -> LaneMatrix:
    return with_index_settings(load_matrix(SUBSTITUTED), os.environ)


def test_the_cpu_image_is_built_on_the_debian_base_and_agrees_with_the_matrix(
    engine: Engine, cpu_image: tuple[Lane, str]
) -> None:
    lane, ref = cpu_image
    info = engine.image(ref)
    assert info is not None
    base = engine.image(baseimage.DEBIAN_BASE.ref)
    assert base is not None
    history = {layer["Id"] for layer in engine.client.images.get(ref).history()}
    assert base.id in history
    assert info.labels["org.opencontainers.image.base.name"] == baseimage.DEBIAN_BASE.ref
    assert images.drift(lane, info.labels, images.recipe_for(lane).content_hash) == []


def test_the_cpu_image_holds_no_wheel_in_any_layer(
    engine: Engine, cpu_image: tuple[Lane, str]
) -> None:
    lane, ref = cpu_image
    # The base's own wheels (Debian's python3-venv ships pip's and setuptools' for ensurepip)
    # are the only ones: the lane's image adds none, not even in a layer a later one hides.
    base_wheels = wheels_in_filesystem(engine, lane.base_image)
    assert base_wheels == [
        "/usr/share/python-wheels/pip-23.0.1-py3-none-any.whl",
        "/usr/share/python-wheels/setuptools-66.1.1-py3-none-any.whl",
    ]
    assert wheels_in_filesystem(engine, ref) == base_wheels
    assert wheels_in_layers(engine, lane.base_image) == base_wheels  # the scan finds wheels
    assert wheels_in_layers(engine, ref) == base_wheels


def test_the_cpu_image_says_where_its_sources_and_base_come_from(
    engine: Engine, cpu_image: tuple[Lane, str]
) -> None:
    _, ref = cpu_image
    info = engine.image(ref)
    base = engine.image(baseimage.DEBIAN_BASE.ref)
    assert info is not None and base is not None
    root = environment.source_root()

    def git(*args: str) -> str:
        found = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return found.stdout.strip() if found.returncode == 0 else "unknown"

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    oci = {
        key.removeprefix("org.opencontainers.image."): value
        for key, value in info.labels.items()
        if key.startswith("org.opencontainers.image.")
    }
    assert oci == {
        "title": "flagci/cpu-triton-3.6.0",
        "description": load_matrix().lane(CPU_LANE).description,
        "version": images.recipe_for(load_matrix().lane(CPU_LANE)).content_hash,
        "created": oci["created"],
        "source": oci["source"],
        "revision": oci["revision"],
        "licenses": project.get("license", "NOASSERTION"),  # SPDX: none declared
        "base.name": baseimage.DEBIAN_BASE.ref,
        "base.digest": base.id,  # a base made here has no registry digest: its image id
        "vendor": "flagci",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", oci["created"])
    # Where the image was built from: the origin (credentials stripped) of the checkout that
    # built this content (the tag), this one or another on the machine; which one is
    # images.provenance's unit test.
    assert oci["source"] and not re.search(r"//[^/@]*@", oci["source"])
    # The commit the image was built from: this one's, or an earlier one's where the image's
    # content (its tag) has not changed since.
    if git("rev-parse", "HEAD") == "unknown":
        assert oci["revision"] == "unknown"
    else:
        assert re.fullmatch(r"[0-9a-f]{40}", oci["revision"])
        assert git("rev-parse", "--verify", "--quiet", oci["revision"] + "^{commit}") != "unknown"


def test_the_smoke_suite_passes_inside_the_cpu_image(
    engine: Engine, cpu_image: tuple[Lane, str], tmp_path: Path
) -> None:
    lane, ref = cpu_image
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # the image's user (uid 1000) writes here

    # The image's own command, as a node runs it, on a slice of every group (the whole suite
    # runs once, in the same pins, in test_local_run): what only this test shows is that the
    # image runs its suite as its user, captures vLLM's and FlagGems' kernels and writes JUnit
    # and artifacts where the node collects them.
    command = [
        *engine.client.images.get(ref).attrs["Config"]["Cmd"],
        "--",
        "-n",
        "2",
        "-k",
        IMAGE_SUBSET,
    ]
    run = engine.run(ref, command, volumes={results: "/results"}, timeout_s=lane.timeout_s)

    assert run.exit_code == 0, run.output[-5000:]
    suite = ET.parse(results / "junit.xml").getroot()
    cases = suite.findall(".//testcase")
    assert len(cases) > 30
    groups = {case.get("classname", "").rsplit(".", 1)[-1] for case in cases}
    assert groups >= {
        "test_stack", "test_backends", "test_unified_attention", "test_gdn_post_conv",
        "test_vllm_kernels", "test_flaggems_kernels",
    }  # fmt: skip
    assert not suite.findall(".//failure") and not suite.findall(".//error")
    lanes = {p.get("value") for p in suite.findall(".//property[@name='lane']")}
    assert lanes == {CPU_LANE}
    assert (results / "artifacts").is_dir()


def test_pip_freeze_inside_the_cpu_image_is_the_lane_pins(
    engine: Engine, cpu_image: tuple[Lane, str]
) -> None:
    lane, ref = cpu_image
    assert freeze(engine, ref) == pins_of(lane)


def test_building_a_lane_whose_tag_exists_does_nothing(
    engine: Engine, cpu_image: tuple[Lane, str], wheels: Path
) -> None:
    lane, ref = cpu_image
    report = images.build(engine, with_index_settings(load_matrix(), os.environ), lane, wheels)
    assert (report.built, report.ref, report.steps) == (False, ref, ())


def test_inspect_reports_a_label_that_differs_from_the_matrix(
    engine: Engine, cpu_image: tuple[Lane, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, ref = cpu_image
    assert cli.main(["images", "inspect", CPU_LANE, "--image", ref]) == 0
    assert "agrees with" in capsys.readouterr().out

    # An image whose label was changed after the build...
    context = tmp_path / "relabel"
    context.mkdir()
    (context / "Dockerfile").write_text(f"FROM {ref}\nLABEL org.flagci.pin.triton=3.5.1\n")
    tampered = "flagci/test-tampered:1"
    images.follow(engine.build(context, tag=tampered, buildargs={}), "tampered")
    try:
        assert cli.main(["images", "inspect", CPU_LANE, "--image", tampered]) == 1
    finally:
        engine.remove_image(tampered)
    out = capsys.readouterr().out
    assert "org.flagci.pin.triton: the image has 3.5.1, the matrix has 3.6.0" in out

    # ... and a matrix whose pin moved on since the image was built.
    moved = tmp_path / "lanes.toml"
    text = load_matrix().source
    moved.write_text(
        Path(text)
        .read_text()
        .replace('{ name = "numpy", version = "2.2.6"', '{ name = "numpy", version = "2.2.5"')
    )
    assert cli.main(["--lanes-file", str(moved), "images", "inspect", CPU_LANE]) == 1
    out = capsys.readouterr().out
    assert "org.flagci.pin.numpy: the image has 2.2.6, the matrix has 2.2.5" in out
    assert images.HASH_LABEL in out  # the recipe moved too: another tag


def test_list_and_inspect_print_json_and_plain_tables(
    engine: Engine, cpu_image: tuple[Lane, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, ref = cpu_image
    info = engine.image(ref)
    assert info is not None
    assert cli.main(["images", "list", CPU_LANE, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["lane"] for row in rows} == {CPU_LANE}
    (row,) = [row for row in rows if row["image"] == ref]
    assert row == {
        "image": ref,
        "lane": CPU_LANE,
        "compiler": info.labels["org.flagci.compiler"],
        "size_bytes": info.size,
        "created": info.created[:19],
        "state": "current",
    }
    assert cli.main(["images", "list", CPU_LANE]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["image", "lane", "compiler", "size", "created", "state"]
    (line,) = [line for line in table if line.startswith(ref + " ")]
    assert line.split()[-1] == "current" and f"{info.size / 1e9:.2f} GB" in line

    assert cli.main(["images", "inspect", CPU_LANE, "--image", ref, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"lane": CPU_LANE, "image": ref, "drift": []}]
    context = tmp_path / "relabel"
    context.mkdir()
    (context / "Dockerfile").write_text(f"FROM {ref}\nLABEL org.flagci.pin.numpy=2.2.5\n")
    tampered = f"flagci/test-json-tampered:{os.getpid()}"  # parallel test runs stay apart
    images.follow(engine.build(context, tag=tampered, buildargs={}), "tampered")
    capsys.readouterr()  # the build's progress
    try:
        assert cli.main(["images", "inspect", CPU_LANE, "--image", tampered, "--json"]) == 1
    finally:
        engine.remove_image(tampered)
    (report,) = json.loads(capsys.readouterr().out)
    assert report == {
        "lane": CPU_LANE,
        "image": tampered,
        "drift": [
            {
                "label": "org.flagci.pin.numpy",
                "image": "2.2.5",
                "matrix": "2.2.6",
                "text": "org.flagci.pin.numpy: the image has 2.2.5, the matrix has 2.2.6",
            }
        ],
    }


# One slice of each smoke group: the stack, the backends, one mirror config of each kernel,
# both real-kernel captures and one compile of each.
IMAGE_SUBSET = (
    "test_stack or test_backends or test_capture or hd128-bm16-t32-w4-s3-bf16"
    " or qwen3.6-h128-hv16-k128-v128-bt16-w4-s2-bf16 or prefill-hd128-gqa4 or embedding"
)

CORRUPTED_LANES = """
default_lane = "cpu-corrupted-wheel"
[indexes.pypi]
url = "https://pypi.org/simple"
env = "FLAGCI_INDEX_PYPI"
[families]
cpu = ["cpu-corrupted-wheel"]
[lanes.cpu-corrupted-wheel]
description = "A lane whose wheelhouse holds a damaged iniconfig wheel"
vendor = "cpu"
base_image = "flagci/bookworm:python3.11"
python = "3.11"
compiler = { package = "triton", version = "3.6.0", triton = "3.6.0" }
targets = [{ backend = "cuda", arch = 80, warp_size = 32, shared_limit = 166912 }]
inductor_backend = "cuda"
execution = "interpreter"
pins = [
  { name = "triton", version = "3.6.0", index = "pypi" },
  { name = "iniconfig", version = "2.3.1", index = "pypi"%s },
]
tests = ["backends"]
timeout_s = 600
test_timeout_s = 300
"""
INICONFIG_SHA256 = "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7"


@pytest.mark.parametrize(
    ("damage", "pinned_hash", "says"),
    [
        ("flip", True, "sha256 mismatch: the lane matrix pins " + INICONFIG_SHA256),
        ("truncate", False, "not a valid wheel archive"),
    ],
)
def test_a_corrupted_wheel_fails_the_build_naming_the_package(
    engine: Engine,
    cpu_image: tuple[Lane, str],
    wheels: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: str,
    pinned_hash: bool,
    says: str,
) -> None:
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(CORRUPTED_LANES % (f', sha256 = "{INICONFIG_SHA256}"' if pinned_hash else ""))
    house = tmp_path / "wheels" / "cpu-corrupted-wheel"
    house.mkdir(parents=True)
    source = wheels / CPU_LANE  # filled by the CPU image's build
    for wheel in (*source.glob("triton-3.6.0-*.whl"), *source.glob("iniconfig-2.3.1-*.whl")):
        shutil.copy(wheel, house / wheel.name)
    damaged = next(house.glob("iniconfig-*.whl"))
    data = bytearray(damaged.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        del data[len(data) // 2 :]
    damaged.write_bytes(bytes(data))

    code = cli.main(
        ["--lanes-file", str(lanes), "images", "build", "--wheelhouse", str(tmp_path / "wheels")]
    )

    assert code == 4
    err = capsys.readouterr().err
    assert "lane 'cpu-corrupted-wheel': package 'iniconfig' 2.3.1" in err
    assert says in err
    assert images.lane_images(engine, "cpu-corrupted-wheel") == []


@pytest.mark.parametrize(
    ("lane_name", "user"),
    [("iluvatar-substituted", "0"), ("kunlun-substituted", "0"), ("nvidia-substituted", "1000")],
)
def test_every_vendor_family_builds_with_substituted_base_and_wheel(
    engine: Engine, substituted: LaneMatrix, wheels: Path, lane_name: str, user: str
) -> None:
    lane = substituted.lane(lane_name)
    report = images.build(engine, substituted, lane, wheels)
    assert report.ref == images.recipe_for(lane).ref
    attrs = engine.client.images.get(report.ref).attrs
    assert attrs["Config"]["Cmd"] == ["python", "-m", "ci.smoke", "--results", "/results"]
    assert images.drift(lane, attrs["Config"]["Labels"], images.recipe_for(lane).content_hash) == []

    probe = (
        "import json, os, sys, triton; import ci.smoke; "
        "lane = json.load(open(sys.prefix + '/share/flagci/lane.json'))['lane']; "
        "print(json.dumps([os.getuid(), triton.__version__, lane]))"
    )
    run = engine.run(report.ref, ["python", "-c", probe])
    assert run.exit_code == 0, run.output
    assert json.loads(run.output.splitlines()[-1]) == [int(user), "3.6.0", lane_name]
    assert freeze(engine, report.ref) == pins_of(lane)
    assert wheels_in_filesystem(engine, report.ref) == wheels_in_filesystem(engine, lane.base_image)


def test_save_writes_a_loadable_archive_of_the_lane_image(
    engine: Engine, substituted: LaneMatrix, wheels: Path, tmp_path: Path
) -> None:
    lane = substituted.lane("nvidia-substituted")
    ref = images.build(engine, substituted, lane, wheels).ref
    out = tmp_path / "saved"
    argv = ["--lanes-file", str(SUBSTITUTED), "images", "save", lane.name, "--output", str(out)]
    assert cli.main(argv) == 0
    archive = out / images.archive_name(ref)
    with tarfile.open(archive) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
    assert manifest[0]["RepoTags"] == [ref]
    assert [p.name for p in out.iterdir()] == [archive.name]  # no temporary file left


def test_the_base_image_is_made_by_debootstrap_once(
    engine: Engine, cpu_image: tuple[Lane, str]
) -> None:
    # The CPU image's build made the base (on a fresh machine, by debootstrap); a second
    # debootstrap of another base would only repeat it.
    base = baseimage.DEBIAN_BASE
    made = engine.image(base.ref)
    assert made is not None
    assert made.labels[baseimage.RECIPE_LABEL] == base.recipe
    run = engine.run(base.ref, ["cat", "/etc/debian_version"])
    assert (run.exit_code, run.output.split(".")[0]) == (0, "12")
    # Cached by name and recipe: a second call makes nothing.
    assert baseimage.ensure(engine, base) == base.ref
    assert engine.image(base.ref) == made


def test_a_base_image_the_engine_cannot_get_stops_the_build_naming_it(
    engine: Engine, substituted: LaneMatrix, wheels: Path
) -> None:
    lane = substituted.lane("kunlun-substituted").model_copy(
        update={"base_image": "flagci/test-no-such-base:1"}
    )
    with pytest.raises(InfrastructureError, match=r"pulling image flagci/test-no-such-base:1"):
        images.build(engine, substituted, lane, wheels)
    assert engine.image(images.recipe_for(lane).ref) is None
