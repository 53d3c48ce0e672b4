"""The fat-tree generator dialog: live summary, impossible requests, options round trip."""
import pytest


from designer.core.generate.fat_tree import FatTreeError, plan_fat_tree  # noqa: E402


@pytest.fixture
def dialog(qtbot):
    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    d = GeneratorDialog()
    qtbot.addWidget(d)
    return d


def _counts_in(text: str, plan) -> None:
    for value, word in [(plan.nodes, "server"), (plan.gpus, "GPU"), (plan.leaves, "lea"), (plan.spines, "spine"),
                        (plan.cores, "core"), (plan.pods, "pod"), (plan.links, "link"), (plan.cables, "cable"),
                        (plan.racks, "rack"), (plan.tiers, "tier")]:
        assert f"{value:,} {word}" in text, (value, word, text)


def test_defaults_match_the_cli(dialog):
    from designer.ui.dialogs.generator_dialog import DEFAULTS

    opts = dialog.options()
    assert opts == DEFAULTS
    assert opts["gpu"] == "H100-SXM5-80GB"
    assert opts["rail_optimized"] is True and opts["tiers"] is None
    assert dialog.windowTitle() == "Generate fat-tree fabric"
    assert dialog.network.oversubscription.text() == "1:1"
    assert dialog.is_valid() and dialog.ok_button.isEnabled()
    server, network = dialog.server, dialog.network
    for w in (server.servers, server.accelerator, server.gpus_per_node, server.nics_per_node, network.nic_gbps,
              network.fabric, network.tiers, network.switch_radix, network.oversubscription, network.rail_optimized):
        assert w.toolTip()
    assert "leaf down:up" in dialog.network.oversubscription.toolTip().lower()


def test_summary_follows_the_servers(dialog):
    from designer.ui.dialogs.generator_dialog import DEFAULTS

    for servers in (4, 200, 1024):
        dialog.server.servers.setValue(servers)
        plan = plan_fat_tree(**{**DEFAULTS, "nodes": servers})
        assert dialog.plan() == plan
        text = dialog.summary.text()
        assert text == dialog.summary_text()
        _counts_in(text, plan)
    assert plan.tiers == 3 and plan.pods > 1  # 1024 servers at radix 64 need pods


def test_every_field_updates_the_summary(dialog):
    before = dialog.summary_text()
    dialog.network.oversubscription.setValue(2.0)
    assert dialog.network.oversubscription.text() == "2:1"
    assert dialog.summary_text() != before and "2:1" in dialog.summary_text()
    dialog.network.switch_radix.setCurrentText("128")
    assert dialog.plan().switch_radix == 128
    dialog.network.nic_gbps.setCurrentText("800")
    assert dialog.options()["nic_gbps"] == 800.0
    dialog.network.rail_optimized.setChecked(False)
    assert dialog.plan().rail_optimized is False
    dialog.network.tiers.setCurrentIndex(dialog.network.tiers.findData(3))
    assert dialog.plan().tiers == 3


def test_impossible_request_disables_ok(dialog):
    dialog.set_options(nodes=16384, switch_radix=64, tiers=3)
    assert not dialog.is_valid()
    assert not dialog.ok_button.isEnabled()
    with pytest.raises(FatTreeError) as info:
        plan_fat_tree(**dialog.options(), catalog=dialog.catalog)
    from designer.ui.dialogs.generator_dialog import in_the_dialogs_words

    # the generator's message, with the fields' names where it names flags
    assert dialog.summary.text() == in_the_dialogs_words(str(info.value)) == dialog.summary_text()
    assert "--" not in dialog.summary.text()
    assert "red" in dialog.summary.styleSheet() or "#b91c1c" in dialog.summary.styleSheet()
    assert dialog.summary.property("error") is True
    dialog.reject()  # closing is always allowed
    # Fixing the request enables OK again and clears the red.
    dialog.set_options(switch_radix=128)
    assert dialog.is_valid() and dialog.ok_button.isEnabled()
    assert dialog.summary.styleSheet() == ""


def test_bad_typed_values_are_reported(dialog):
    dialog.server.nics_per_node.setValue(0)
    assert not dialog.is_valid() and "nics per node" in dialog.summary_text()
    dialog.server.nics_per_node.setValue(8)
    dialog.network.switch_radix.setCurrentText("")
    assert not dialog.is_valid() and "radix" in dialog.summary_text()
    dialog.network.switch_radix.setCurrentText("64")
    dialog.set_options(gpu="GB200", gpus_per_node=8)
    assert not dialog.is_valid() and "at most 4" in dialog.summary_text()
    dialog.set_options(gpus_per_node=4)
    assert dialog.is_valid()


def test_options_round_trip(dialog):
    wanted = dict(nodes=300, gpu="MI300X", gpus_per_node=8, nics_per_node=4, nic_gbps=200.0, fabric="ethernet",
                  tiers=2, switch_radix=144, oversubscription=1.5, rail_optimized=False)
    dialog.set_options(**wanted)
    assert dialog.options() == wanted
    assert dialog.network.fabric.currentText() == "Ethernet"
    assert dialog.network.oversubscription.text() == "1.5:1"
    dialog.set_options(tiers=None, gpu="h100")  # an alias resolves to the catalog's name
    assert dialog.options()["tiers"] is None and dialog.options()["gpu"] == "H100-SXM5-80GB"
    with pytest.raises(ValueError, match="unknown option"):
        dialog.set_options(colour="blue")
    with pytest.raises(ValueError, match="accelerator"):
        dialog.set_options(gpu="TPU-v9", nodes=5)
    assert dialog.options()["nodes"] == 300  # a bad call changes nothing
    with pytest.raises(ValueError, match="nodes"):
        dialog.set_options(nodes=20000)


def test_build_document_has_the_asked_gpus(dialog):
    dialog.set_options(nodes=24, gpus_per_node=8, nics_per_node=8, switch_radix=64)
    doc = dialog.build_document()
    assert doc.num_gpus() == 24 * 8
    plan = dialog.plan()
    c = doc.counts()
    assert (c["nodes"], c["gpus"], c["switches"], c["links"], c["cables"], c["racks"]) == (
        plan.nodes, plan.gpus, plan.switches, plan.links, plan.cables, plan.racks)


def test_accept_only_when_valid(dialog, qtbot):
    dialog.open()
    dialog.set_options(nodes=16384, switch_radix=64, tiers=3)
    dialog.accept()
    assert dialog.isVisible() and dialog.result() == 0
    dialog.set_options(switch_radix=128)
    with qtbot.waitSignal(dialog.accepted, timeout=1000):
        dialog.ok_button.click()
    assert not dialog.isVisible()


def choose(combo, data) -> None:
    """Pick an item of a combo box as a user does with the keyboard: focus it, arrow to the item."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    combo.setFocus()
    index = combo.findData(data)
    assert index >= 0, data
    while combo.currentIndex() != index:
        QTest.keyClick(combo, Qt.Key_Down if combo.currentIndex() < index else Qt.Key_Up)


def test_an_accelerator_chosen_brings_its_system(dialog):
    """GB200 comes in 4-GPU trays of a 72-GPU NVLink domain; an H100 after an A100 gets NDR 400G and
    radix 64, not the A100's HDR 200G and radix 40."""
    choose(dialog.server.accelerator, "GB200")
    o = dialog.options()
    assert (o["gpus_per_node"], o["nics_per_node"], o["nic_gbps"], o.get("nvlink_domain_gpus")) == (4, 4, 400, 72)
    assert dialog.is_valid() and dialog.system.currentData() == "gb200-nvl72"
    choose(dialog.server.accelerator, "A100-SXM4-80GB")
    assert (dialog.options()["nic_gbps"], dialog.options()["switch_radix"]) == (200, 40)
    choose(dialog.server.accelerator, "H100-SXM5-80GB")
    o = dialog.options()
    assert (o["gpus_per_node"], o["nic_gbps"], o["switch_radix"], o.get("nvlink_domain_gpus")) == (8, 400, 64, None)
    assert dialog.system.currentData() == "dgx-h100"


def test_a_system_chosen_sets_every_field_and_a_field_changed_makes_it_custom(dialog):
    choose(dialog.system, "gb300-nvl72")
    o = dialog.options()
    assert (o["gpu"], o["gpus_per_node"], o["nic_gbps"], o["switch_radix"], o["nvlink_domain_gpus"]) == \
        ("GB300", 4, 800, 144, 72)
    assert dialog.is_valid()
    dialog.network.nic_gbps.setCurrentText("400")
    assert dialog.system.currentData() is None and dialog.system.currentText() == "(custom)"


def test_a_gb200_on_eight_gpu_servers_is_refused_in_the_dialogs_words(dialog):
    choose(dialog.server.accelerator, "GB200")
    dialog.server.gpus_per_node.setValue(8)
    assert not dialog.is_valid()
    assert dialog.error() == ("a GB200 server holds at most 4 accelerators, not 8; use GPUs per server = 4 or less")


def test_a_system_that_names_its_nic_builds_with_it(dialog):
    choose(dialog.system, "mi355x")
    assert dialog.is_valid() and dialog.system.currentData() == "mi355x"
    doc = dialog.build_document()
    assert {n.nic_model for n in doc.nodes} == {"AMD-Pollara-400"}
    dialog.network.nic_gbps.setCurrentText("800")  # another NIC speed: not the system's NIC any more
    assert dialog.system.currentData() is None
    assert {n.nic_model for n in dialog.build_document().nodes} != {"AMD-Pollara-400"}
