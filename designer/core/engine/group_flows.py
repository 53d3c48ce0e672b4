"""The flows a dimension's groups send between servers, per traffic pattern, for one byte of bus
volume per rank: a ring through each group's servers (its GPUs on one rail each), all-to-all as
ring shifts, the pipeline's pairs both ways or one way, or a p2p ring's step. Each flow leaves from the NIC on the destination GPU's rail
(PXN) and is spread over the servers' NICs by Fabric.spread_over_nics."""
from __future__ import annotations

import numpy as np

from .fabric import Fabric
from .group_shape import GroupShape


def pattern_flows(f: Fabric, sh: GroupShape, pattern: str):
    """Inter-node flows of a dimension's groups for a bus volume of 1 byte per rank, over all groups at
    once: (source NIC, destination NIC, bytes, group index) per flow."""
    G, n = sh.members.shape
    if not sh.spans_servers:
        return (np.zeros(0, np.int64),) * 2 + (np.zeros(0),) + (np.zeros(0, np.int64),)
    if pattern in ("pairs", "one_way") and n == 2:  # member 0 -> member 1, and back unless one way
        a, b = sh.members[:, 0], sh.members[:, 1]
        if sh.by_node is not None:  # every pair on two servers (spans_servers: none on one)
            gid = np.arange(G)
        else:
            cross = f.gpu_domain.take(a) != f.gpu_domain.take(b)  # (take: see pxn_nic)
            a, b = a[cross], b[cross]
            gid = cross.nonzero()[0]
        if pattern == "one_way":  # every stage sends to the next at once (a 1F1B exchange's one direction)
            return pxn_nic(f, a, b), f.gpu_nic.take(b), np.ones(a.size), gid
        senders, receivers = np.concatenate([a, b]), np.concatenate([b, a])
        src = pxn_nic(f, senders, receivers)
        return src, f.gpu_nic.take(receivers), np.ones(src.size), np.concatenate([gid, gid])
    if pattern in ("pairs", "one_way"):  # a p2p ring's step (context parallelism): every member sends to the next at once
        nxt = np.roll(sh.members, -1, axis=1)
        cross = f.gpu_domain[sh.members] != f.gpu_domain[nxt]
        gid = np.repeat(np.arange(G), n).reshape(G, n)[cross]
        a, b = sh.members[cross], nxt[cross]
        return pxn_nic(f, a, b), f.gpu_nic[b], np.ones(a.size), gid
    if sh.by_node is not None:
        G, N, g = sh.by_node.shape
        here = sh.by_node.reshape(G, N * g)
        nxt = _next_server(sh.by_node, 1).reshape(G, N * g)
        gid = np.repeat(np.arange(G), N * g)
        src_gpu, dst_gpu = here.ravel(), nxt.ravel()
        if pattern == "a2a":
            # Every member sends 1/n of its buffer to each member elsewhere; per NIC that is
            # (N-1)/N of the buffer S on its rail. Model it as N-1 ring shifts of S/N each, per
            # bus byte (S (n-1)/n) n/(n-1) / N.
            srcs, dsts, gids = [], [], []
            for shift in range(1, N):
                other = _next_server(sh.by_node, shift).reshape(G, N * g)
                srcs.append(here.ravel())
                dsts.append(other.ravel())
                gids.append(gid)
            src_gpu, dst_gpu, gid = np.concatenate(srcs), np.concatenate(dsts), np.concatenate(gids)
            per = np.full(src_gpu.size, n / max(n - 1, 1) / N)
        else:
            per = np.full(src_gpu.size, 1.0 / g)  # the node's traffic spread over its g NICs
        return pxn_nic(f, src_gpu, dst_gpu), f.gpu_nic.take(dst_gpu), per, gid
    # Uneven groups: a ring through the members in node order, one flow per hop.
    ring = np.sort(sh.members, axis=1)
    nxt = np.roll(ring, -1, axis=1)
    cross = f.gpu_domain[ring] != f.gpu_domain[nxt]
    gid = np.repeat(np.arange(G), n).reshape(G, n)[cross]
    s, d = ring[cross], nxt[cross]
    hops = np.maximum(cross.sum(axis=1), 1)
    per = (sh.n_nodes / hops)[gid] / np.maximum(n / sh.n_nodes, 1)[gid]
    return pxn_nic(f, s, d), f.gpu_nic[d], per, gid


def _next_server(by_node: np.ndarray, shift: int) -> np.ndarray:
    """Each group's GPUs on the server `shift` places further round its ring (np.roll along the
    servers, without its generic bookkeeping)."""
    shift %= by_node.shape[1]
    return np.concatenate((by_node[:, shift:], by_node[:, :shift]), axis=1) if shift else by_node


def pxn_nic(f: Fabric, src_gpu: np.ndarray, dst_gpu: np.ndarray) -> np.ndarray:
    """NIC on the source node that sits on the destination GPU's rail (PXN)."""
    # (take: the GPUs are the placements' 32-bit ranks, which indexing converts first, at twice the cost)
    rail, first_nic = _rails_and_first_nics(f)
    local = rail.take(dst_gpu)
    base = first_nic.take(src_gpu)
    # servers with as many NICs each: every source server has the destination's rail
    if f.remembered("alike_nic_counts", (f.node_nic_count,),
                    lambda: bool((f.node_nic_count == f.node_nic_count[:1]).all())):
        return base + local
    has_rail = local < f.node_nic_count[f.gpu_node[src_gpu]]
    if has_rail.all():  # no flow falls back
        return base + local
    return base + np.where(has_rail, local, f.gpu_nic[src_gpu] - base)  # else the source GPU's own NIC


def _rails_and_first_nics(f: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """Per GPU, its NIC's place among its server's NICs (its rail) and its server's first NIC: kept
    with the fabric while its GPUs and NICs are the same arrays (every pattern of every plan reads them)."""
    def make():
        first_nic = f.node_nic_base[f.gpu_node]
        return f.gpu_nic - first_nic, first_nic
    return f.remembered("gpu_rails", (f.gpu_nic, f.gpu_node, f.node_nic_base), make)
