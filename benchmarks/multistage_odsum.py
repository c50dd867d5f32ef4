"""DOS RAG against Vanilla RAG, RAPTOR, ReadAgent and the full context at equal budgets, on ODSum (the
Stronger-Baselines paper's comparison, offline), scored by ROUGE against the human reference summaries.

ODSum Story, open domain: the collection is every section of the 25 dev stories (238 sections, each a document;
100-token passages), and each of the 125 dev questions is asked as "<story title>: <question>" (ODSum's retrieval
reads rewritten questions that name their story; benchmarks/lightpal_odsum.py says why). ODSum Meeting: the 232
transcripts in 100-token passages, the 296 dev queries as they are (they name their topic). Every system packs
at most the same number of tokens (a full context that cannot hold even its documents' headers is reported as
not run), and the same offline summarizer writes the answer (extractive, 250 words for Story, 200 for Meeting,
as benchmarks/odsum_rouge.py); ROUGE-1/2/L F1 against the best of the references. Vanilla and DOS RAG rank the
units by embedding cosine (wordllama), as the paper's retriever does; RAPTOR's tree and ReadAgent's gists are
written offline (central sentences), since no capable LLM runs here. No setting of these systems was chosen on
ODSum (they are the papers' or citesum's defaults); the extractive summarizer's cosine stretch was chosen
looking at these dev splits among others. DOS RAG, Vanilla RAG and the full context are answered by citesum's
pipeline itself, RAPTOR and ReadAgent from the tree and memory built here (multistage_summhay.py's answer_of).

Run: python benchmarks/multistage_odsum.py [--budgets 4000,8000,16000] [--corpora story,meeting] [--cache DIR]
Writes: benchmarks/results/multistage_odsum.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, mean_rouge, write_result  # noqa: E402
from lightpal_odsum import open_index, titled  # noqa: E402
from multistage_summhay import SYSTEMS, answer_of, context_of, offline_structures  # noqa: E402

from citesum.datasets import load_dataset  # noqa: E402
from citesum.errors import BudgetError  # noqa: E402
from citesum.index.store import IndexSettings  # noqa: E402
from citesum.readagent import ReadAgent  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402
from citesum.summarize.statements import CentralStatements  # noqa: E402

#: corpus -> (loader name, data path, word limit of the answer: ODSum's, as benchmarks/odsum_rouge.py)
CORPORA = {"story": ("odsum-story", SHARED_DATA / "odsum" / "story" / "documents_dev.jsonl", 250),
           "meeting": ("odsum-meeting", SHARED_DATA / "odsum" / "meeting", 200)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="4000,8000,16000")
    parser.add_argument("--corpora", default="story,meeting")
    parser.add_argument("--cache", default=None, help="keep the indexes here between runs")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    agent = ReadAgent(CentralStatements())
    results = {}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        for corpus in args.corpora.split(","):
            name, path, words = CORPORA[corpus]
            dataset = load_dataset(name, str(path))
            queries = titled(dataset) if corpus == "story" else dataset.queries
            index = open_index(root / f"multistage-{corpus}", IndexSettings(), dataset.documents)
            tree, memory, built = offline_structures(index, agent)
            structure = {"documents": len(dataset.documents), "queries": len(queries), **built}
            print(corpus, structure, flush=True)
            rows = []
            summarizer = ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=words))
            for budget in budgets:
                for system in SYSTEMS:
                    answers, seconds = [], 0.0
                    try:
                        context_of(system, queries[0].text, index, budget, tree, agent, memory)
                    except BudgetError as exc:  # the full context of hundreds of documents in a small budget
                        rows.append({"budget": budget, "system": system, "not_run": str(exc)})
                        print(corpus, rows[-1], flush=True)
                        continue
                    for query in queries:
                        summary, context_s = answer_of(system, query.text, index, budget, tree, agent, memory,
                                                       summarizer)
                        seconds += context_s
                        answers.append(" ".join(b.text for b in summary.bullets))
                    rows.append({"budget": budget, "system": system,
                                 **mean_rouge(answers, [q.references for q in queries]),
                                 "context_ms_per_query": round(1000 * seconds / len(queries), 1)})
                    print(corpus, rows[-1], flush=True)
            results[corpus] = {"structure": structure, "word_limit": words, "rows": rows}
    write_result("multistage_odsum", {
        "data": "ODSum dev (Story: 25 stories, 125 titled questions; Meeting: 232 transcripts, 296 queries); no "
                "setting of these systems was chosen on ODSum (the summarizer's cosine stretch was chosen looking at "
                "these dev splits among others)",
        "units": "passages of at most 100 tokens (cl100k)", "retriever": "dense (wordllama cosine)",
        "summarizer": "extractive with ODSum's word limit", "tree_and_gists": "offline central sentences",
        "metric": "ROUGE-1/2/L F1, best reference", "results": results})


if __name__ == "__main__":
    main()
