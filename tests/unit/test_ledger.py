"""The known-issue ledger: the seeded issues match the reported failure texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.core.errors import ConfigError
from ci.history.ledger import load_ledger
from ci.smoke.triage.signatures import signature_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# The failure texts as the two user reports quote them.
VERSIONS = {"iluvatar": "0.6.0+iluvatar3.6", "kunlun": "0.6.1+xpu3.6"}
REPORTED = {
    "iluvatar-cuda-target": (
        "iluvatar",
        "RuntimeError: 0 compatible backends for target (cuda) ([]).\nThere should only be one.",
    ),
    "iluvatar-mma-reduce-dominance": (
        "iluvatar",
        "vllm/v1/attention/ops/triton_unified_attention.py:179:0: note: Pipeline failed while"
        " executing [`TritonILUVATARGPUMMAReduceThreadLocality` on 'builtin.module' operation]\n"
        "RuntimeError: PassManager::run failed",
    ),
    "kunlun-gdn-uni-sram": (
        "kunlun",
        "triton.runtime.errors.OutOfResources: out of resource: uni_sram PassManager::run"
        " failed, Required: 0, Hardware limit: 0. Reducing block sizes or `num_stages` may help.",
    ),
}


@pytest.mark.parametrize("issue_id", sorted(REPORTED))
def test_the_seeded_issues_match_the_reported_failures(issue_id: str) -> None:
    vendor, text = REPORTED[issue_id]
    match = load_ledger().match(vendor, VERSIONS[vendor], "", text)
    assert match is not None and match.id == issue_id
    assert match.upstream.startswith("https://github.com/flagos-ai/FlagTree/issues/")


def test_the_kunlun_issue_records_both_claimed_fixes() -> None:
    issue = {i.id: i for i in load_ledger().issues}["kunlun-gdn-uni-sram"]
    assert issue.affected == ("0.6.1+xpu3.6",)
    assert issue.claimed_fixes == ("0.6.1a1+xpu3.6", "0.7.0rc2+xpu3.6")


def test_an_unrelated_failure_is_not_known() -> None:
    text = "out of resources: shared memory, Required: 262144, Hardware limit: 166912"
    assert load_ledger().match("kunlun", VERSIONS["kunlun"], "", text) is None


def test_an_issue_is_known_at_affected_and_claimed_fix_versions_only() -> None:
    text = "OutOfResources: out of resource: uni_sram"
    ledger = load_ledger()
    for version in ("0.6.1+xpu3.6", "0.6.1a1+xpu3.6", "0.7.0rc2+xpu3.6"):
        assert ledger.match("kunlun", version, "", text) is not None, version
    assert ledger.match("kunlun", "0.8.0+xpu3.6", "", text) is None


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('pattern = "(unclosed"', "issue 'x': key 'pattern': .*not a valid regular expression"),
        ('pattern = "a"\ncolour = "red"', "issue 'x': key 'colour': Extra inputs"),
        ('pattern = "a"\nupstream = "ftp://x"', "upstream"),
    ],
)
def test_a_bad_ledger_names_the_file_issue_and_key(tmp_path: Path, body: str, error: str) -> None:
    path = tmp_path / "known_issues.toml"
    upstream = "" if "upstream" in body else 'upstream = "https://example.org/1"\n'
    path.write_text(f'[[issue]]\nid = "x"\ntitle = "t"\ntests = "t"\n{upstream}{body}\n')
    with pytest.raises(ConfigError, match=error) as caught:
        load_ledger(path)
    assert str(path) in str(caught.value)


def test_duplicate_issue_ids_are_refused(tmp_path: Path) -> None:
    entry = (
        '[[issue]]\nid = "x"\ntitle = "t"\nupstream = "https://e.org"\npattern = "a"\ntests = "t"\n'
    )
    path = tmp_path / "known_issues.toml"
    path.write_text(entry + entry)
    with pytest.raises(ConfigError, match="used twice"):
        load_ledger(path)


def test_a_catch_all_message_from_another_kernel_is_another_bug() -> None:
    _, text = REPORTED["kunlun-gdn-uni-sram"]
    ledger = load_ledger()
    version = "0.6.1+xpu3.6"
    gdn = ledger.match("kunlun", version, "", text, "test_gdn_post_conv.py::test_compile[qwen3-s2]")
    assert gdn is not None and gdn.id == "kunlun-gdn-uni-sram"
    other = "test_unified_attention.py::test_compile[x]"
    assert ledger.match("kunlun", version, "", text, other) is None


def test_the_listed_gdn_signature_is_the_one_the_report_gets() -> None:
    # The report's own text (FlagTree#1126) signs to a key the ledger lists, so the issue
    # is found by signature whatever test id the failing test has.
    report = FIXTURES / "failures" / "kunlun-uni-sram.txt"
    key = signature_of("", report.read_text(encoding="utf-8"), None).key
    issue = load_ledger().match("kunlun", "0.6.1+xpu3.6", key, "", "test_some_other_kernel")
    assert issue is not None and issue.id == "kunlun-gdn-uni-sram"
