"""The second labelling of frozen-17 to frozen-35: well-formed, complete, quoted as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import label_agreement

README = Path(label_agreement.__file__).resolve().parents[1] / "README.md"


def test_the_second_labels_cover_exactly_the_relabelled_splits() -> None:
    first, second = label_agreement.first_labels(), label_agreement.second_labels()
    assert set(second) == set(first)
    assert len(first) == 682


def test_the_readme_quotes_the_agreement_as_it_is() -> None:
    first, second = label_agreement.first_labels(), label_agreement.second_labels()
    headline = label_agreement.report(first, second, {}).splitlines()[0]
    # "Two labellings of ...: the same class for N of M (P%) of the logs"
    agreed = headline.split("; ")[0]
    assert agreed in " ".join(README.read_text(encoding="utf-8").split())


def test_the_report_counts_agreement_and_the_code_against_each_labelling() -> None:
    first = {"a": "crash", "b": "driver", "c": "codegen"}
    second = {
        "a": label_agreement.SecondLabel("crash", True),
        "b": label_agreement.SecondLabel("codegen", False),
        "c": label_agreement.SecondLabel("codegen", True),
    }
    text = label_agreement.report(first, second, {"code": {"a": "crash", "b": "codegen", "c": "x"}})
    assert text.splitlines()[0].startswith("Two labellings of frozen-17 to frozen-35: the same")
    assert "the same class for 2 of 3 (67%) of the logs; 2 of 2 (100%)" in text
    assert "| driver | codegen | 1 |" in text
    assert "| code | 1 of 3 (33%) | 2 of 3 (67%) | 1 of 2 (50%) |" in text


@pytest.mark.parametrize(
    ("entry", "error"),
    [
        ('id = "x"\nkind = "crash"\n', r"label 1: keys \['id', 'kind'\], expected"),
        ('id = "x"\nkind = "boom"\nsure = true\n', r"label 1: key 'kind': unknown kind 'boom'"),
    ],
)
def test_a_bad_second_label_names_the_file_and_the_key(
    tmp_path: Path, entry: str, error: str
) -> None:
    path = tmp_path / "second.toml"
    path.write_text(f"[[label]]\n{entry}", encoding="utf-8")
    with pytest.raises(ValueError, match=f"{tmp_path}/second.toml: {error}"):
        label_agreement.second_labels(path)


def test_an_id_labelled_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "second.toml"
    one = '[[label]]\nid = "x"\nkind = "crash"\nsure = true\n'
    path.write_text(one + one, encoding="utf-8")
    with pytest.raises(ValueError, match=r"label 2: key 'id': 'x' labelled twice"):
        label_agreement.second_labels(path)
