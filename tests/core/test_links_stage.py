"""The link stage's busiest links and per-link phases, worked without fabric-sized sorts or a
kinds x links matrix (stages/links.py), against the plain definitions on every example's answer."""
import numpy as np
import pytest

from designer.core.engine.evaluate import Engine
from designer.core.engine.stages.links import ALIKE, BOTTLENECK_SHARE, TOP_LINKS, kind_of
from designer.core.io import load_document
from designer.core.model.jobs import JobPlacement, JobSpec
from tests.conftest import EXAMPLES

SMALL_JOB = "a 64-GPU job on the last servers of a 1,024-GPU fabric"  # its few loaded links are worked on apart
EXAMPLE_FILES = sorted(path.name for path in EXAMPLES.glob("*.yaml")) + [SMALL_JOB]


def job_results(name: str) -> list:
    """Every job's evaluation of an example, or of SMALL_JOB."""
    if name == SMALL_JOB:
        doc, small = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"), load_document(
            EXAMPLES / "h100-64gpu-infiniband.yaml")
        doc.set_jobs([JobSpec(name="small", workload=small.spec.workload, parallelism=small.spec.parallelism,
                              placement=JobPlacement(nodes=[n.id for n in doc.nodes[-8:]]))])  # far from link 0
    else:
        doc = load_document(EXAMPLES / name)
    result = Engine().evaluate(doc)
    return [job.result for job in result.jobs] if result.jobs else [result]


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_the_busiest_link_rows_are_a_stable_sort_of_the_loaded_links_cut_at_k(name):
    for result in job_results(name):
        util = result.link_utilization_array
        loaded = np.flatnonzero(sum(result.link_load.values()) > 0)
        busiest = loaded[np.argsort(-util[loaded], kind="stable")][:TOP_LINKS]
        assert [row["link"] for row in result.link_utilization] == [result.link_ids[i] for i in busiest.tolist()]


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_each_links_phase_is_the_first_kind_with_its_largest_share(name):
    """The phase a link is busiest in: the largest share of a phase's seconds, the first kind of
    equals, none ("") for an idle link; a phase's bottleneck links are within ALIKE of its busiest
    and busy at least BOTTLENECK_SHARE of it; the critical ones are the bottlenecks of exposed phases."""
    for result in job_results(name):
        kinds = list(result.link_busy_s)
        n = len(result.link_ids)
        share = np.array([np.minimum(1.0, result.link_busy_s[k] / result.link_phase_s[k])
                          if result.link_phase_s[k] > 0 else np.zeros(n) for k in kinds]).reshape(len(kinds), n)
        names = np.array(kinds + [""], dtype=object)
        expected = names[np.where(share.max(axis=0, initial=0.0) > 0, np.argmax(share, axis=0), len(kinds))]
        assert list(result.link_phase) == list(expected)
        critical = np.zeros(n, bool)
        for i, kind in enumerate(kinds):
            busy = result.link_busy_s[kind]
            flag = result.link_bottleneck[kind]
            if flag.any():  # (a phase no collective of which is bound by the network flags none)
                assert np.array_equal(flag, (busy >= ALIKE * busy.max()) & (share[i] >= BOTTLENECK_SHARE)), kind
            if result.link_phase_exposed[kind]:
                critical |= flag
        assert np.array_equal(result.link_critical, critical)


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_each_bottleneck_row_is_the_costliest_collective_of_its_kind_and_resource(name):
    """One row per (traffic kind, resource), and it names the costliest collective that has that
    resource as its bottleneck."""
    for result in job_results(name):
        rows = [row for row in result.bottlenecks if "collective" in row]
        assert len({(row["kind"], row["resource"]) for row in rows}) == len(rows)
        for row in rows:
            times = {key.split(":")[1]: c["time_s"] for key, c in result.collectives.items()
                     if kind_of(key.split(":")[0]) == row["kind"] and c["bottleneck"] == row["resource"]}
            assert times[row["collective"]] == max(times.values())

