from __future__ import annotations

from citesum.demo.haystack import SUBTOPICS, SummaryCheck, SyntheticHaystack
from citesum.types import Bullet, Context, Summary


def test_check_counts_on_topic_bullets_and_supported_citations(haystack: SyntheticHaystack) -> None:
    rent, permits = (phrasings[0] for _, phrasings in SUBTOPICS["housing"][1][:2])
    reservoir = SUBTOPICS["water"][1][0][1][1]  # the second wording counts too
    rent_documents = haystack.gold["housing-rent"]
    other = next(d.id for d in haystack.documents if d.id not in rent_documents)
    bullets = (
        Bullet(rent, (rent_documents[0], other)),  # one right citation, one wrong
        Bullet(permits, ()),  # on topic, no citation
        Bullet(reservoir, (haystack.gold["water-reservoir"][0],)),  # right citation, wrong subtopic
        Bullet("Residents met the regional minister.", (other,)),  # background: neither
    )
    summary = Summary(bullets, Context((), "original", 0, 0))
    assert haystack.check("housing", summary) == SummaryCheck(bullets=4, on_topic=2, citations=4, supported=2,
                                                              filler=1)
    assert haystack.check("water", summary).on_topic == 1
