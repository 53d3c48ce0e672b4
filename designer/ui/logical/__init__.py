"""The logical fabric view (tiers, pods, rails, bundles), beside the rack canvas."""
