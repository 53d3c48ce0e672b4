"""NCCL's protocol choice per size follows its tuning model (src/graph/tuning.cc) for the release in
`calibration.nccl_version`: LL's estimate is half of Simple's bus bandwidth capped per GPU architecture
(Hopper 141 GB/s from 2.21, 87.7 before), LL128's 0.92 of it; the pick is then costed physically."""
import json

from tests.conftest import EXAMPLES, run_cli

H100_64 = EXAMPLES / "h100-64gpu-infiniband.yaml"


def _protocols(*settings: str, min_bytes="256K", max_bytes="8M") -> dict[int, str]:
    args = ["nccl", H100_64, "--op", "all_reduce", "--num-gpus", "8", "--algo", "ring",
            "--min-bytes", min_bytes, "--max-bytes", max_bytes, "--json"]
    for s in settings:
        args += ["--set", s]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return {r["size_bytes"]: r["protocol"] for r in json.loads(out)["designer_rows"]}


def test_ll_holds_past_1_mib_where_nccls_model_still_rates_it_faster():
    # 8 H100, NCCL 2.27: LL's estimate (141 GB/s busbw, 15 us) beats LL128's (0.92 x 369, 31.5 us) up to
    # about 2.3 MB: LL at 2 MiB, LL128 at 4 MiB (no fixed 1 MiB threshold).
    chosen = _protocols()
    assert chosen[2 * 2**20] == "LL"
    assert chosen[4 * 2**20] == "LL128"
    assert chosen[256 * 2**10] == "LL"


def test_older_nccl_rates_ll_lower_and_leaves_it_sooner():
    # Before 2.21 NCCL rated LL at a quarter of Simple, capped at 87.7 GB/s on Hopper: LL128 at 2 MiB.
    chosen = _protocols("calibration.nccl_version=2.20")
    assert chosen[2 * 2**20] == "LL128"
    assert chosen[1 * 2**20] == "LL"


def test_the_architectures_ll_cap_is_a_calibration_constant():
    chosen = _protocols("calibration.accelerators.H100-SXM5-80GB.nccl_ll_max_bus_gbps=40")
    assert chosen[1 * 2**20] == "LL128"


def test_a_fixed_ll_threshold_still_applies_when_set():
    chosen = _protocols("calibration.nccl_ll_max_bytes=524288")
    assert chosen[1 * 2**20] == "LL128" and chosen[512 * 2**10] == "LL"
