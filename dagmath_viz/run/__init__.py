"""Running the scorer over many files: the process pool, streaming, the in-memory corpus, Dask."""
