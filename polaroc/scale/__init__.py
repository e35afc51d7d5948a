"""Logs bigger than one query: evaluating a log a batch of groups at a time."""

from polaroc.scale.batches import evaluate_in_batches, plan_batches

__all__ = ["evaluate_in_batches", "plan_batches"]
