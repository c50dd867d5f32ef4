"""Generate a SummHay-like haystack: subtopics, insights repeated across documents, filler, known gold.

Every insight has several paraphrases; each document states a few insights (in one of their wordings) among
topic filler, so retrieval and citation can be checked against an exact insight -> documents map.

Example:
    >>> haystack = generate_haystack(documents=20, seed=1)
    >>> sorted(haystack.gold)[:1]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from citesum.types import Document, Summary

# subtopic -> (query, [(insight id, [paraphrases])]). The questions name what the articles report, in their words
# (the articles never say "transit" or "housing": the offline summarizer, which reads words, would rightly find
# that no sentence answers a question about them; an LLM summarizer reads meaning)
SUBTOPICS: dict[str, tuple[str, list[tuple[str, list[str]]]]] = {
    "water": (
        "What is happening with the city's water supply?",
        [
            ("water-reservoir", [
                "The Lakemont reservoir fell to 41 percent of capacity in August, its lowest level since 1998.",
                "By August the Lakemont reservoir held only 41 percent of its capacity, a low not seen since 1998.",
            ]),
            ("water-pipes", [
                "Engineers estimate that 18 percent of treated water is lost through leaking cast-iron pipes.",
                "Leaks in the old cast-iron mains waste about 18 percent of all treated water, engineers say.",
            ]),
            ("water-desal", [
                "The council approved a $212 million desalination plant to be built at Port Ardeen by 2029.",
                "A desalination plant costing $212 million will be built at Port Ardeen and should open by 2029.",
            ]),
            ("water-rates", [
                "Household water rates will rise by 7.5 percent on January 1 to pay for pipe replacement.",
                "From January 1, households will pay 7.5 percent more for water, money earmarked for new pipes.",
            ]),
        ],
    ),
    "transit": (
        "What is changing for the city's buses and trams?",
        [
            ("transit-tram", [
                "The new Eastline tram will connect the airport to the central station in 22 minutes.",
                "Riders on the Eastline tram will get from the airport to the central station in 22 minutes.",
            ]),
            ("transit-fares", [
                "Bus fares for students under 19 were eliminated in March, and ridership among teenagers rose 31 percent.",
                "Since March students under 19 ride buses for free, and teenage ridership has climbed 31 percent.",
            ]),
            ("transit-electric", [
                "Half of the 420 city buses will be battery-electric by 2027 under a deal with Voltaro Motors.",
                "Under its contract with Voltaro Motors, the city will run 210 of its 420 buses on batteries by 2027.",
            ]),
            ("transit-strike", [
                "A three-day drivers' strike in May cancelled about 9,000 bus trips across the network.",
                "About 9,000 bus trips were cancelled during the three-day strike by drivers in May.",
            ]),
        ],
    ),
    "housing": (
        "What is happening to rents and new homes in the city?",
        [
            ("housing-rent", [
                "Median rent for a two-bedroom flat reached $2,340 a month, up 12 percent in a year.",
                "A two-bedroom flat now rents for a median $2,340 a month, 12 percent more than a year ago.",
            ]),
            ("housing-permits", [
                "Building permits for new homes fell to 3,100 last year, the fewest in a decade.",
                "Only 3,100 permits for new homes were issued last year, a ten-year low.",
            ]),
            ("housing-vacancy", [
                "The rental vacancy rate dropped to 1.8 percent, far below the healthy level of 5 percent.",
                "Just 1.8 percent of rental homes are vacant, well under the 5 percent considered healthy.",
            ]),
            ("housing-zoning", [
                "A zoning reform now allows four-storey apartment buildings near every tram and train stop.",
                "Under the new zoning rules, apartment blocks of up to four storeys may be built near any tram or train stop.",
            ]),
        ],
    ),
}

# Background sentences are assembled from parts, so (as in real news) they rarely repeat word for word.
_WHO = ["Residents", "Shop owners", "Two councillors", "A local historian", "Parents at the school gate",
        "Members of the chamber of commerce", "Volunteers", "Retired teachers", "Commuters", "A union representative"]
_DID = ["gathered at the community hall on {day} evening", "spoke to reporters on {day}",
        "signed an open letter on {day}", "met the regional minister on {day}",
        "wrote to the local newspaper on {day}", "held a small rally on {day} afternoon"]
_SAID = ["to ask for more consultation", "to raise concerns about transparency", "to demand a clearer timetable",
         "to share their experiences", "to call for an independent review", "to thank the staff involved"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_CLOSERS = ["Officials said more details would follow in the coming weeks.",
            "The mayor's office did not respond to a request for comment before publication.",
            "A spokesperson for the regional government declined to comment.",
            "The matter returns to the council chamber next month."]


def _background(rng: random.Random) -> str:
    return f"{rng.choice(_WHO)} {rng.choice(_DID).format(day=rng.choice(_DAYS))} {rng.choice(_SAID)}."


TITLES = ["City Report", "Council Notes", "Metro Desk", "Local Briefing", "Civic Affairs", "Neighbourhood News"]


@dataclass(frozen=True)
class SummaryCheck:
    """A summary checked against the generator's gold."""

    bullets: int
    #: bullets that state, word for word, an insight of the question's subtopic
    on_topic: int
    citations: int
    #: citations to a document that states the bullet's insight
    supported: int
    #: bullets that state no insight of any subtopic: background and closing lines (filler)
    filler: int = 0


@dataclass(frozen=True)
class SyntheticHaystack:
    documents: list[Document]
    #: insight id -> ids of the documents that state it
    gold: dict[str, list[str]]
    #: subtopic -> query
    queries: dict[str, str]

    def relevance(self, subtopic: str) -> dict[str, int]:
        """Graded relevance for a subtopic: how many of its insights each document states."""
        grades: dict[str, int] = {}
        for insight_id, _ in SUBTOPICS[subtopic][1]:
            for document_id in self.gold.get(insight_id, []):
                grades[document_id] = grades.get(document_id, 0) + 1
        return grades

    def insight_stated(self, sentence: str) -> str | None:
        """The id of the insight a sentence states word for word in one of its wordings, if any."""
        for _, (_, items) in SUBTOPICS.items():
            for insight_id, phrasings in items:
                if sentence.strip() in phrasings:
                    return insight_id
        return None

    def check(self, subtopic: str, summary: Summary) -> SummaryCheck:
        """What the generator's gold says of a summary of ``subtopic``'s question (see :class:`SummaryCheck`)."""
        stated = [self.insight_stated(b.text) for b in summary.bullets]
        subtopic_insights = {insight_id for insight_id, _ in SUBTOPICS[subtopic][1]}
        return SummaryCheck(
            bullets=len(summary.bullets),
            on_topic=sum(1 for insight in stated if insight in subtopic_insights),
            citations=sum(len(b.citations) for b in summary.bullets),
            supported=sum(1 for b, insight in zip(summary.bullets, stated)
                          for d in b.citations if d in self.gold.get(insight or "", [])),
            filler=sum(1 for insight in stated if insight is None))

    def write(self, folder: str | Path) -> Path:
        """Write the documents as .txt/.md/.html files plus ``gold.json``; returns the folder."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for document in self.documents:
            (folder / document.id).write_text(_render(document), encoding="utf-8")
        (folder / "gold.json").write_text(
            json.dumps({"queries": self.queries, "insights": {i: p[0] for _, (_, ins) in SUBTOPICS.items() for i, p in ins},
                        "gold": self.gold}, indent=2),
            encoding="utf-8",
        )
        return folder


def _render(document: Document) -> str:
    if document.id.endswith(".md"):
        return f"# {document.title}\n\n{document.text}\n"
    if document.id.endswith(".html"):
        paragraphs = "".join(f"<p>{p}</p>" for p in document.text.split("\n\n"))
        return f"<html><head><title>{document.title}</title></head><body>{paragraphs}</body></html>"
    return f"{document.title}\n\n{document.text}\n"


def generate_haystack(documents: int = 60, seed: int = 0, insights_per_document: int = 2) -> SyntheticHaystack:
    """A deterministic haystack of ``documents`` news-style documents over three subtopics."""
    rng = random.Random(seed)
    insights = [(sub, iid, phrasings) for sub, (_, items) in SUBTOPICS.items() for iid, phrasings in items]
    gold: dict[str, list[str]] = {iid: [] for _, iid, _ in insights}
    result = []
    extensions = [".txt", ".md", ".html"]
    for number in range(documents):
        doc_id = f"doc{number + 1:03d}{extensions[number % 3]}"
        chosen = rng.sample(insights, k=min(insights_per_document, len(insights)))
        sentences = [rng.choice(phrasings) for _, _, phrasings in chosen]
        sentences += [_background(rng) for _ in range(3)] + [rng.choice(_CLOSERS)]
        rng.shuffle(sentences)
        paragraphs = ["  ".join(sentences[i : i + 3]).replace("  ", " ") for i in range(0, len(sentences), 3)]
        for _, iid, _ in chosen:
            gold[iid].append(doc_id)
        title = f"{rng.choice(TITLES)} #{number + 1}"
        result.append(Document(id=doc_id, title=title, text="\n\n".join(paragraphs), format=doc_id.rsplit(".", 1)[1]))
    return SyntheticHaystack(documents=result, gold=gold, queries={s: q for s, (q, _) in SUBTOPICS.items()})
