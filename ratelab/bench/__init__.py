"""Benchmarks, in one room: the replay engines (:mod:`.replay`), reading logs (:mod:`.ingest`)
and the Dask engine (:mod:`.dask`). ``ratelab bench`` runs them (:mod:`ratelab.cli.bench`)."""
