"""Running experiments whose scores polaroc reads: fold assignment and cross-validation logs."""

from polaroc.experiment.crossval import cross_validate_log
from polaroc.experiment.folds import stratified_folds

__all__ = ["cross_validate_log", "stratified_folds"]
