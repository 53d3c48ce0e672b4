"""YAML files: located errors, round trip, atomic save."""
import os

import pytest

from designer.core.io import load_document, save_document, loads_document, dumps_document
from designer.core.problems import DesignerError
from tests.conftest import run_cli


def errors_of(text, tmp_path, name="bad.yaml"):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    with pytest.raises(DesignerError) as exc:
        load_document(p)
    return exc.value.problems, str(p)


def test_typo_key_has_line_column_path_and_suggestion(small_text, tmp_path):
    text = small_text.replace("kind: infiniband, bandwidth_gbps: 400}\n    - {id: l1",
                              "kind: infiniband, bandwith_gbps: 400}\n    - {id: l1")
    problems, name = errors_of(text, tmp_path)
    typo = [p for p in problems if "unknown key" in p.message]
    assert len(typo) == 1
    p = typo[0]
    line = text.splitlines().index(next(l for l in text.splitlines() if "bandwith_gbps" in l)) + 1
    col = text.splitlines()[line - 1].index("bandwith_gbps") + 1
    assert (p.line, p.column) == (line, col)
    assert p.format().startswith(f"{name}:{line}:{col}: spec.links[0].bandwith_gbps: unknown key (did you mean bandwidth_gbps?)")
    # and the key it lost is reported missing on the same element
    assert any(p.path == "spec.links[0]" and "bandwidth_gbps" in p.message for p in problems)


def test_wrong_type_points_at_the_value(small_text, tmp_path):
    text = small_text.replace("radix: 8", "radix: many")
    problems, _ = errors_of(text, tmp_path)
    (p,) = problems
    assert p.path == "spec.switches[0].radix"
    assert "expected an integer, got 'many'" in p.message
    line_text = text.splitlines()[p.line - 1]
    assert line_text[p.column - 1:].startswith("many")


def test_block_style_typo_position(small_text, tmp_path):
    text = small_text.replace("      nic_count: 2\n      rack: r0\n      slot: 4", "      nic_count: 2\n      rak: r0\n      slot: 4")
    problems, _ = errors_of(text, tmp_path)
    (p,) = problems
    assert p.path == "spec.nodes[1].rak" and "did you mean rack?" in p.message
    assert text.splitlines()[p.line - 1].strip().startswith("rak:") and p.column == 7


def test_missing_required_key_points_at_parent(small_text, tmp_path):
    text = small_text.replace("      accelerator: H100\n      nic_count: 2\n      rack: r0\n      slot: 0\n",
                              "      nic_count: 2\n      rack: r0\n      slot: 0\n")
    problems, _ = errors_of(text, tmp_path)
    (p,) = problems
    assert p.path == "spec.nodes[0]" and "missing required key accelerator" in p.message
    assert "- id: n0" in text.splitlines()[p.line - 1]


def test_enum_value_with_suggestion(small_text, tmp_path):
    problems, _ = errors_of(small_text.replace("tier: leaf", "tier: leef"), tmp_path)
    (p,) = problems
    assert p.path == "spec.switches[0].tier" and "did you mean leaf?" in p.message


def test_invalid_yaml_reports_position(tmp_path):
    problems, name = errors_of("apiVersion: designer/v1\nkind: Cluster\nspec:\n  racks: [a, b\n  nodes: x\n", tmp_path)
    (p,) = problems
    assert p.message.startswith("invalid YAML") and p.line is not None and p.column is not None
    assert p.format().startswith(f"{name}:{p.line}:{p.column}: invalid YAML")


@pytest.mark.parametrize("content, words", [
    ("", "empty"), ("   \n\n", "empty"), (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
    (b"\xff\xfe\xfa garbage", "UTF-8"), ("just a string", "expected a mapping"),
    ("apiVersion: designer/v9\nkind: Cluster\nspec: {}\n", "unknown apiVersion"),
    ("kind: Cluster\nspec: {}\n", "missing apiVersion"),
    ("apiVersion: designer/v1\nkind: Clustr\nspec: {}\n", "did you mean Cluster"),
    ("apiVersion: designer/v1\nkind: Cluster\nspec: {}\nspec: {}\n", "given twice"),
    ("apiVersion: designer/v1\nkind: Cluster\nspec: !!python/object/apply:os.system [ls]\n", "invalid YAML"),
])
def test_bad_files_give_clear_messages(content, words, tmp_path):
    problems, _ = errors_of(content, tmp_path)
    assert any(words in p.message for p in problems), [p.format() for p in problems]


def test_a_byte_order_mark_is_read_past(small_doc, tmp_path):
    """A design saved by an editor that starts UTF-8 with a byte order mark loads as without it; a
    byte that is not UTF-8 after one is refused as not UTF-8, on its line."""
    plain = tmp_path / "plain.yaml"
    save_document(small_doc, plain)
    marked = tmp_path / "marked.yaml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert dumps_document(load_document(marked)) == dumps_document(load_document(plain))
    problems, _ = errors_of(b"\xef\xbb\xbfapiVersion: designer/v1\nkind: \xff\n", tmp_path)
    assert [p.line for p in problems] == [2] and "UTF-8" in problems[0].message


def test_bad_files_exit_65_without_traceback(tmp_path):
    junk = tmp_path / "junk.yaml"
    with open(junk, "wb") as fh:  # 50 MB of printable junk that is not a design
        block = (b"]]::{{ -- ?? && ** !! %% @@ `` " * 64 + b"\n") * 256
        while fh.tell() < 50 * 2**20:
            fh.write(block)
    for path in (junk, tmp_path / "missing.yaml"):
        code, out, err = run_cli("validate", path)
        assert code in (65, 66) and "Traceback" not in err and err.strip()
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    code, _, err = run_cli("validate", empty)
    assert code == 65 and "empty" in err
    assert run_cli("validate", tmp_path / "missing.yaml")[0] == 66


def test_round_trip_is_exact(small_doc, tmp_path):
    p = tmp_path / "a.yaml"
    save_document(small_doc, p)
    again = load_document(p)
    assert again == small_doc
    save_document(again, tmp_path / "b.yaml")
    assert (tmp_path / "b.yaml").read_text() == p.read_text()


def test_saved_file_loads_by_both_paths(small_doc):
    """The fast loader and the full YAML parser read a saved file the same way."""
    from designer.core.io import yaml_source
    text = dumps_document(small_doc)
    fast = yaml_source.parse_fast(text)
    assert fast is not None
    assert fast == yaml_source.parse_located(text).data


def test_hand_edited_block_item_falls_back_to_full_parser(small_doc):
    text = dumps_document(small_doc)
    text = text.replace("  links:\n", "  links:\n  - id: extra\n    a: n0\n    b: leaf0\n    kind: infiniband\n    bandwidth_gbps: 400\n")
    doc = loads_document(text)
    assert [l.id for l in doc.links][0] == "extra" and len(doc.links) == 5


def test_atomic_save_keeps_old_file_when_write_fails(small_doc, tmp_path, monkeypatch):
    p = tmp_path / "design.yaml"
    save_document(small_doc, p)
    before = p.read_bytes()
    small_doc.update("n0", name="renamed")

    def failing_write(fh, data):
        fh.write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    from designer.core.fs import atomic

    monkeypatch.setattr(atomic, "_write_all", failing_write)
    with pytest.raises(OSError):
        save_document(small_doc, p)
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["design.yaml"]  # no temporary left behind


def test_a_save_killed_midway_leaves_no_temporary_behind_after_the_next_save(small_doc, tmp_path):
    """A process killed inside a save leaves its temporary file; the next save of the file sweeps it
    (its writer is dead), and an old one from before the pid was in the name (older than a minute)."""
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    target = tmp_path / "design.yaml"
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, sys\n"
        "from designer.core.fs import atomic as files\n"
        "def die(fh, data):\n"
        "    fh.write(data[:4096]); fh.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
        "files._write_all = die\n"
        "files.atomic_write_bytes(sys.argv[1], b'x' * 5_000_000)\n"), str(target)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    (left,) = [f for f in tmp_path.iterdir() if f.name.startswith(".design.yaml.")]
    legacy = tmp_path / ".design.yaml.ab3_x9k2.tmp"
    legacy.write_bytes(b"x")
    an_hour_ago = time.time() - 3600
    os.utime(legacy, (an_hour_ago, an_hour_ago))
    other = tmp_path / ".other.yaml.1.abcdefgh.designer-tmp"  # another file's: not this save's business
    other.write_bytes(b"x")
    os.utime(other, (an_hour_ago, an_hour_ago))
    live = tmp_path / f".design.yaml.{os.getppid()}.abcdefgh.designer-tmp"  # a live writer's, just begun
    live.write_bytes(b"x")

    save_document(small_doc, target)
    assert not left.exists() and not legacy.exists()
    assert other.exists() and live.exists()
    assert load_document(target).counts() == small_doc.counts()


def test_scenario_file(tmp_path):
    from designer.core.io import load_scenario
    p = tmp_path / "job.yaml"
    p.write_text("apiVersion: designer/v1\nkind: Scenario\nspec:\n  workload: {preset: gpt3-175b}\n"
                 "  parallelism: {tensor_model_parallel_size: 8, pipeline_model_parallel_size: 8}\n")
    s = load_scenario(p)
    assert s.workload.preset == "gpt3-175b" and s.parallelism.pipeline_model_parallel_size == 8
    with pytest.raises(DesignerError, match="Scenario file"):
        load_document(p)


def test_schema_validates_saved_files(small_doc):
    import json
    import jsonschema
    import yaml
    from designer.core.io.editor_schema import json_schema

    code, out, _ = run_cli("schema")
    schema = json.loads(out)
    assert schema == json.loads(json.dumps(json_schema()))
    jsonschema.Draft7Validator.check_schema(schema)
    data = yaml.safe_load(dumps_document(small_doc))
    jsonschema.Draft7Validator(schema).validate(data)
    data["spec"]["links"][0]["bandwith_gbps"] = 1
    assert list(jsonschema.Draft7Validator(schema).iter_errors(data))
