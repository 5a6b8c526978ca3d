"""The local Debian base image: made with debootstrap and ``docker import``, no registry.

It carries Debian bookworm's own Python 3.11 (and its ``venv`` module), so that lane images
built on it need nothing from the network but the wheelhouse. The image is cached under
its name; a label records the recipe it was made from, and it is made again only when it
is missing or its recipe changed. Other modules (test nodes, say) build on the same image:
``ensure(engine)`` returns its name.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass

from ci.build.engine import Engine
from ci.core import process, reporter
from ci.core.errors import EnvironmentSetupError

RECIPE_LABEL = "org.flagci.base.recipe"


@dataclass(frozen=True)
class DebianBase:
    repository: str
    tag: str
    suite: str
    mirror: str
    packages: tuple[str, ...]

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}"

    @property
    def recipe(self) -> str:
        data = json.dumps(asdict(self), sort_keys=True).encode("utf-8")
        return hashlib.sha256(data).hexdigest()[:16]


DEBIAN_BASE = DebianBase(
    repository="flagci/bookworm",
    tag="python3.11",
    suite="bookworm",
    mirror="http://deb.debian.org/debian",
    packages=("python3", "python3-venv"),
)

# What debootstrap leaves that no image needs: downloaded packages and package lists.
_TRIM = ("var/cache/apt/archives", "var/lib/apt/lists")


def ensure(engine: Engine, base: DebianBase = DEBIAN_BASE) -> str:
    """Make ``base`` unless an image of that name and recipe exists; return its name."""
    found = engine.image(base.ref)
    if found is not None and found.labels.get(RECIPE_LABEL) == base.recipe:
        return base.ref
    reporter.current().line(f"making base image {base.ref} with debootstrap")
    work = engine.scratch / f"base-{base.recipe}"
    root = work / "rootfs"
    work.mkdir(parents=True, exist_ok=True)
    try:
        process.run(
            [
                "debootstrap",
                "--variant=minbase",
                *([f"--include={','.join(base.packages)}"] if base.packages else []),
                base.suite,
                root,
                base.mirror,
            ],
            error=EnvironmentSetupError,
            what=f"base image {base.ref}: debootstrap {base.suite}",
            capture=True,
        )
        for relative in _TRIM:
            for entry in (root / relative).glob("*"):
                if entry.is_file():
                    entry.unlink()
        for cache in (root / "var/cache/apt").glob("*.bin"):
            cache.unlink()
        tarball = work / "rootfs.tar"
        process.run(
            ["tar", "--numeric-owner", "-C", root, "-cf", tarball, "."],
            error=EnvironmentSetupError,
            what=f"base image {base.ref}: packing the root file system",
        )
        engine.import_rootfs(
            tarball,
            base.ref,
            changes=[
                f"LABEL {RECIPE_LABEL}={base.recipe}",
                f"LABEL org.opencontainers.image.title={base.repository}",
                f'LABEL org.opencontainers.image.description="Debian {base.suite} minbase'
                f'{" with " + " ".join(base.packages) if base.packages else ""}"',
                "ENV LANG=C.UTF-8",
                'CMD ["/bin/bash"]',
            ],
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return base.ref
