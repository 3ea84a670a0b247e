"""Command-line modules of the top-level library modules (``ratelab storm``, ``burst``, ``fps``,
``bench``, ``datasets``, ``index``): argument parsing here, the work in the library module.

The rules they follow are in :mod:`ratelab.cli_support`.
"""
