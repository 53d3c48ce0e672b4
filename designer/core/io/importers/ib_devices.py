"""The fastest InfiniBand rate of each Mellanox/NVIDIA device, by the PCI device id ibnetdiscover
prints in its `devid=` header line (vendor 0x2c9 / 0x15b3).

A port that trained at its own device's best is not degraded, whatever the fabric around it
runs at: a DDR-only HCA at 4xDDR on a QDR fabric is as fast as that HCA goes. Names: the PCI ID
Repository (pci-ids.ucw.cz, vendor 15b3); fastest rate: NVIDIA/Mellanox product briefs of each
adapter and switch ASIC. Devices not listed here are judged, as before, by the rates their other
ports reached.
"""
from __future__ import annotations

# devid -> (product, fastest IBTA speed name)
DEVICES: dict[int, tuple[str, str]] = {
    # host channel adapters
    0x5A44: ("InfiniHost MT23108", "SDR"),
    0x6274: ("InfiniHost III Lx MT25204", "DDR"),
    0x6278: ("InfiniHost III Ex MT25208 (Tavor mode)", "DDR"),
    0x6282: ("InfiniHost III Ex MT25208", "DDR"),
    0x6340: ("ConnectX MT25408 (IB SDR)", "SDR"),
    0x634A: ("ConnectX MT25418 (IB DDR)", "DDR"),
    0x6354: ("ConnectX MT25428 (IB QDR)", "QDR"),
    0x6732: ("ConnectX MT26418 (IB DDR, PCIe 2.0)", "DDR"),
    0x673C: ("ConnectX MT26428 (IB QDR, PCIe 2.0)", "QDR"),
    0x6746: ("ConnectX-2 MT26438", "QDR"),
    0x1003: ("ConnectX-3 MT27500", "FDR"),
    0x1007: ("ConnectX-3 Pro MT27520", "FDR"),
    0x1011: ("Connect-IB MT27600", "FDR"),
    0x1013: ("ConnectX-4 MT27700", "EDR"),
    0x1017: ("ConnectX-5 MT27800", "EDR"),
    0x1019: ("ConnectX-5 Ex MT28800", "EDR"),
    0x101B: ("ConnectX-6 MT28908", "HDR"),
    0x1021: ("ConnectX-7 MT2910", "NDR"),
    0x1023: ("ConnectX-8", "XDR"),
    0xA2DC: ("BlueField-3", "NDR"),
    # switch ASICs
    0xA87C: ("InfiniScale MT43132", "SDR"),
    0xB924: ("InfiniScale III MT47396", "DDR"),
    0xBD36: ("InfiniScale IV MT48438", "QDR"),
    0xC738: ("SwitchX MT51000", "FDR"),
    0xCB20: ("Switch-IB MT52000", "EDR"),
    0xCB84: ("Switch-IB 2 MT52100", "EDR"),
    0xCF08: ("Quantum MT53000", "HDR"),
    0xD2F0: ("Quantum-2 MT54000", "NDR"),
}


def device(devid: int | None) -> tuple[str, str] | None:
    """(product, fastest speed name) of a device id, or None when it is not known."""
    return DEVICES.get(devid) if devid is not None else None
