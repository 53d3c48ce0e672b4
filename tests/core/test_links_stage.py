"""The link stage's busiest links and per-link phases, worked without fabric-sized sorts or a
kinds x links matrix (stages/links.py), against the plain definitions."""
import numpy as np
import pytest

from designer.core.engine.stages.links import TOP_LINKS, _busiest


@pytest.mark.parametrize("n", [0, 5, TOP_LINKS, TOP_LINKS + 1, 5000])
def test_the_busiest_links_are_a_stable_sort_cut_at_k(n):
    rng = np.random.default_rng(n)
    for values in (rng.random(n), rng.integers(0, 4, n) / 4.0, np.zeros(n), np.round(rng.random(n), 2)):
        expected = np.argsort(-values, kind="stable")[:TOP_LINKS]
        assert np.array_equal(_busiest(values, TOP_LINKS), expected)


def test_the_busiest_links_with_not_a_number_among_them():
    values = np.array([0.5, np.nan, 0.25, 0.5] * 100)
    assert np.array_equal(_busiest(values, 7), np.argsort(-values, kind="stable")[:7])


@pytest.mark.parametrize("sparse", [False, True])
def test_each_links_phase_is_the_first_kind_with_its_largest_share(sparse):
    """The phase a link is busiest in: the largest share of a phase's seconds, the first kind of
    equals, none ("") for an idle link; the same as an argmax over a kinds x links matrix."""
    from types import SimpleNamespace

    from designer.core.engine.stages.links import _phases_and_critical

    rng = np.random.default_rng(7)
    n = 3000
    sel = np.sort(rng.choice(n, 900, replace=False)) if sparse else slice(None)
    m = 900 if sparse else n
    busy = {"tp_comm": rng.integers(0, 3, m) * 0.5, "pp_comm": rng.integers(0, 3, m) * 0.25,
            "dp_comm": np.where(rng.random(m) < 0.5, 0.0, rng.random(m)), "ep_comm": np.zeros(m)}
    phase_s = {"tp_comm": 2.0, "pp_comm": 1.0, "dp_comm": 1.5, "ep_comm": 0.0}
    used = {"dp:all_reduce": SimpleNamespace(bottleneck_links=[1]), "tp:all_reduce": SimpleNamespace(bottleneck_links=[])}
    result = SimpleNamespace(link_phase_exposed={"dp_comm": True, "tp_comm": True})
    _phases_and_critical(result, used, busy, phase_s, sel, n)
    kinds = list(busy)
    share = np.array([np.minimum(1.0, busy[k] / phase_s[k]) if phase_s[k] > 0 else np.zeros(m) for k in kinds])
    names = np.array(kinds + [""], dtype=object)
    expected = np.full(n, "", dtype=object)
    expected[sel] = names[np.where(share.max(axis=0) > 0, np.argmax(share, axis=0), len(kinds))]
    words = np.array(result.link_phase_names, dtype=object)[result.link_phase_code]  # as Evaluation.link_phase
    assert list(words) == list(expected)
    assert {k for k in set(expected)} >= {"", "tp_comm", "pp_comm", "dp_comm"}  # every case met
    dp = np.zeros(n, bool)
    top = busy["dp_comm"].max()
    dp[sel] = (busy["dp_comm"] >= 0.99 * top) & (share[2] >= 0.5)
    assert np.array_equal(result.link_bottleneck["dp_comm"], dp) and not result.link_bottleneck["tp_comm"].any()
    assert np.array_equal(result.link_critical, dp)
