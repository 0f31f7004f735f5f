"""Does a graded cell's seal hold only for the course's grade() and its own points?"""

from __future__ import annotations

import pytest

from autograder.confinement import seal as _seal


@pytest.fixture
def sealer(tmp_path, monkeypatch):
    key = b"k" * 32
    path = tmp_path / "key"
    path.write_bytes(key)
    monkeypatch.setenv(_seal.KEY_FILE_ENV, str(path))

    def grade_like(assignment, group, earned):
        return seal(assignment, group, earned)

    seal = _seal.install(grade_like.__code__)
    assert not path.exists(), "the key file must be gone once the kernel has read it"
    return key, grade_like, seal


def test_a_sealed_result_checks_out_for_its_own_cell_and_points(sealer):
    key, grade_like, _ = sealer
    text = "feedback\n" + grade_like("branch_repair", "repair", 2.0) + "\n"
    assert _seal.check(key, text, "branch_repair", "repair", 2.0)
    assert not _seal.check(key, text, "branch_repair", "repair", 3.0)
    assert not _seal.check(key, text, "branch_repair", "traces", 2.0)
    assert not _seal.check(b"x" * 32, text, "branch_repair", "repair", 2.0)
    assert _seal.strip(text).strip() == "feedback"


def test_a_forged_or_doubled_seal_fails(sealer):
    key, grade_like, _ = sealer
    genuine = grade_like("branch_repair", "repair", 0.0)
    forged = genuine.replace(" 0 ", " 3 ")
    assert not _seal.check(key, forged, "branch_repair", "repair", 3.0)
    assert not _seal.check(key, genuine + "\n" + genuine, "branch_repair", "repair", 0.0)


def test_only_grade_may_call_the_sealer(sealer):
    _, _, seal = sealer
    with pytest.raises(PermissionError):
        seal("branch_repair", "repair", 3.0)


def test_no_key_issued_means_no_sealer(monkeypatch):
    monkeypatch.delenv(_seal.KEY_FILE_ENV, raising=False)
    assert _seal.install((lambda: None).__code__) is None
