"""One module per wire, each on the seam in ``base``."""
