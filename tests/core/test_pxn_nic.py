"""PXN: a flow leaves from the source server's NIC on the destination GPU's rail, or from the
source GPU's own NIC when its server has no NIC on that rail."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from designer.core.engine.group_flows import pxn_nic

# server 0: 4 GPUs, one NIC each (NICs 0-3); server 1: 4 GPUs sharing 2 NICs (GPUs 4, 5 -> NIC 4; 6, 7 -> NIC 5)
FABRIC = SimpleNamespace(gpu_node=np.array([0, 0, 0, 0, 1, 1, 1, 1]), gpu_nic=np.array([0, 1, 2, 3, 4, 4, 5, 5]),
                         node_nic_base=np.array([0, 4]), node_nic_count=np.array([4, 2]),
                         remembered=lambda name, inputs, make: make())
# two servers of 4 GPUs sharing 2 NICs each (GPUs 0, 1 -> NIC 0; 2, 3 -> NIC 1; 4, 5 -> NIC 2; 6, 7 -> NIC 3)
ALIKE = SimpleNamespace(gpu_node=np.array([0, 0, 0, 0, 1, 1, 1, 1]), gpu_nic=np.array([0, 0, 1, 1, 2, 2, 3, 3]),
                        node_nic_base=np.array([0, 2]), node_nic_count=np.array([2, 2]),
                        remembered=lambda name, inputs, make: make())


def test_flows_leave_on_the_destination_rail_when_the_server_has_it():
    src, dst = np.array([0, 1, 4, 6]), np.array([6, 4, 1, 0])
    # rails 1, 0, 1, 0: each on the sender's NIC of that rail
    assert pxn_nic(FABRIC, src, dst).tolist() == [1, 0, 5, 4]


def test_a_server_without_the_rail_sends_from_the_gpus_own_nic():
    src, dst = np.array([4, 7, 0]), np.array([3, 2, 5])
    # rails 3 and 2 are not on server 1: GPU 4's own NIC 4 and GPU 7's own NIC 5; rail 0 on server 0: NIC 0
    assert pxn_nic(FABRIC, src, dst).tolist() == [4, 5, 0]


def test_servers_with_as_many_nics_send_on_the_destination_rail():
    src, dst = np.array([0, 1, 4, 7]), np.array([6, 4, 3, 0])
    # rails 1, 0, 1, 0 of servers with two NICs each: the sender's NIC of that rail
    assert pxn_nic(ALIKE, src, dst).tolist() == [1, 0, 3, 2]
