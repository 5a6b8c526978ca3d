"""The container engine: one Docker daemon, driven through the Docker SDK for Python.

``connect()`` is the only way to get an ``Engine``; it is a context manager that closes the
client and removes every scratch folder (build contexts, root file systems) on the way out,
whether the work succeeded or not. Containers started by ``Engine.run`` are removed as soon
as they stop. Every Docker failure becomes an ``InfrastructureError`` naming what was asked.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
from docker.models.images import Image

from ci.core.errors import InfrastructureError

# Builds of lane images install wheels of several hundred MB: a step may print nothing for
# minutes, and the SDK's default 60 s read timeout would cut it.
API_TIMEOUT_S = 3600


@dataclass(frozen=True)
class ImageInfo:
    """A local image as the engine describes it."""

    id: str
    tags: tuple[str, ...]
    labels: Mapping[str, str]
    created: str
    size: int
    repo_digests: tuple[str, ...] = ()  # "registry/repository@sha256:...", once pushed
    user: str = ""  # the image's USER ("" : root)

    @classmethod
    def of(cls, image: Image) -> ImageInfo:
        return cls(
            id=str(image.id),
            tags=tuple(image.tags),
            labels=dict(image.labels or {}),
            created=str(image.attrs.get("Created", "")),
            size=int(image.attrs.get("Size", 0)),
            repo_digests=tuple(image.attrs.get("RepoDigests") or ()),
            user=str((image.attrs.get("Config") or {}).get("User") or ""),
        )


@dataclass(frozen=True)
class ContainerRun:
    """What a finished container left: its exit code and its output (stdout and stderr)."""

    exit_code: int
    output: str


@dataclass(frozen=True)
class Engine:
    client: docker.DockerClient
    scratch: Path

    def image(self, ref: str) -> ImageInfo | None:
        try:
            return ImageInfo.of(self.client.images.get(ref))
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: looking up image {ref}: {err}") from None

    def pull(self, ref: str) -> ImageInfo:
        """Pull ``ref`` from its registry; what the engine then has under that name."""
        try:
            return ImageInfo.of(self.client.images.pull(ref))
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: pulling image {ref}: {err}") from None

    def images(self, label: str) -> list[ImageInfo]:
        """Local images carrying ``label`` (``key`` or ``key=value``), newest first."""
        try:
            found = self.client.images.list(filters={"label": label})
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: listing images with label {label}: {err}") from None
        return sorted((ImageInfo.of(i) for i in found), key=lambda i: i.created, reverse=True)

    def build(
        self,
        context: Path,
        *,
        tag: str,
        buildargs: Mapping[str, str],
        nocache: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Build ``context`` (a folder with a ``Dockerfile``) offline; yield the build's events.

        The build's containers have no network: all a build installs is in its context.
        """
        try:
            yield from self.client.api.build(
                path=str(context),
                tag=tag,
                buildargs=dict(buildargs),
                nocache=nocache,
                rm=True,
                forcerm=True,
                pull=False,
                network_mode="none",
                decode=True,
            )
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: building {tag}: {err}") from None

    def import_rootfs(self, tarball: Path, ref: str, changes: Sequence[str]) -> str:
        """``docker import`` a root file system tarball as ``ref``; return the image id."""
        repository, _, tag = ref.rpartition(":")
        try:
            self.client.api.import_image_from_file(
                str(tarball), repository=repository, tag=tag, changes=list(changes)
            )
            return str(self.client.images.get(ref).id)
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: importing {tarball} as {ref}: {err}") from None

    def save(self, ref: str) -> Iterator[bytes]:
        """The ``docker save`` archive of ``ref``, in chunks."""
        try:
            yield from self.client.images.get(ref).save(named=True)
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: saving {ref}: {err}") from None

    def remove_image(self, ref: str) -> None:
        try:
            self.client.images.remove(ref, force=True)
        except docker.errors.ImageNotFound:
            return
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: removing image {ref}: {err}") from None

    def run(
        self,
        ref: str,
        command: Sequence[str] | None = None,
        *,
        volumes: Mapping[Path, str] | None = None,
        environment: Mapping[str, str] | None = None,
        user: str | None = None,
        network: bool = False,
        timeout_s: float | None = None,
    ) -> ContainerRun:
        """Run ``ref`` to completion (no network unless asked); the container is always removed.

        ``volumes`` maps host folders to ``"/path/in/container[:ro]"``.
        """
        binds = {
            str(host): {"bind": spec.split(":")[0], "mode": "ro" if spec.endswith(":ro") else "rw"}
            for host, spec in (volumes or {}).items()
        }
        container = None
        try:
            container = self.client.containers.create(
                ref,
                command=list(command) if command is not None else None,
                volumes=binds,
                environment=dict(environment or {}),
                user=user,
                network_disabled=not network,
            )
            container.start()
            status = container.wait(timeout=timeout_s)
            output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
            return ContainerRun(exit_code=int(status["StatusCode"]), output=output)
        except docker.errors.DockerException as err:
            raise InfrastructureError(f"docker: running {ref}: {err}") from None
        except OSError as err:  # the wait timed out (requests' ReadTimeout is an OSError)
            raise InfrastructureError(f"docker: running {ref}: {err}") from None
        finally:
            if container is not None:
                with contextlib.suppress(docker.errors.NotFound):
                    container.remove(force=True)


@contextlib.contextmanager
def connect() -> Iterator[Engine]:
    """The engine of ``DOCKER_HOST`` (default: the local socket), cleaned up on exit."""
    try:
        client = docker.from_env(timeout=API_TIMEOUT_S)
        client.ping()
    except docker.errors.DockerException as err:
        raise InfrastructureError(
            f"docker: no engine answers ({err}); start one (as root: bash .ci/docker-up.sh)"
        ) from None
    try:
        with tempfile.TemporaryDirectory(
            prefix="flagci-engine-", ignore_cleanup_errors=True
        ) as scratch:
            yield Engine(client=client, scratch=Path(scratch))
    finally:
        client.close()
