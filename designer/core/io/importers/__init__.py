"""Readers of other tools' files into Designer documents, and writers back to them.

One module per format (ibnetdiscover, Slurm topology.conf, NCCL topology XML, ...). Each raises
DesignerError with FILE:LINE problems for input it cannot read; none imports Qt.
"""
