"""The internal column names, each spelled once.

Tables add working columns to the user's log; their names start with ``_pr_`` so that
they never collide with the log's own columns, and every module reads them from here.
"""

from __future__ import annotations

__all__ = [
    "CLASS",
    "DUP",
    "DUP_KEY",
    "IS_POSITIVE",
    "LABEL",
    "NAN_FLAG",
    "ONE_GROUP",
    "POSITIVE",
    "REPLICATE",
    "SCALE",
    "SCORE",
    "WEIGHT",
]

SCORE = "_pr_score"  # the score as Float64
POSITIVE = "_pr_positive"  # label == class (Boolean), or a class-less log's indicator
WEIGHT = "_pr_weight"  # the case weight as Float64
ONE_GROUP = "_pr_group"  # the constant group key of ``by=()``
CLASS = "_pr_class"  # the class, comparable with the label
LABEL = "_pr_label"  # the label, comparable with the class
IS_POSITIVE = "_pr_pos"  # a row of a (group, class) block whose label is the class
NAN_FLAG = "_pr_nan"  # a group or block holds a NaN score
REPLICATE = "_pr_replicate"  # a bootstrap replicate's number
DUP, DUP_KEY = "_pr_dup", "_pr_dup_key"  # repeated keys per group, and the first of them
SCALE = "_pr_scale"  # a weighted block's largest weight (its weights enter sums divided by it)
