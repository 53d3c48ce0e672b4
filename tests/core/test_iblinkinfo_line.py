"""`iblinkinfo --line` (-l), one line per port, read like the default form: a real output
(tests/data/iblinkinfo/switchib-edr-line-mode.txt) and the real default-form output written as
--line prints it (rdma-core's iblinkinfo.c format) come in as the same fabric."""
import re
from pathlib import Path

from designer.core.io import load_document
from tests.conftest import run_cli

DATA = Path(__file__).resolve().parent.parent / "data" / "iblinkinfo"


def _import(tmp_path, src):
    out = tmp_path / f"{Path(src).stem}.yaml"
    code, _, err = run_cli("import", "iblinkinfo", src, "-o", out)
    return code, err, out


def test_a_real_line_mode_output_comes_in_whole(tmp_path):
    code, err, out = _import(tmp_path, DATA / "switchib-edr-line-mode.txt")
    assert code == 0, err
    doc = load_document(out)
    assert len(doc.switches) == 1 and doc.switches[0].tier == "leaf"
    assert sorted(n.id for n in doc.nodes) == ["quorum01", "thing3", "thing4"]
    assert [link.bandwidth_gbps for link in doc.links] == [100, 100, 100]  # 4X EDR; the Down port is no cable
    assert sorted(link.b for link in doc.links) == ["leaf0:p14", "leaf0:p18", "leaf0:p19"]  # IB ports 15, 19, 20
    assert run_cli("validate", out)[0] == 0


def _as_line_mode(text: str) -> str:
    """The default form as `iblinkinfo --line` prints the same ports (print_port(), line_mode)."""
    guid_of = {}  # LID -> the port GUID --line prints (a switch's from its header, an HCA's from its line)
    lines, node = [], None
    for raw in text.splitlines():
        head = re.match(r"^(CA|Switch): (?:(0x[0-9a-f]+) )?(.*):$", raw)
        if head:
            node = (head.group(3), head.group(2))
            continue
        m = re.match(r"^\s*(0x[0-9a-f]+)?\s*(\d+)\s+(\d+)\[  \] ==(\(.*?\))==>\s+(?:(\d+)\s+(\d+)\[  \] \"(.*)\"|"
                     r"\[  \] \"\")", raw)
        if not m:
            continue
        guid_of[int(m.group(2))] = m.group(1) or node[1]
        lines.append((node[0], m))
    out = []
    for desc, m in lines:
        local = guid_of[int(m.group(2))]
        remote = (f"{guid_of.get(int(m.group(5)), '0x%016x' % int(m.group(5)))} {int(m.group(5)):6d} "
                  f"{int(m.group(6)):4d}[  ] \"{m.group(7)}\" ( )") if m.group(5) else '           [  ] "" ( )'
        out.append(f'{local} "{desc:>30}" {int(m.group(2)):6d} {int(m.group(3)):4d}[  ] =={m.group(4)}==>  {remote}')
    return "\n".join(out) + "\n"


def test_the_default_form_and_the_line_form_give_the_same_fabric(tmp_path):
    src = DATA / "edr-sb7700-hpl-2node.txt"
    line_mode = tmp_path / "edr-sb7700-hpl-2node-line.txt"
    line_mode.write_text(_as_line_mode(src.read_text()))
    assert line_mode.read_text().count("==>") >= 20
    code, err, out = _import(tmp_path, src)
    assert code == 0, err
    code, err_l, out_l = _import(tmp_path, line_mode)
    assert code == 0, err_l
    a, b = load_document(out), load_document(out_l)
    assert [(n.id, n.role, n.nic_count) for n in a.nodes] == [(n.id, n.role, n.nic_count) for n in b.nodes]
    assert [(s.id, s.tier, s.radix) for s in a.switches] == [(s.id, s.tier, s.radix) for s in b.switches]
    assert sorted((l.a, l.b, l.bandwidth_gbps) for l in a.links) == sorted((l.a, l.b, l.bandwidth_gbps) for l in b.links)


def test_a_line_the_parser_cannot_read_is_named(tmp_path):
    src = tmp_path / "cut.txt"
    text = (DATA / "switchib-edr-line-mode.txt").read_text().splitlines()
    src.write_text("\n".join(text[:2] + [text[2][:120]]) + "\n")  # the third line cut mid-way
    code, err, _ = _import(tmp_path, src)
    assert code == 65 and f"{src}:3:" in err, err
