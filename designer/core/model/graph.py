"""The design as a networkx graph, for routing and connectivity.

One graph node per server and per switch; parallel links between the same two devices
are merged into one edge whose `capacity_gbps` is their sum and `links` their ids.
The scale-up fabric inside a server is not an edge: it is the server's own property.
"""
from __future__ import annotations

import networkx as nx

from .document import Document
from .elements import split_endpoint


def to_networkx(doc: Document) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(
        (n.id, {"type": "node", "gpus": n.accelerator_count, "rack": n.rack}) for n in doc.nodes
    )
    g.add_nodes_from(
        (s.id, {"type": "switch", "tier": s.tier, "fabric": s.fabric, "rail": s.rail, "pod": s.pod})
        for s in doc.switches
    )
    for link in doc.links:
        a, _ = split_endpoint(link.a)
        b, _ = split_endpoint(link.b)
        if a not in g or b not in g or a == b:
            continue  # dangling links are the checker's business
        capacity = link.bandwidth_gbps * link.count / link.slowdown
        data = g.get_edge_data(a, b)
        if data is None:
            g.add_edge(a, b, capacity_gbps=capacity, cables=link.count, links=[link.id], kind=link.kind,
                       latency_us=link.latency_us)
        else:
            data["capacity_gbps"] += capacity
            data["cables"] += link.count
            data["links"].append(link.id)
    return g
