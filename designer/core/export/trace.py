"""The predicted step as a Chrome / Perfetto trace (JSON Trace Event Format).

A process per server, a thread per device stream (compute, TP, CP, EP, PP, DP, and the
overlapped part of each comm on its own thread so that slices nest), waits on their own
thread. Times in microseconds. Perfetto requires slices on one thread to nest; every
stream here is sequential, which the tests check. See the Trace Event Format
(Chrome, "Trace Event Format" document) and Perfetto's JSON trace import notes.
"""
from __future__ import annotations

import json

from ..engine.evaluate import Evaluation

STREAMS = ("compute", "tp", "tp_hidden", "cp", "cp_hidden", "ep", "ep_hidden", "pp", "dp", "dp_hidden", "wait")
STREAM_NAMES = {"compute": "compute", "tp": "TP comm", "tp_hidden": "TP comm (overlapped)", "cp": "CP comm",
                "cp_hidden": "CP comm (overlapped)", "ep": "EP comm", "ep_hidden": "EP comm (overlapped)",
                "pp": "PP send/recv", "dp": "DP comm", "dp_hidden": "DP comm (overlapped)", "wait": "waits"}


def _stream_of(event) -> str:
    if event.kind.endswith("_hidden"):
        return event.stream + "_hidden"
    return event.stream


def trace_events(result: Evaluation, fabric_node_of, node_names: list[str], gpu_local) -> dict:
    events = []
    seen_pid, seen_tid = set(), set()
    for e in result.events:
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
        cat = "wait" if e.stream == "wait" else ("compute" if e.stream == "compute" else "comm")
        events.append({"ph": "X", "cat": cat, "name": e.label, "pid": pid, "tid": tid, "ts": e.start_s * 1e6,
                       "dur": dur, "args": args})
    events.append({"ph": "i", "name": "step end", "pid": 1, "tid": 1, "ts": result.step_time_s * 1e6, "s": "g"})
    from ... import __version__

    return {"displayTimeUnit": "ms",
            "otherData": {"generator": f"designer {__version__}", "step_time_s": result.step_time_s,
                          "breakdown_s": result.breakdown_s, "plan": result.plan},
            "traceEvents": events}


def write_trace(result: Evaluation, fabric, path: str) -> int:
    from ..io.files import atomic_write_text

    data = trace_events(result, fabric.gpu_node, fabric.node_ids, fabric.gpu_local)
    atomic_write_text(path, json.dumps(data, separators=(",", ":")))
    return len(data["traceEvents"])
