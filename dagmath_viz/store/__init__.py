"""Every on-disk place the project writes between runs: kept frames, derived views, uploads."""
