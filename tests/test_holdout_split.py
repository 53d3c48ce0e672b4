"""benchmarks/holdout.py splits the published runs into two fixed halves by id: the same split on
every machine and every run, both halves populated in each published file."""
import hashlib

from benchmarks.holdout import half
from tests.validation.cases import CASES_FILE, MODERN_CASES_FILE, load_cases


def test_the_split_is_fixed_by_the_case_id():
    assert half("DGXC-GPT3-175B-BF16-128") == ("A" if hashlib.sha256(b"DGXC-GPT3-175B-BF16-128").digest()[0] % 2 == 0
                                               else "B")
    for path in (CASES_FILE, MODERN_CASES_FILE):
        halves = [half(case["id"]) for case in load_cases(path)["training"]]
        assert set(halves) == {"A", "B"}, path.name
        assert halves == [half(case["id"]) for case in load_cases(path)["training"]]
