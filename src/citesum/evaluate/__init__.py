"""Evaluation: retrieval metrics (graded NDCG, precision, recall, budgeted insight recall)."""
