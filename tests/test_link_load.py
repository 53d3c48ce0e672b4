"""Link load that answers the engineer's question (which links limit which phase): bytes by kind, busy share of
the step and of the phase, the phase's bottleneck and the critical path; symmetric links as one
class. Driven through the CLI and the report as a user runs them."""
import json

import numpy as np
import pytest

from designer.core.analysis.link_load import LinkLoad, link_load, seconds_text
from designer.core.engine.evaluate import Engine
from tests.pdf_text import text_lines
from designer.core.export.report import render_report
from designer.core.io.files import load_document
from tests.conftest import EXAMPLES, run_cli

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"
A100 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


@pytest.fixture
def dp_bound(tmp_path):
    """The 64-GPU example with 25 Gb/s rails instead of 400: the DP gradient reduction takes the
    network for seconds and a large part of it is exposed."""
    path = tmp_path / "dp-bound.yaml"
    path.write_text(H100.read_text().replace('"bandwidth_gbps": 400', '"bandwidth_gbps": 25'))
    return path


def evaluate_json(*args):
    code, out, err = run_cli("evaluate", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_dp_bound_design_says_its_rails_are_the_bottleneck_of_the_dp_phase(dp_bound):
    out = evaluate_json(dp_bound)
    top = out["link_classes"][0]
    assert top["class"] == "64 rail links" and top["links"] == 64 and top["cable"] == "25 Gb/s InfiniBand"
    dp = top["phases"][0]
    assert dp["phase"] == "dp_comm" and dp["bottleneck_of_phase"] and dp["critical_path"]
    # the phase is the DP traffic's whole time (exposed + hidden), and the rails are busy nearly all of it
    assert dp["phase_s"] == pytest.approx(out["breakdown_s"]["dp_comm"] + out["hidden_comm_s"]["dp_comm"])
    assert dp["busy_share_of_phase"] > 0.9
    assert top["busy_share_of_step"] == pytest.approx(dp["busy_s"] / out["step_time_s"])
    assert "the bottleneck of the DP phase" in top["text"]
    assert f"of its {seconds_text(dp['phase_s'])}" in top["text"] and "on the critical path" in top["text"]
    # the per-link rows carry the same figures
    row = out["link_utilization"][0]
    assert row["phase"] == "dp_comm" and row["bottleneck_of_phase"] and row["critical_path"]
    assert row["busy_share_of_phase"] == pytest.approx(dp["busy_share_of_phase"])


def test_a_phase_hidden_behind_compute_is_a_bottleneck_off_the_critical_path():
    """The 2:1 Ethernet example with its PP sends overlapped (a framework that posts them
    asynchronously: no stage waits on its exchanges) and spread evenly over the spine (many queue
    pairs per connection, so its ECMP hashing does not bound them): its rails bottleneck that phase,
    but the step does not wait for it; they are on the critical path through the exposed DP phase."""
    out = evaluate_json(EXAMPLES / "h100-roce-2to1-ethernet.yaml", "--set", "calibration.pp_p2p_blocking_share_1f1b=0",
                        "--set", "calibration.ecmp_qps_per_connection=1024")
    top = out["link_classes"][0]
    pp = next(p for p in top["phases"] if p["phase"] == "pp_comm")
    assert pp["bottleneck_of_phase"] and not pp["critical_path"]
    assert "off the critical path (the PP phase is hidden behind compute)" in top["text"]
    assert top["critical_path"]  # through DP
    for c in out["link_classes"]:  # the rule, for every class and phase
        for p in c["phases"]:
            exposed = p["exposed_s"] > 0 and p["exposed_s"] >= 0.01 * p["phase_s"]
            assert p["critical_path"] == (p["bottleneck_of_phase"] and exposed)
        assert c["critical_path"] == any(p["critical_path"] for p in c["phases"])


def test_symmetric_rails_come_out_as_one_class_with_their_count():
    doc = load_document(H100)
    result = Engine().evaluate(doc)
    classes = link_load(result, doc).classes()
    rails = classes[0]
    assert rails.label == "64 rail links"
    assert sorted(result.link_ids[i] for i in rails.members) == sorted(f"l{i}" for i in range(64))
    idle = classes[1]  # the leaf-spine bundles carry nothing in this job
    assert idle.tier == "leaf-spine links" and len(idle.members) == 8 and idle.busy_share_of_step == 0


def test_a_slowed_rail_leaves_the_class_of_its_neighbours():
    out = evaluate_json(H100, "--set", "links[l5].slowdown=2")
    by_members = {tuple(c["members"]): c for c in out["link_classes"]}
    slow = by_members[("l5",)]
    assert slow["class"] == "rail link" and slow["links"] == 1
    assert sum(c["links"] for c in out["link_classes"] if c["tier"] == "rail links") == 64


def test_heat_values_are_the_engines_per_link_loads():
    doc = load_document(A100)
    result = Engine().evaluate(doc)
    busy = sum(result.link_busy_s.values())
    rate = result.link_capacity_Bps
    for kind, per_link in result.link_load.items():  # busy seconds are the bytes at the engine's rate
        assert np.allclose(result.link_busy_s[kind], per_link / rate)
    assert np.allclose(result.link_utilization_array, np.minimum(1.0, busy / result.step_time_s))
    analysis = link_load(result, doc)
    for c in analysis.classes():
        answer = analysis.answer(c.members[0])
        assert answer.busy_share_of_step == pytest.approx(float(result.link_utilization_array[c.members[0]]))
        assert answer.bytes_per_step == pytest.approx(sum(float(v[c.members[0]]) for v in result.link_load.values()))


def test_a_result_keeps_its_links_bytes_and_words_their_busy_seconds_from_them(dp_bound):
    """A result keeps each link's bytes per kind and its rate; the seconds busy (bytes over rate, 0 for a
    link without one) are made when read, not kept beside them (6.8 MB a result at 131k GPUs), and the
    analysis words a link's phases from them as from the stage's own arrays."""
    doc = load_document(dp_bound)
    result = Engine().evaluate(doc)
    rate = result.link_capacity_Bps
    kept = [a for value in vars(result).values()
            for a in (value.values() if isinstance(value, dict) else [value]) if isinstance(a, np.ndarray)]
    assert result.link_busy_s
    for kind, busy in result.link_busy_s.items():
        assert np.array_equal(busy, np.where(rate > 0, result.link_load[kind] / rate, 0.0))
        assert not any(a.shape == busy.shape and np.array_equal(a, busy) for a in kept)
    analysis = link_load(result, doc)
    for index in range(analysis.n):
        for phase in analysis.answer(index, with_class=False).phases:
            assert phase.busy_s == float(result.link_busy_s[phase.kind][index])


def test_the_report_lists_classes_not_identical_rows(tmp_path):
    doc = load_document(A100)
    result = Engine().evaluate(doc)
    lines = text_lines(render_report(doc, result).to_bytes())
    start = next(i for i, line in enumerate(lines) if line.endswith("Most utilized links"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("10 "))
    section = "\n".join(lines[start:end])
    assert "768 rail links" in section and "bottleneck of DP" in section and "busy of its phase" in section
    assert "0.53%" not in section and "0.51%" not in section  # the old rows: one member each, all alike
    assert section.count("768 rail links") == 1 and "256 rail links" in section  # two loads, two rows
    assert "l792" not in section  # no arbitrary member stands for its class


def test_the_id_index_finds_each_id_as_a_dict_would():
    from designer.core.model.id_index import IdIndex

    ids = ["l0", "spine0-leaf1", "l0", "", "é-link"] + [f"l{i}" for i in range(1, 3000)]
    index, wanted = IdIndex(ids), {lid: i for i, lid in enumerate(ids)}
    assert all(index.get(lid) == i for lid, i in wanted.items())  # a repeated id: its last place
    assert index.get("l3000") is None and index.get("nowhere") is None
    assert IdIndex([]).get("l0") is None
    many = [f"link{i}" for i in range(40000)]  # hashed in parts
    index = IdIndex(many)
    assert all(index.get(lid) == i for i, lid in enumerate(many)) and index.get("link40000") is None


def test_the_id_index_moved_by_ids_put_and_taken_finds_each_id_as_one_made_anew():
    import random

    from designer.core.model.id_index import IdIndex

    rng = random.Random(3)
    names = [f"l{i}" for i in range(25)] + ["spine0-leaf1", ""]
    for _ in range(300):
        ids = [rng.choice(names) for _ in range(rng.randint(0, 40))]  # repeated ids among them
        index, moves = IdIndex(list(ids)), []
        for _ in range(rng.randint(1, 6)):
            if ids and rng.random() < 0.5:
                place = rng.randrange(len(ids))
                moves.append((False, place, ids.pop(place)))
            else:
                place, new = rng.randint(0, len(ids)), rng.choice(names + ["new"])
                ids.insert(place, new)
                moves.append((True, place, new))
        moved, fresh = index.moved(ids, moves), IdIndex(ids)
        for lid in names + ["new", "nowhere"]:
            assert moved.get(lid) == fresh.get(lid) and moved.count(lid) == fresh.count(lid)


def test_the_busiest_link_rows_agree_with_the_per_link_arrays_and_keep_the_names_of_their_evaluation():
    """link_utilization is made when first read (a plan costs no row dicts it never shows): its
    rows are the per-link arrays' busiest links, under the names they had when evaluated."""
    doc = load_document(A100)
    result = Engine().evaluate(doc)
    util = result.link_utilization_array
    loaded = sum(result.link_load.values()) > 0
    busiest = np.flatnonzero(loaded)[np.argsort(-util[loaded], kind="stable")][:200]
    first = doc.links[int(busiest[0])]
    name = first.id
    doc.update(first.id, bandwidth_gbps=first.bandwidth_gbps / 2)  # the document moves on
    doc.links[int(busiest[0])].id = "renamed"  # even by hand
    rows = result.link_utilization
    assert [r["link"] for r in rows][1:] == [result.link_ids[i] for i in busiest[1:].tolist()]
    assert rows[0]["link"] == name and len(rows) == min(200, int(loaded.sum()))
    for r, i in zip(rows, busiest.tolist()):
        assert r["utilization"] == util[i] and r["bytes"] == pytest.approx(sum(v[i] for v in result.link_load.values()))
        assert set(r["by_kind"]) == {kind for kind, v in result.link_load.items() if v[i] > 0}
    assert [r.get("phase", "") for r in rows] == [result.link_phase[i] for i in busiest.tolist()]
    assert result.as_json(links=7)["link_utilization"] == rows[:7]


def _same_class(alone, grouped) -> bool:
    return (np.array_equal(alone.members, grouped.members) and alone.tier == grouped.tier
            and alone.cable == grouped.cable and alone.busy_share_of_step == grouped.busy_share_of_step
            and alone.phase == grouped.phase)


def _saved_16k(tmp_path):
    """A 16,384-GPU fat-tree with GPT-3 175B on it (TP 8, PP 8), saved and read back as a user opens it."""
    from designer.core.generate import generate_fat_tree
    from designer.core.io import save_document
    from designer.core.model.job import Parallelism, Workload

    doc = generate_fat_tree(nodes=2048, gpu="H100", switch_radix=64)
    doc.set_job(Workload(preset="gpt3-175b", global_batch_size=4096, micro_batch_size=1),
                Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=8))
    path = tmp_path / "fat-tree-16k.yaml"
    save_document(doc, path)
    return path


def test_a_selected_links_class_found_alone_is_the_one_all_links_grouped_give(tmp_path):
    """The Inspector and the heat's tooltips word one link without grouping every link of the design:
    the same class and the same words as grouping all, on the examples (every link), a slowed cable, a
    spine down, and a saved 16k-GPU fat-tree (a sample of links, each class's first and last)."""
    designs = sorted(EXAMPLES.glob("*.yaml")) + [_saved_16k(tmp_path)]
    checked = 0
    for path in designs:
        doc = load_document(path)
        if path == A100:
            doc.update(doc.links[5].id, slowdown=2.0)  # one rail of a class of alike rails made slower
        result = Engine().evaluate(doc)
        if not result.link_load:
            continue
        grouped, alone = link_load(result, doc), link_load(result, doc)
        grouped.classes()
        alone.classes = lambda: pytest.fail("every link grouped to word one")
        if grouped.n <= 5000:
            links = range(grouped.n)
        else:
            ends = [int(c.members[k]) for c in grouped.classes() for k in (0, -1)]
            links = sorted(set(np.random.default_rng(1).integers(0, grouped.n, 200).tolist() + ends))
        for i in links:
            assert _same_class(alone.class_of(i), grouped.class_of(i)), (path.name, i)
            assert alone.text(i) == grouped.text(i)
            checked += 1
    assert checked > 4000


def test_a_cables_new_speed_carries_the_links_tiers_and_cables_forward():
    """After a cable's speed changes, the next evaluation's analysis re-reads that cable alone (the id
    table and every other link's tier and cable carried over) and words every link as a fresh analysis."""
    doc = load_document(A100)
    before = link_load(Engine().evaluate(doc), doc)
    before.prepare()  # as the window's worker does: the groups and the id table
    before_groups = before.made_groups
    doc.update(doc.links[5].id, bandwidth_gbps=200.0)
    doc.update(doc.links[9].id, note="reseated")
    result = Engine().evaluate(doc)
    carried, fresh = LinkLoad(result, doc, before_groups), LinkLoad(result, doc)
    carried.prepare()
    fresh.prepare()
    assert carried.made_groups.tier_code is before_groups.tier_code  # carried, not read again
    assert fresh.made_groups.tier_code is not before_groups.tier_code
    assert carried.made_groups.index is before_groups.index
    assert carried.groups().cable_words[carried.groups().cable_code[5]] == "200 Gb/s InfiniBand"
    for i in range(carried.n):
        assert carried.text(i) == fresh.text(i)
    assert [(c.label, c.cable, c.members.tolist()) for c in carried.classes()] == \
        [(c.label, c.cable, c.members.tolist()) for c in fresh.classes()]
    doc.update(doc.links[5].id, b=doc.links[7].b)  # a cable moved to another port: read anew
    moved = LinkLoad(Engine().evaluate(doc), doc, carried.made_groups)
    moved.prepare()
    assert moved.made_groups.tier_code is not before_groups.tier_code


def test_a_cables_delete_and_undo_move_the_links_tiers_and_cables_and_a_nic_cables_read_them_anew(monkeypatch):
    """A cable between switches deleted, then put back: the next analyses carry the links' tiers, cables and
    id table by that cable's place (no link read again) and word every link as fresh analyses do. A server's
    NIC cable changes the rails of the servers' cables: the tiers are read anew."""
    from designer.core.analysis import link_groups

    reads = []
    real_read = link_groups.LinkGroups.read.__func__
    monkeypatch.setattr(link_groups.LinkGroups, "read", classmethod(lambda cls, *a: reads.append(1) or real_read(cls, *a)))
    doc, engine = load_document(A100), Engine()
    before = link_load(engine.evaluate(doc), doc)
    before.prepare()
    groups = before.made_groups
    switches = {s.id for s in doc.switches}
    spine = next(i for i, l in enumerate(doc.links) if {l.a.split(":")[0], l.b.split(":")[0]} <= switches)
    removed = doc.remove(doc.links[spine].id)
    for edit in ("delete", "undo"):
        if edit == "undo":
            doc.add(removed[2], removed[1])
        result = engine.evaluate(doc)
        reads.clear()
        carried = LinkLoad(result, doc, groups)
        carried.prepare()
        assert reads == []
        fresh = LinkLoad(result, doc)
        fresh.prepare()
        for i, lid in enumerate(result.link_ids):
            assert carried.index_of(lid) == fresh.index_of(lid) == i
            assert carried.text(i) == fresh.text(i)
        assert [(c.label, c.cable, c.members.tolist()) for c in carried.classes()] == \
            [(c.label, c.cable, c.members.tolist()) for c in fresh.classes()]
        groups = carried.made_groups
    nic = next(i for i, l in enumerate(doc.links) if l.a.split(":")[0] not in switches)
    doc.remove(doc.links[nic].id)
    reads.clear()
    ids = doc.link_list("id")
    after = link_groups.LinkGroups.of(doc, ids, groups)
    assert reads == [1]
    fresh = link_groups.LinkGroups.of(doc, ids)
    assert [after.tier_words[t] for t in after.tier_code.tolist()] == [fresh.tier_words[t] for t in fresh.tier_code.tolist()]


def test_the_check_the_engine_and_the_link_load_share_one_index_of_the_link_ids():
    """The live check, the engine's re-rating of an edited cable and the link-load analysis look links
    up by id in one index of the design's link ids, not one each (3.6 MB each at 131k GPUs)."""
    from designer.core.live_check import DesignChecker

    doc = load_document(A100)
    checker, engine = DesignChecker(), Engine()
    checker.check(doc.snapshot())
    engine.evaluate(doc.snapshot())
    doc.update(doc.links[5].id, bandwidth_gbps=200.0)  # a cable's speed: found by id in each
    snapshot = doc.snapshot()
    checker.check(snapshot)
    shared = doc.link_id_index.of(doc.link_list("id"), doc.link_ids_version)
    result = engine.evaluate(snapshot)
    analysis = LinkLoad(result, doc.snapshot())
    analysis.prepare()
    assert analysis.made_groups.index is shared
    assert doc.link_id_index.of(list(result.link_ids)) is shared
    assert analysis.index_of(doc.links[5].id) == 5


def test_combined_codes_number_the_combinations_as_a_sort_of_them_does():
    """Codes per distinct combination of per-link codes, numbered in sorted order: through a table when
    the combinations are few, by a sort otherwise; the same numbers either way."""
    import numpy as np

    from designer.core.analysis.link_groups import combined_codes

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 300))
        per_item = [rng.integers(0, int(rng.integers(1, 40)), n).astype(rng.choice([np.int8, np.int16, np.int64]))
                    for _ in range(int(rng.integers(1, 5)))]
        key = np.zeros(n, dtype=np.int64)
        for c in per_item:
            key = key * (int(c.max()) + 1) + c.astype(np.int64)
        wanted = np.unique(key, return_inverse=True)[1].reshape(-1)
        assert np.array_equal(combined_codes(per_item, n), wanted)


def test_the_shared_index_of_the_link_ids_is_found_by_their_version_and_not_for_another():
    """Readers holding the design's link ids of one version find their index by it (no comparison of
    the ids); an edit that adds, removes or renames a cable makes another version, indexed anew."""
    doc = load_document(A100)
    ids = doc.link_list("id")
    version = doc.link_ids_version
    index = doc.link_id_index.of(ids, version)
    doc.update(doc.links[3].id, bandwidth_gbps=100.0)  # a speed: the same ids
    snapshot = doc.snapshot()
    assert snapshot.link_ids_version is version
    assert snapshot.link_id_index.of(snapshot.link_list("id"), snapshot.link_ids_version) is index

    class NoCompare(list):
        def __eq__(self, other):
            raise AssertionError("the ids compared one by one")

    assert doc.link_id_index.of(NoCompare(ids), version) is index
    old_id = doc.links[3].id
    doc.update(old_id, id="renamed-cable")
    assert doc.link_ids_version is not version
    renamed = doc.link_id_index.of(doc.link_list("id"), doc.link_ids_version)
    assert renamed is not index and renamed.get("renamed-cable") == 3 and renamed.get(old_id) is None
    removed = doc.remove("renamed-cable")
    after_remove = doc.link_ids_version
    assert after_remove is not version
    doc.add(removed[2], removed[1])
    assert doc.link_ids_version is not after_remove
    assert doc.link_id_index.of(doc.link_list("id"), doc.link_ids_version).get("renamed-cable") == 3


def test_a_links_bytes_per_step_are_summed_for_that_link_not_kept_for_every_link(dp_bound):
    """The analysis a result keeps holds its own per-link arrays only where a question about many links
    needs them (the busy seconds); a link's bytes per step, all kinds together, are summed when asked."""
    doc = load_document(dp_bound)
    result = Engine().evaluate(doc)
    analysis = LinkLoad(result, doc)
    shared = {id(a) for a in (*result.link_load.values(), *result.link_busy_s.values(),
                              result.link_utilization_array, result.link_capacity_Bps, result.link_phase_code)}
    own = sorted(name for name, value in vars(analysis).items()
                 if isinstance(value, np.ndarray) and len(value) == analysis.n and id(value) not in shared)
    assert own == ["total_busy"]
    for index in range(analysis.n):
        answer = analysis.answer(index, with_class=False)
        assert answer.bytes_per_step == float(sum(v[index] for v in result.link_load.values()))
        assert answer.bytes_per_step == sum(answer.bytes_by_kind.values(), 0.0)
    assert max(analysis.answer(i, with_class=False).bytes_per_step for i in range(analysis.n)) > 0
