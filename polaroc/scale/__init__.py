"""Logs bigger than one query: a batch of groups at a time, or on Ray and Spark.

``polaroc.scale.distributed`` (``pr.distributed``) runs the per-fold table on a
cluster engine; it imports Ray or PySpark only when called.
"""

from polaroc.scale import distributed
from polaroc.scale.batches import evaluate_in_batches, plan_batches

__all__ = ["distributed", "evaluate_in_batches", "plan_batches"]
