"""Everything on disk under the state directory: paths, locking, adoption, diagnosis."""
