"""File > Import: each importer of `designer import` from the menu, on real files of real clusters
(tests/data), its summary before anything changes, and a bad file that changes nothing."""
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


@pytest.fixture
def window(empty_window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    w = empty_window
    w.errors, w.asked = [], []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda parent, title, text, *a: w.errors.append(text)))
    return w


def pick(monkeypatch, window, path):
    """The file dialog answers `path`."""
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda parent=None, caption="", *a, **k: window.asked.append(caption)
                                     or (str(path), "")))


def answer_summary(monkeypatch, accept: bool, seen: list):
    from designer.ui.dialogs.import_summary_dialog import ImportSummaryDialog

    def run(dialog):
        seen.append({what: dialog.value(what) for what, _ in dialog.summary.rows}
                    | {"notes": list(dialog.summary.notes), "warnings": list(dialog.summary.warnings)})
        dialog.accept_button.click() if accept else dialog.reject()
        return dialog.result()

    monkeypatch.setattr(ImportSummaryDialog, "exec", run)


def test_import_menu_has_every_importer_of_the_command_line(window):
    from designer.cli.import_export import IMPORTERS

    menu = next(a.menu() for a in window.menus["File"].actions() if a.menu() and a.text() == "&Import")
    keys = {a.text() for a in menu.actions()}
    assert len(keys) == 5
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for module in IMPORTERS:
        module.register_import(sub)
    cli = set(sub.choices)
    assert cli == {"ibnetdiscover", "iblinkinfo", "slurm-topology", "nccl-topo", "megatron"}
    for key in cli:
        assert getattr(window, f"act_import_{key.replace('-', '_')}").text() in keys


def test_import_slurm_topology_shows_the_summary_then_opens_an_untitled_design(window, monkeypatch):
    pick(monkeypatch, window, DATA / "slurm" / "azure-sharp-cmd-topology.conf")
    seen = []
    answer_summary(monkeypatch, True, seen)
    window.act_import_slurm_topology.trigger()
    assert window.settle() and not window.errors, window.errors
    summary = seen[0]
    assert summary["Switches"] == "49 (40 leaf, 8 spine, 1 core)"
    assert summary["Compute GPUs"].startswith("1,024")
    assert "40 leaf at 3.2:1" in summary["Tiers and oversubscription"]
    assert any("guessed: cable rates" in n for n in summary["notes"])
    assert any("listed from both ends" in n for n in summary["notes"] + summary["warnings"])
    doc = window.qdoc.doc
    assert len(doc.switches) == 49 and doc.num_gpus() == 1024
    assert window.qdoc.path is None and window.qdoc.name.endswith("(untitled)")
    window.qdoc.undo_stack.undo()  # the design open before comes back
    assert len(window.qdoc.doc.switches) == 0


def test_import_ibnetdiscover_names_hosts_tiers_and_the_degraded_cable(window, monkeypatch):
    pick(monkeypatch, window, DATA / "ibnetdiscover" / "nvidia-ufm-lab-edr-fdr.topo")
    seen = []
    answer_summary(monkeypatch, True, seen)
    window.act_import_ibnetdiscover.trigger()
    assert window.settle() and not window.errors, window.errors
    summary = seen[0]
    assert summary["Switches"] == "2 (2 leaf)" and summary["GPU servers"] == "5"
    assert summary["Cables"] == "7 (1 flagged as degraded)"
    assert any("trained at 4xSDR" in w for w in summary["warnings"])
    assert len(window.qdoc.doc.nodes) == 5


def test_import_iblinkinfo_keeps_the_service_host_apart(window, monkeypatch):
    pick(monkeypatch, window, DATA / "iblinkinfo" / "edr-sb7700-hpl-2node.txt")
    seen = []
    answer_summary(monkeypatch, True, seen)
    window.act_import_iblinkinfo.trigger()
    assert window.settle() and not window.errors, window.errors
    assert seen[0]["Service hosts"] == "1 service" and seen[0]["GPU servers"] == "2"


def test_cancelled_summary_and_a_bad_file_leave_the_open_design(window, monkeypatch, tmp_path):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle()
    before = window.qdoc.doc.counts()
    seen = []
    answer_summary(monkeypatch, False, seen)
    pick(monkeypatch, window, DATA / "slurm" / "topograph-tree.conf")
    window.act_import_slurm_topology.trigger()
    assert window.settle() and seen and window.qdoc.doc.counts() == before
    bad = tmp_path / "topology.conf"
    bad.write_text("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Switchs=s0\n")
    pick(monkeypatch, window, bad)
    window.act_import_slurm_topology.trigger()
    assert window.settle()
    assert len(window.errors) == 1 and f"{bad}:2" in window.errors[0] and "Traceback" not in window.errors[0]
    assert "unchanged" in window.errors[0]
    assert window.qdoc.doc.counts() == before and window.qdoc.name == "h100-64gpu-infiniband (example)"


def test_import_megatron_script_sets_the_current_job_as_one_undo_step(window, monkeypatch):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle()
    old = window.qdoc.doc.spec.parallelism
    assert window.qdoc.doc.spec.workload.preset == "llama3-8b"
    pick(monkeypatch, window, DATA / "megatron_args" / "train_mixtral_8x7b_distributed.sh")
    seen = []
    answer_summary(monkeypatch, True, seen)
    window.act_import_megatron.trigger()
    assert window.settle() and not window.errors, window.errors
    assert seen[0]["Model"] == "mixtral-8x7b (32 layers, hidden 4096)", seen[0]
    assert "global 256" in seen[0]["Batch"] and "PP 4" in seen[0]["Plan"] and "EP 8" in seen[0]["Plan"], seen[0]
    assert any("--moe-aux-loss-coeff" in w for w in seen[0]["warnings"])
    assert window.qdoc.doc.spec.workload.preset == "mixtral-8x7b"
    assert window.qdoc.doc.spec.parallelism.expert_model_parallel_size == 8
    window.qdoc.undo_stack.undo()
    assert window.qdoc.doc.spec.parallelism == old


def test_import_nccl_topology_into_the_servers(window, monkeypatch):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle()
    pick(monkeypatch, window, DATA / "nccl-topo" / "ibm-cloud-h100-8nic.xml")
    seen = []
    answer_summary(monkeypatch, True, seen)
    window.act_import_nccl_topo.trigger()
    assert window.settle() and not window.errors, window.errors
    assert seen[0]["Servers changed"].startswith("8 (")
    assert "8 GPUs" in seen[0]["Each server"] and "200 Gb/s" in seen[0]["Each server"]
    assert {n.nic_gbps for n in window.qdoc.doc.nodes} == {200}


def test_file_open_of_an_ibnetdiscover_output_offers_its_importer(window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    offered = []
    monkeypatch.setattr(QMessageBox, "question",
                        staticmethod(lambda parent, title, text, *a: offered.append(text) or QMessageBox.Yes))
    seen = []
    answer_summary(monkeypatch, True, seen)
    window.files.open_reporting(str(DATA / "ibnetdiscover" / "oracle-sun-dcs36-qdr.topo"))
    assert window.settle() and window.settle()
    assert not window.errors, window.errors
    assert offered and "ibnetdiscover output" in offered[-1] and "YAML" not in offered[-1]
    assert seen and window.qdoc.doc.switches


@pytest.mark.parametrize("path, key", [
    ("ibnetdiscover/edr-two-tier-ddr-link.topo", "ibnetdiscover"),
    ("ibnetdiscover/man-page-voltaire-sdr.topo", "ibnetdiscover"),
    ("ibnetdiscover/ibm-pcm-2009-sdr.topo", "ibnetdiscover"),
    ("iblinkinfo/edr-sb7700-hpl-2node.txt", "iblinkinfo"),
    ("slurm/topology-conf5-tree.conf", "slurm-topology"),
    ("slurm/topograph-block.conf", "slurm-topology"),
    ("nccl-topo/azure-ncv4-a100-4gpu.xml", "nccl-topo"),
    ("megatron_args/pretrain_gpt3_175B_2021.sh", "megatron"),
])
def test_file_open_recognises_each_format(path, key):
    from designer.core.io.importers.formats import recognise

    assert recognise(DATA / path).key == key
    assert recognise(EXAMPLES / "h100-64gpu-infiniband.yaml") is None


def test_import_megatron_script_as_a_new_job_on_the_free_gpus(window, monkeypatch, tmp_path):
    from designer.core.io import load_document, save_document
    from designer.core.model import Parallelism, Workload
    from designer.ui.dialogs.import_summary_dialog import ImportSummaryDialog
    from tests.conftest import run_cli

    path = tmp_path / "ft.yaml"
    code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "8", "--gpu", "H100")
    assert code == 0, err
    doc = load_document(path)
    doc.spec.workload = Workload(preset="llama3-8b", global_batch_size=64, micro_batch_size=1, seq_length=4096)
    doc.spec.parallelism = Parallelism(tensor_model_parallel_size=8, num_gpus=32)
    save_document(doc, path)
    window.open_file(str(path))
    assert window.settle()
    pick(monkeypatch, window, DATA / "megatron_args" / "train_mixtral_8x7b_distributed.sh")

    def add_as_new(dialog):
        assert dialog.other_button is not None and dialog.other_button.text() == "Add as a New Job"
        dialog.other_button.click()
        return dialog.result()

    monkeypatch.setattr(ImportSummaryDialog, "exec", add_as_new)
    window.act_import_megatron.trigger()
    assert window.settle() and not window.errors, window.errors
    jobs = window.qdoc.doc.spec.jobs
    assert [j.workload.preset for j in jobs] == ["llama3-8b", "mixtral-8x7b"]
    assert jobs[1].placement.gpus == 32 and jobs[1].parallelism.expert_model_parallel_size == 8
    assert window.result is not None and len(window.result.jobs) == 2
    window.qdoc.undo_stack.undo()  # one step
    assert not window.qdoc.doc.spec.jobs and window.qdoc.doc.spec.workload.preset == "llama3-8b"


def test_read_again_with_the_gpus_the_file_does_not_name(window, monkeypatch):
    from designer.ui.dialogs.import_summary_dialog import ImportSummaryDialog

    pick(monkeypatch, window, DATA / "slurm" / "topograph-tree.conf")
    seen = []

    def run(dialog):
        seen.append(dict(dialog.summary.rows))
        if len(seen) == 1:  # the user picks the servers' GPUs, then Read Again
            assert dialog.gpu_combo.currentText() == "H100-SXM5-80GB" and dialog.gpus_spin.value() == 8
            dialog.gpu_combo.setCurrentText("B200")
            dialog.gpus_spin.setValue(4)
            next(b for b in dialog.findChildren(type(dialog.accept_button)) if b.text() == "Read Again").click()
        else:
            dialog.accept_button.click()
        return dialog.result()

    monkeypatch.setattr(ImportSummaryDialog, "exec", run)
    window.act_import_slurm_topology.trigger()
    assert window.settle() and window.settle() and not window.errors, window.errors
    assert len(seen) == 2 and "B200" in seen[1]["Compute GPUs"]
    computing = [n for n in window.qdoc.doc.nodes if n.role == "compute"]
    assert computing and {(n.accelerator, n.accelerator_count) for n in computing} == {("B200", 4)}


def test_read_again_with_the_gpu_servers_named_by_a_pattern(window, monkeypatch):
    """The summary's name pattern is the CLI's --compute: hosts it does not match become service
    hosts; a pattern that is not a regular expression is said in the dialog, which stays open."""
    from designer.ui.dialogs.import_summary_dialog import ImportSummaryDialog

    pick(monkeypatch, window, DATA / "ibnetdiscover" / "nvidia-ufm-lab-edr-fdr.topo")
    seen, refused = [], []

    def run(dialog):
        seen.append(dict(dialog.summary.rows))
        again = next(b for b in dialog.findChildren(type(dialog.accept_button)) if b.text() == "Read Again")
        if len(seen) == 1:
            dialog.compute_edit.setText("r-ufm9[")  # not a regular expression: said, nothing read
            again.click()
            refused.append((dialog.choice, dialog.compute_error.text()))
            dialog.compute_edit.setText("^r-ufm9")
            again.click()
        else:
            assert dialog.compute_edit.text() == "^r-ufm9"  # the pattern it was read with
            dialog.accept_button.click()
        return dialog.result()

    monkeypatch.setattr(ImportSummaryDialog, "exec", run)
    window.act_import_ibnetdiscover.trigger()
    assert window.settle() and window.settle() and not window.errors, window.errors
    assert refused and refused[0][0] is None and "not a regular expression" in refused[0][1]
    assert len(seen) == 2 and seen[0]["GPU servers"] == "5"
    computing = [n for n in window.qdoc.doc.nodes if n.role == "compute"]
    assert computing and all(n.id.startswith("r-ufm9") or n.name.startswith("r-ufm9") for n in computing)
    assert len(computing) < 5 and seen[1]["GPU servers"] == str(len(computing))
