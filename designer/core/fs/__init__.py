"""Files on disk, below every layer that reads or writes them: atomic writes, writers' process ids."""
