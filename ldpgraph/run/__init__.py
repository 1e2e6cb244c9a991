"""Executors of the protocols (:mod:`ldpgraph.core`): in memory, over report files, on Dask.

None contains protocol-specific code; for one seed they give the same bits.
"""

from .files import accumulate_files, release_to_file
from .memory import Run, node_lists, run_in_memory
from .method import Method, get_method, method_names
from .shuffler import shuffle_files, shuffle_rows

__all__ = ["Method", "get_method", "method_names", "Run", "accumulate_files", "node_lists", "release_to_file",
           "run_in_memory", "shuffle_files",
           "shuffle_rows"]
