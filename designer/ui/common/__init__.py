"""Small helpers every part of the window uses: the action guard, wheel guard, icon, canvas export."""
