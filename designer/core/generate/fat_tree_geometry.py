"""The fat-tree generator's physical and drawing constants: servers and switches per rack, rack
units, where racks go on the canvas, the cables' and switches' default latencies."""
from __future__ import annotations

from ..model.geometry import RACK_LABEL_PX, RACK_WIDTH_PX, rack_height_px


# ---- physical and drawing constants -------------------------------------------------------------

# 4 x 8-GPU servers per 42U rack: a DGX/HGX H100 server draws up to ~10.2 kW, so four fill a
# ~40 kW air-cooled rack; this is the usual density of NVIDIA's DGX SuperPOD reference layouts.
SERVERS_PER_RACK = 4
RACK_UNITS = 42
# Height of an 8-GPU HGX-class server; other sizes scale with the GPU count (4 GPUs -> 2U).
SERVER_UNITS_PER_8_GPUS = 4
# Network racks: 16 switches per rack, each followed by one unit for cable management
# (a 64-port switch has 64 cables on its front). 16 x 2U = 32U of a 42U rack.
SWITCHES_PER_NETWORK_RACK = 16
SWITCH_SLOT_PITCH_UNITS = 2
# 1U up to 64 ports (e.g. Quantum-2 QM9700, 32 OSFP cages = 64 x 400G); larger radix 2U.
SWITCH_UNITS_SMALL = 1
SWITCH_UNITS_LARGE = 2
SWITCH_LARGE_RADIX = 64

# Canvas grid, in scene pixels: racks side by side in rows, network racks above compute racks.
RACKS_PER_ROW = 16
RACK_PITCH_X_PX = RACK_WIDTH_PX + 12.0  # a rack plus a 12 px aisle
ROW_PITCH_Y_PX = rack_height_px(RACK_UNITS) + RACK_LABEL_PX + 16.0  # a 42U rack, its label, a gap
BLOCK_GAP_PX = 120.0  # between pods (and between the core row and the pods)

# Cable latencies. Light and signal in copper/fibre take ~5 ns per metre. A NIC-to-leaf
# cable runs ~2 m (server to a network rack in the same row): 0.01 us. Leaf-spine cables
# cross a row (~10 m): 0.05 us; spine-core cables cross the hall (~20 m): 0.1 us.
NIC_CABLE_LATENCY_US = 0.01
LEAF_SPINE_CABLE_LATENCY_US = 0.05
SPINE_CORE_CABLE_LATENCY_US = 0.1

# Port-to-port latency when the catalog has no switch of this fabric and speed:
# InfiniBand cut-through ~130 ns (Quantum-2 class), Ethernet store-and-forward ~600 ns.
DEFAULT_SWITCH_LATENCY_US = {"infiniband": 0.13, "ethernet": 0.6}


FABRIC_NAMES = {"infiniband": "InfiniBand", "ethernet": "Ethernet"}


def server_units(gpus_per_node: int) -> int:
    return max(1, -(-gpus_per_node * SERVER_UNITS_PER_8_GPUS // 8))


def switch_units(radix: int) -> int:
    return SWITCH_UNITS_SMALL if radix <= SWITCH_LARGE_RADIX else SWITCH_UNITS_LARGE


def switch_pitch(radix: int) -> int:
    """Rack units from one switch to the next: the switch plus one unit of cable management."""
    return max(SWITCH_SLOT_PITCH_UNITS, switch_units(radix) + 1)


def switches_per_rack(radix: int) -> int:
    return min(SWITCHES_PER_NETWORK_RACK, max(1, RACK_UNITS // switch_pitch(radix)))
