"""Evaluation: SummHay's coverage, citation and joint scores and the judges that label coverage (with an LLM or
offline), their agreement with human labels, retrieval metrics, ROUGE, answer precision, position bias, and the
runners that apply the papers' protocols."""
