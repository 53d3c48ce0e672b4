"""The predicted step as a Chrome / Perfetto trace (JSON Trace Event Format).

A process per server, a thread per device stream (compute, TP, CP, EP, PP, DP, and the
overlapped part of each comm on its own thread so that slices nest), waits on their own
thread. Times in microseconds. Perfetto requires slices on one thread to nest; every
stream here is sequential, which the tests check. See the Trace Event Format
(Chrome, "Trace Event Format" document) and Perfetto's JSON trace import notes.

A wait says whom it waited for, as the desktop timeline does: `args.waited_for` (the GPU's
global rank), `waited_for_name` (the timeline's "stage 1 gpu8"), `waited_for_at` (server and
local GPU), and a flow arrow from the bar it waited on (on that GPU, the one that ended last
by the wait's end, the pipeline send lane first) to the wait. A pipeline send has a flow arrow
(cat "pp", "send → receive") to the op that received it on the next (previous) stage; both
kinds of arrow come from flows.py, as the timeline's do.
"""
from __future__ import annotations

import json

from ..engine.evaluate import Evaluation
from .flows import WAITED_ON_LANES, send_receive_arrows, wait_arrows  # noqa: F401 (WAITED_ON_LANES: kept importable)

FLOW_NAMES = {"wait": "waited for", "pp": "send → receive"}

STREAMS = ("compute", "tp", "tp_hidden", "cp", "cp_hidden", "ep", "ep_hidden", "pp", "dp", "dp_hidden", "wait")
STREAM_NAMES = {"compute": "compute", "tp": "TP comm", "tp_hidden": "TP comm (overlapped)", "cp": "CP comm",
                "cp_hidden": "CP comm (overlapped)", "ep": "EP comm", "ep_hidden": "EP comm (overlapped)",
                "pp": "PP send/recv", "dp": "DP comm", "dp_hidden": "DP comm (overlapped)", "wait": "waits"}


def _stream_of(event) -> str:
    if event.kind.endswith("_hidden"):
        return event.stream + "_hidden"
    return event.stream


def device_name(result: Evaluation, device: int) -> str:
    """A GPU as the timeline names it: 'stage 1 gpu8', or 'gpu8' outside a pipeline."""
    info = (result.devices or {}).get(device, {})
    return f"stage {info['stage']} gpu{device}" if "stage" in info else f"gpu{device}"


def trace_events(result: Evaluation, fabric_node_of, node_names: list[str], gpu_local) -> dict:
    events = []
    seen_pid, seen_tid = set(), set()
    place = {}  # event index -> (pid, tid) of its slice, for the flow arrows
    for index, e in enumerate(result.events):
        node = int(fabric_node_of[e.device])
        pid = node + 1
        stream = _stream_of(e)
        tid = int(gpu_local[e.device]) * 16 + STREAMS.index(stream) + 1
        if pid not in seen_pid:
            seen_pid.add(pid)
            events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": node_names[node]}})
            events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        if (pid, tid) not in seen_tid:
            seen_tid.add((pid, tid))
            info = result.devices.get(e.device, {})
            stage = f" stage {info['stage']}" if "stage" in info else ""
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": f"gpu{int(gpu_local[e.device])}{stage} {STREAM_NAMES[stream]}"}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        dur = max(0.0, (e.end_s - e.start_s) * 1e6)
        args = {"kind": e.kind, "device": e.device}
        if e.micro_batch >= 0:
            args["micro_batch"] = e.micro_batch
            args["chunk"] = e.chunk
        if e.bytes:
            args["bytes"] = e.bytes
        if e.group:
            args["group"] = e.group
        if e.waited_for is not None:
            other = int(e.waited_for)
            args["waited_for"] = other
            args["waited_for_name"] = device_name(result, other)
            args["waited_for_at"] = f"{node_names[int(fabric_node_of[other])]} gpu{int(gpu_local[other])}"
        cat = "wait" if e.stream == "wait" else ("compute" if e.stream == "compute" else "comm")
        events.append({"ph": "X", "cat": cat, "name": e.label, "pid": pid, "tid": tid, "ts": e.start_s * 1e6,
                       "dur": dur, "args": args})
        place[index] = (pid, tid)
    # arrows: the bar waited on -> the wait, and a pipeline send -> the op that received it
    arrows = [("wait", source, index) for source, index in wait_arrows(result.events)]
    arrows += [("pp", send, receive) for send, receive in send_receive_arrows(result.events, result.devices)]
    for flow_id, (kind, source, target) in enumerate(arrows, start=1):
        src, dst = result.events[source], result.events[target]
        if kind == "wait":
            # just before each slice's end, inside it (an arrow binds to the slice around it):
            # from the moment the awaited work ends to the moment the wait does
            ends = ((src, place[source], src.end_s), (dst, place[target], dst.end_s))
        else:  # from the end of the send to the start of the receiving op
            ends = ((src, place[source], src.end_s), (dst, place[target], dst.start_s))
        for ph, (e, at, t) in zip("sf", ends):
            dur_us = max(0.0, (e.end_s - e.start_s) * 1e6)
            inset = min(dur_us * 0.01, 0.01)
            ts = t * 1e6 - inset if t >= e.end_s else t * 1e6 + inset
            flow = {"ph": ph, "id": flow_id, "cat": kind, "name": FLOW_NAMES[kind], "pid": at[0], "tid": at[1],
                    "ts": ts}
            if ph == "f":
                flow["bp"] = "e"
            events.append(flow)
    events.append({"ph": "i", "name": "step end", "pid": 1, "tid": 1, "ts": result.step_time_s * 1e6, "s": "g"})
    from ... import __version__

    return {"displayTimeUnit": "ms",
            "otherData": {"generator": f"designer {__version__}", "step_time_s": result.step_time_s,
                          "breakdown_s": result.breakdown_s, "plan": result.plan},
            "traceEvents": events}


# Pipeline ops (forward, backward, weight-gradient passes) a trace may hold: each becomes a few
# slices; 2^18 ops write ~150 MB in ~10 s, which Perfetto still opens.
MAX_TRACE_OPS = 1 << 18


def trace_size_problem(result: Evaluation):
    """A Problem when the trace would be too large to write and open (checked before any work)."""
    from ..problems import Problem

    plan = result.plan
    micro, vp = int(plan.get("num_microbatches", 0)), int(plan.get("vp", 1) or 1)
    passes = 3 if plan.get("schedule") in ("zb-h1", "dualpipe") else 2
    devices = max(1, len(result.devices))  # one traced GPU per stage of each distinct replica
    ops = devices * micro * vp * passes
    if ops <= MAX_TRACE_OPS:
        return None
    most = max(1, MAX_TRACE_OPS // (devices * vp * passes))
    return Problem(f"a trace of {micro:,} micro-batches on {devices} traced GPU(s) would hold {ops:,} pipeline "
                   f"passes: at most {MAX_TRACE_OPS:,}", "spec.workload.global_batch_size",
                   fix=f"trace a run of at most {most:,} micro-batches (a smaller global_batch_size); "
                       "evaluate and report take any size")


def write_trace(result: Evaluation, fabric, path: str) -> int:
    from ..fs.atomic import atomic_write_text

    data = trace_events(result, fabric.gpu_node, fabric.node_ids, fabric.gpu_local)
    atomic_write_text(path, json.dumps(data, separators=(",", ":")))
    return len(data["traceEvents"])
