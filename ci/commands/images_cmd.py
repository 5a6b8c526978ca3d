"""``flagci images build|list|inspect|save|base``: pinned lane images, through the Docker SDK."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ci.build import baseimage, images
from ci.build.engine import connect
from ci.commands.options import Environ, cache_from, matrix_from
from ci.commands.output import add_json_option, print_json
from ci.core import reporter, tables
from ci.core.errors import UsageError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = subparsers.add_parser("images", help="build, list, inspect and save lane images")
    sub = group.add_subparsers(dest="images_command", required=True, metavar="ACTION")

    build = sub.add_parser("build", help="build lane images (a no-op where the tag exists)")
    build.add_argument("lanes", nargs="*", metavar="LANE", help="default: the default lane")
    build.add_argument(
        "--wheelhouse",
        type=Path,
        default=None,
        help="where each lane's wheels are downloaded and checked, a folder per lane"
        " (default: the wheelhouse of $FLAGCI_CACHE, shared with local runs)",
    )
    build.add_argument("--no-cache", action="store_true", help="build every layer anew")
    build.set_defaults(handler=_build)

    listing = sub.add_parser("list", help="local lane images, newest first")
    listing.add_argument("lanes", nargs="*", metavar="LANE", help="default: every lane")
    add_json_option(listing)
    listing.set_defaults(handler=_list)

    inspect = sub.add_parser(
        "inspect", help="compare an image's labels with the lane matrix; exit 1 on drift"
    )
    inspect.add_argument("lanes", nargs="*", metavar="LANE", help="default: the default lane")
    inspect.add_argument(
        "--image", help="the image to inspect (default: the lane's newest local image)"
    )
    add_json_option(inspect)
    inspect.set_defaults(handler=_inspect)

    save = sub.add_parser("save", help="docker-save each lane's current image into a folder")
    save.add_argument("lanes", nargs="+", metavar="LANE")
    save.add_argument("--output", type=Path, required=True, help="folder for the .tar files")
    save.set_defaults(handler=_save)

    base = sub.add_parser("base", help="make the local Debian base image if missing")
    base.set_defaults(handler=_base)


def _build(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    lanes = matrix.select(args.lanes)
    wheels = (args.wheelhouse or cache_from(environ) / "wheelhouse").resolve()
    with connect() as engine:
        for lane in lanes:
            report = images.build(engine, matrix, lane, wheels, nocache=args.no_cache)
            if not report.built:
                print(f"{report.lane}: {report.ref} (exists)")
                continue
            print(f"{report.lane}: built {report.ref} in {report.seconds:.1f} s")
            for step in report.steps:
                mark = "cached" if step.cached else "      "
                print(
                    f"  {step.number:>3}/{step.total}  {step.seconds:7.1f} s  {mark}"
                    f"  {step.instruction[:80]}"
                )
    return 0


def _list(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    wanted: list[str | None] = [matrix.lane(name).name for name in args.lanes] or [None]
    rows: list[dict[str, object]] = []  # --json: the size in bytes
    shown = tables.table("image", "lane", "compiler", "size", "created", "state", right=["size"])
    with connect() as engine:
        for name in wanted:
            for info in images.lane_images(engine, name):
                lane_name = info.labels.get(images.LANE_LABEL, "")
                lane = matrix.lanes.get(lane_name)
                state = "not in the matrix"
                if lane is not None:
                    current = images.recipe_for(lane).content_hash
                    state = "current" if info.labels.get(images.HASH_LABEL) == current else "stale"
                ref = info.tags[0] if info.tags else info.id[:19]
                compiler = info.labels.get("org.flagci.compiler", "")
                created = info.created[:19]
                rows.append(
                    {
                        "image": ref,
                        "lane": lane_name,
                        "compiler": compiler,
                        "size_bytes": info.size,
                        "created": created,
                        "state": state,
                    }
                )
                size = f"{info.size / 1e9:.2f} GB"
                tables.add(shown, ref, lane_name, compiler, size, created, state)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no lane images", file=sys.stderr)
        return 0
    reporter.current().table(shown)
    return 0


def _inspect(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    lanes = matrix.select(args.lanes)
    if args.image and len(lanes) != 1:
        raise UsageError("--image inspects one image: name exactly one lane")
    drifted = False
    report: list[dict[str, object]] = []
    with connect() as engine:
        for lane in lanes:
            ref = args.image
            if ref is None:
                found = images.lane_images(engine, lane.name)
                if not found:
                    raise UsageError(f"lane '{lane.name}': no local image; build it first")
                ref = found[0].tags[0] if found[0].tags else found[0].id
            info = engine.image(ref)
            if info is None:
                raise UsageError(f"no image {ref}")
            current = images.recipe_for(lane).content_hash
            differences = images.drift(lane, info.labels, current)
            drift = [
                {"label": d.key, "image": d.image, "matrix": d.matrix, "text": str(d)}
                for d in differences
            ]
            report.append({"lane": lane.name, "image": ref, "drift": drift})
            if args.json:
                drifted = drifted or bool(differences)
                continue
            if not differences:
                print(f"{lane.name}: {ref} agrees with {matrix.source}")
                continue
            drifted = True
            print(f"{lane.name}: {ref} drifted from {matrix.source}:")
            for difference in differences:
                print(f"  {difference}")
    if args.json:
        print_json(report)
    return 1 if drifted else 0


def _save(args: argparse.Namespace, environ: Environ) -> int:
    matrix = matrix_from(args, environ)
    lanes = [matrix.lane(name) for name in args.lanes]
    with connect() as engine:
        for lane in lanes:
            ref = images.current_image(engine, lane)
            path, size = images.save(engine, ref, args.output)
            print(f"{lane.name}: {ref} -> {path} ({size / 1e9:.2f} GB)")
    return 0


def _base(args: argparse.Namespace, environ: Environ) -> int:
    with connect() as engine:
        print(baseimage.ensure(engine))
    return 0
