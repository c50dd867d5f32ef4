"""What an answer holds by default, the same for every front end (the CLI, the service, the demo): no heavy
import here, so a command's options can name them without loading the pipeline."""

#: bullets at most (a maximum, not a quota: fewer when fewer facts answer, none when nothing does)
DEFAULT_BULLETS = 5
#: the whole answer's word limit
DEFAULT_WORDS = 250
#: the context budget of a question that asks none, in the summarizer's tokens
DEFAULT_BUDGET = 15_000
