"""The docks beside the canvas: parts palette, inspector, job and jobs panels."""
