"""Work off the UI thread: the one worker class, the engine's worker, background jobs, process settings."""
