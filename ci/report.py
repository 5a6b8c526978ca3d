"""A run's human-readable results: ``index.html`` (opens from disk) and the summary table."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ci import atomic
from ci.junit import CaseResult

OUTCOMES = ("passed", "failed", "error", "skipped")


@dataclass(frozen=True)
class Column:
    lane: str
    node: str

    @property
    def label(self) -> str:
        return f"{self.lane} @ {self.node}" if self.node else self.lane


def columns(results: Iterable[CaseResult]) -> list[Column]:
    return sorted({Column(r.lane, r.node) for r in results}, key=lambda c: (c.lane, c.node))


def counts(results: Iterable[CaseResult]) -> dict[Column, Counter[str]]:
    table: dict[Column, Counter[str]] = defaultdict(Counter)
    for r in results:
        table[Column(r.lane, r.node)][r.outcome] += 1
    return table


def summary_table(results: list[CaseResult]) -> str:
    """Plain-text table: one row per (lane, node), then the first failures."""
    table = counts(results)
    cols = columns(results)
    width = max([len(c.label) for c in cols] + [len("lane @ node")])
    lines = [f"{'lane @ node':<{width}}  {'passed':>6} {'failed':>6} {'error':>6} {'skipped':>7}"]
    for col in cols:
        c = table[col]
        lines.append(
            f"{col.label:<{width}}  {c['passed']:>6} {c['failed']:>6} {c['error']:>6}"
            f" {c['skipped']:>7}"
        )
    bad = [r for r in results if r.outcome in ("failed", "error")]
    if bad:
        lines.append("")
        lines.append(f"{len(bad)} failing testcase(s):")
        for r in bad[:15]:
            kind = r.properties.get("failure_kind", r.outcome)
            first = (r.message or r.text).strip().splitlines()[:1]
            lines.append(f"  [{kind}] {r.lane} {r.test_id}: {first[0][:160] if first else ''}")
        if len(bad) > 15:
            lines.append(f"  ... and {len(bad) - 15} more (see index.html)")
    return "\n".join(lines)


_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
td.passed { background: #d6f5d6; } td.failed, td.error { background: #f8c9c9; }
td.skipped { background: #eee; color: #777; } td.absent { background: #fff; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; white-space: pre-wrap; }
.failure { border-left: 4px solid #c33; padding-left: 0.8em; margin: 1em 0; }
"""


def _anchor(index: int) -> str:
    return f"failure-{index}"


def write_html(results: list[CaseResult], dest: Path, title: str) -> Path:
    e = html.escape
    cols = columns(results)
    table = counts(results)
    grid: dict[str, dict[Column, CaseResult]] = defaultdict(dict)
    for r in results:
        grid[r.test_id][Column(r.lane, r.node)] = r
    failures = [r for r in results if r.outcome in ("failed", "error")]
    anchors = {id(r): _anchor(i) for i, r in enumerate(failures)}

    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        "<h2>Summary</h2><table><tr><th>lane @ node</th>",
        *[f"<th>{o}</th>" for o in OUTCOMES],
        "</tr>",
    ]
    for col in cols:
        cells = "".join(f"<td>{table[col][o]}</td>" for o in OUTCOMES)
        out.append(f"<tr><td>{e(col.label)}</td>{cells}</tr>")
    out.append("</table><h2>Lane x test</h2><table><tr><th>test</th>")
    out.extend(f"<th>{e(c.label)}</th>" for c in cols)
    out.append("</tr>")
    for test_id in sorted(grid):
        out.append(f"<tr><td>{e(test_id)}</td>")
        for col in cols:
            cell = grid[test_id].get(col)
            if cell is None:
                out.append("<td class='absent'></td>")
            elif id(cell) in anchors:
                link = f"<a href='#{anchors[id(cell)]}'>{cell.outcome}</a>"
                out.append(f"<td class='{cell.outcome}'>{link}</td>")
            else:
                out.append(f"<td class='{cell.outcome}'>{cell.outcome}</td>")
        out.append("</tr>")
    out.append(f"</table><h2>Failures ({len(failures)})</h2>")
    for r in failures:
        props = r.properties
        out.append(f"<div class='failure' id='{anchors[id(r)]}'>")
        out.append(f"<h3>{e(r.test_id)}</h3><p>{e(Column(r.lane, r.node).label)}")
        out.append(f" &middot; kind: <b>{e(props.get('failure_kind', r.outcome))}</b>")
        if props.get("signature"):
            out.append(f" &middot; signature: <code>{e(props['signature'])}</code>")
        if props.get("artifacts"):
            link = e(props["artifacts"], quote=True)
            out.append(f" &middot; <a href='{link}/'>artifacts</a>")
        out.append(f"</p><pre>{e(r.message)}</pre>")
        if r.text and r.text.strip() != r.message.strip():
            out.append(f"<details><summary>details</summary><pre>{e(r.text)}</pre></details>")
        out.append("</div>")
    out.append("</body></html>")
    atomic.write_text(dest, "\n".join(out))
    return dest
