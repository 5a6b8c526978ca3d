"""``clean_log``: a log reads the same whatever wrapped it (loggers, CI services, web pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import triage_score, triage_wrappers
from ci.smoke.contract.taxonomy import clean_log, kind_of

PLAIN = (
    "Traceback (most recent call last):\n"
    '  File "/x/triton/compiler/compiler.py", line 3, in compile\n'
    "    pm.run(mod)\n"
    "RuntimeError: PassManager::run failed"
)


def _wrapped(header: str, text: str = PLAIN) -> str:
    return "\n".join(header.format(i=i) + line for i, line in enumerate(text.splitlines()))


@pytest.mark.parametrize(
    "header",
    [
        "vllm-worker-1  | ",  # docker compose
        "[gw3] ",  # pytest-xdist
        "[pod/trainer-0/main] ",  # a Kubernetes log collector
        "[2026-12-01T07:00:0{i}.123Z] ",  # Jenkins' timestamper
        "[2026-12-01 07:00:0{i}] [Stage-0] ",  # two headers, nested
        "2026-12-01 07:00:0{i},12{i} - vllm.worker - ",  # Python's logging, its name
        "{i}: ",  # CTest's test number
        "│ ",  # a box drawn around a log
    ],
)
def test_a_header_most_lines_share_is_cut(header: str) -> None:
    assert clean_log(_wrapped(header)) == PLAIN


def test_xla_and_tensorflows_log_header_is_cut_on_a_line_of_its_own() -> None:
    # TSL's logging: a date, a level letter, the source file; a header no other line shares.
    line = "Results do not match the reference. This is likely a bug."
    logged = f"2024-09-30 16:07:48.549145: E external/xla/service/gemm_autotuner.cc:958] {line}"
    assert clean_log(f"{logged}\nDifference at 32: 400, expected 772") == (
        f"{line}\nDifference at 32: 400, expected 772"
    )


def test_a_logger_level_that_varies_line_by_line_is_part_of_its_header() -> None:
    levels = ("ERROR", "INFO", "WARNING", "ERROR")
    text = "\n".join(
        f"2026-12-01 07:00:00,000 - root - {levels[i]} - {line}"
        for i, line in enumerate(PLAIN.splitlines())
    )
    assert clean_log(text) == PLAIN


def test_a_level_word_on_one_line_is_the_tools_own() -> None:
    text = _wrapped(
        "[build] ",
        "WARNING: 'makeinfo' is missing on your system.\n"
        "         You might want to install the Texinfo package\n"
        "make[3]: *** [Makefile:1781: doc/bfd.info] Error 127",
    )
    assert clean_log(text).startswith("WARNING: 'makeinfo' is missing")


@pytest.mark.parametrize(
    "text",
    [
        # Lines the tool itself repeats: a pytest summary, a C++ backtrace, a linker's lines,
        # a compiler's diagnostics at one place, a profile's rows.
        "FAILED t.py::test_a[1] - AssertionError: x\nFAILED t.py::test_a[2] - AssertionError: y\n"
        "FAILED t.py::test_a[3] - AssertionError: z",
        "frame #0: c10::Error::Error() + 0x1\nframe #1: at::native::f() + 0x2\n"
        "frame #2: python3() [0x5]",
        "/usr/bin/ld: cannot find -lcuda\n/usr/bin/ld: cannot find -lcudart\n"
        "/usr/bin/ld: link failed",
        "main.c:3:5: error: unknown type\nmain.c:4:5: error: unknown type\n"
        "main.c:5:5: error: unknown type",
        "58.03% libtriton.so [.] mlir::sort\n16.37% libtriton.so [.] llvm::DenseMap\n"
        "3.37% libtriton.so [.] mlir::Value::getDefiningOp",
    ],
)
def test_lines_the_tool_repeats_are_not_a_header(text: str) -> None:
    assert clean_log(text) == text


def test_web_escapes_and_colour_anywhere_in_a_line_are_undone() -> None:
    text = "\x1b[1mLLVM ERROR:\x1b[0m &#39;tt.dot&#39; op requires &lt;4 warps&gt;"
    assert clean_log(text) == "LLVM ERROR: 'tt.dot' op requires <4 warps>"


def test_a_prefix_takes_one_space_and_the_indentation_after_it_is_kept() -> None:
    quoted = _wrapped("> ")
    assert clean_log(quoted) == PLAIN
    nested = _wrapped("2026-12-01T07:00:00Z    E1201 07:00:00.123 4711 t.py:1] ")
    assert clean_log(nested) == PLAIN


def test_a_paste_indented_as_a_whole_is_dedented() -> None:
    assert clean_log(_wrapped("    ")) == PLAIN
    assert kind_of(clean_log(_wrapped("    "))) == kind_of(PLAIN)


def test_a_debuggers_report_of_an_exception_reads_as_pythons() -> None:
    """VS Code prints the type on one line and the message on the next: one exception line,
    as Python prints it, so it is the same error (and key) as the plain traceback's."""
    frames = '  File "/x/autotune.py", line 93, in run\n    best = min(timings)\n'
    shown = "Exception has occurred: TypeError\n'<' not supported between 'tuple' and 'float'\n"
    printed = "TypeError: '<' not supported between 'tuple' and 'float'\n"
    assert clean_log(shown + frames) == printed + frames.rstrip("\n")
    # Without a message the type stands alone; a frame is never taken for the message.
    assert clean_log("Exception has occurred: AssertionError\n" + frames).startswith(
        "AssertionError\n  File "
    )


# Every 10th labelled log of more than one line: a tenth of the corpus keeps this quick;
# benchmarks/triage_wrappers.py measures all of it.
_SAMPLE = [
    log
    for _, path in triage_score.every_set()
    for log in triage_score.load(path)
    if sum(1 for line in log.text.splitlines() if line.strip()) > 1
][::10]


@pytest.mark.parametrize("wrapping", sorted(triage_wrappers.WRAPPERS))
def test_no_wrapping_moves_a_labelled_logs_class_or_key(wrapping: str, tmp_path: Path) -> None:
    moved = triage_wrappers.moved(_SAMPLE, triage_wrappers.WRAPPERS[wrapping], tmp_path)
    assert [(log.id, change) for log, change in moved] == []
