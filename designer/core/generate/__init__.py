"""Topology generators: whole cluster designs from a few numbers (docs/contract.md section 4)."""
from .fat_tree import FatTreeError, FatTreePlan, generate_fat_tree, plan_fat_tree

__all__ = ["FatTreeError", "FatTreePlan", "generate_fat_tree", "plan_fat_tree"]
