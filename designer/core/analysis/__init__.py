"""What limits a design and what would pay: attribution, what-if advice, plan search, scaling."""
