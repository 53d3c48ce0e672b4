"""The sustained clock of a part follows from its power limit (engine/power.py), not from a per-part fit.

A GEMM stream's dynamic power goes as f V^2 with V ~ f near the top of the DVFS curve: P = static +
kappa R^3 for one die design. The rate a part holds is where that meets its tdp_w; its
sustained_clock_factor is that rate over its cold-burst GEMM (best_gemm_tflops).
"""
import json

import pytest

from designer.core.engine.constants import accelerator_constants
from designer.core.model.catalog import load_catalog
from tests.conftest import run_cli
from tests.validation.cases import DATA

TWO_PARTS = """
accelerators:
""" + "".join(f"""
  - name: {name}
    peak_tflops: {{bf16: 2000}}
    tensor_formats: [bf16]
    best_gemm_tflops: 1600
    hbm_gib: 100
    hbm_tbps: 8
    scale_up: nvswitch
    scale_up_gbps: 7200
    tdp_w: {tdp}
    calibration: {{gemm_power_w_per_pflops3: 435}}
    sources: {{peak_tflops: a, tensor_formats: b, best_gemm_tflops: c, hbm_gib: d, hbm_tbps: e, scale_up_gbps: f, tdp_w: g}}
""" for name, tdp in (("LOW", 1000), ("HIGH", 1400), ("UNCAPPED", 4000)))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _clock(catalog, name, calibration=None):
    return accelerator_constants(catalog.accelerator(name), calibration, catalog).sustained_clock_factor


def test_a_part_with_a_higher_power_limit_sustains_a_faster_rate(tmp_path):
    (tmp_path / "accelerators.yaml").write_text(TWO_PARTS)
    parts = load_catalog(tmp_path)
    low, high = _clock(parts, "LOW"), _clock(parts, "HIGH")
    # the same die at 1400 W instead of 1000 W: the cube root of the power it may spend on the clock
    assert high / low == pytest.approx((1400 / 1000) ** (1 / 3))
    assert low == pytest.approx(1000 * (1000 * (1 - 0.112) / 435) ** (1 / 3) / 1600)
    # a limit above what the stream draws at its burst clock does not run it faster than the burst
    assert _clock(parts, "UNCAPPED") == 1.0


def test_parts_of_one_die_hold_the_rate_their_power_limits_allow(catalog):
    """B200 is GB200's die at 1000 W instead of 1200 W, the 96 GB H100 the H100's at 500 W instead of 700 W:
    the rates they sustain (factor x best GEMM) are in the ratio of the cube roots of the limits, whatever
    their cold-burst measurements."""
    def rate(name):
        return _clock(catalog, name) * catalog.accelerator(name).best_gemm_tflops
    assert rate("B200") / rate("GB200") == pytest.approx((1000 / 1200) ** (1 / 3))
    assert rate("B300") / rate("GB200") == pytest.approx((1100 / 1200) ** (1 / 3))
    assert rate("H100-SXM5-96GB") / rate("H100") == pytest.approx((500 / 700) ** (1 / 3))
    assert rate("H200") == rate("H100") == rate("H800")


def test_hoppers_power_model_is_the_h200_measurement(catalog):
    """tests/validation/data/h200-kernels.json: the card idles at 78.35 W of its 700 W limit (the static
    share) and its layer GEMMs, run back to back under the power cap, hold 0.879 of the cold 8192^3
    burst; the model built on those gives H100/H200 that rate."""
    data = json.loads((DATA / "h200-kernels.json").read_text())
    fields = [f.strip() for f in data["meta"]["smi_start"].split(",")]
    limit_w, idle_w = float(fields[2]), float(fields[3])
    ac = accelerator_constants(catalog.accelerator("H200"), None, catalog)
    assert ac.static_power_fraction == pytest.approx(idle_w / limit_w, abs=0.001)
    burst = data["ceilings"]["bf16_8192"]["tflops"]
    assert ac.sustained_clock_factor * catalog.accelerator("H200").best_gemm_tflops == pytest.approx(
        0.879 * burst, rel=0.002)


def test_a_files_calibration_overrides_or_recomputes_the_clock(catalog):
    # a factor given in the file wins over the power model
    assert _clock(catalog, "B200", {"accelerators": {"B200": {"sustained_clock_factor": 0.6}}}) == 0.6
    # the file's power constants recompute a clock, even where the catalog fits one (GB300)
    assert _clock(catalog, "GB300") == pytest.approx(0.97)
    gb300 = _clock(catalog, "GB300", {"accelerators": {"GB300": {"gemm_power_w_per_pflops3": 422}}})
    assert gb300 == pytest.approx(_clock(catalog, "B300") * (1400 / 1100) ** (1 / 3) * 1769 / 1822)
    # a larger static share leaves less of the limit to the clock
    assert _clock(catalog, "B200", {"accelerators": {"B200": {"static_power_fraction": 0.3}}}) < _clock(catalog, "B200")


def test_the_cli_evaluates_a_part_at_the_clock_its_power_allows():
    """A user's --set of the power model's constants changes the step the way the physics says."""
    example = "resources/examples/gb200-nvl72-144gpu.yaml"
    steps = {}
    for label, sets in (("catalog", []), ("hotter", ["calibration.accelerators.GB200.static_power_fraction=0.4"])):
        code, out, err = run_cli("evaluate", example, *sum((["--set", s] for s in sets), []), "--json")
        assert code == 0, err
        steps[label] = json.loads(out)["step_time_s"]
    assert steps["hotter"] > steps["catalog"]
