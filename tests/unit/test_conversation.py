from __future__ import annotations

import re

from citesum.summarize.conversation import clean_utterance, is_statement, speaker_labels, transcript_statements
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer
from citesum.types import Context, ContextBlock

# in the form of ODSum's meeting transcripts: turns run together on one line, spaces before punctuation
MEETING = (
    "project manager: Okay . So today we decide on the buttons of the remote control . "
    "marketing: Yeah , um , our survey says the volume buttons and the channel buttons are the most used buttons . "
    "industrial designer: Yeah , not too much buttons and marketing: Should it be , y these universal remote "
    "controls ? project manager: We decided on a curved rubber case with big round buttons . "
    "industrial designer: I think I think the the re - remote should have a h h lithium battery inside . "
    "marketing: Right . user interface: What about the colour of the case . "
    "user interface: The remote will be yellow , it 's the company 's colour . "
    "project manager: Mm-hmm . Okay , right ."
)


def test_a_transcript_is_recognised_by_its_recurring_speaker_labels_and_prose_is_not() -> None:
    assert speaker_labels([MEETING]) >= {"project manager", "marketing", "industrial designer", "user interface"}
    prose = ("Note: the council met on Monday. The agenda: water rates, the tram and rents. Update: the vote "
             "was postponed. The mayor said: we will decide in May. Note: minutes follow.")
    assert speaker_labels([prose]) is None
    # one packed passage may hold a label once: the labels are found over the whole context
    halves = [MEETING[: len(MEETING) // 2], MEETING[len(MEETING) // 2 :]]
    assert speaker_labels(halves) == speaker_labels([MEETING])


def test_turns_give_cleaned_statements_and_leave_out_questions_fragments_and_backchannels() -> None:
    statements = transcript_statements(MEETING, 5, speaker_labels([MEETING]))
    said = [(s.speaker, s.text) for s in statements]
    assert said == [
        ("project manager", "Today we decide on the buttons of the remote control."),
        ("marketing", "Our survey says the volume buttons and the channel buttons are the most used buttons."),
        ("project manager", "We decided on a curved rubber case with big round buttons."),
        ("industrial designer", "I think the remote should have a lithium battery inside."),
        ("user interface", "The remote will be yellow, it's the company's colour."),
    ]  # left out: "Yeah, not too much buttons and" (cut off), two questions (one without its mark), "Okay, right."
    assert clean_utterance("there 's simply not a lot , it 's the h function") == "There's simply not a lot, it's the function"
    assert not is_statement("Do we want the buttons to light up.", 5)
    assert is_statement("The buttons will light up in the dark.", 5)


def test_bullets_of_a_meeting_name_the_speaker_and_hold_no_label_or_question() -> None:
    context = Context((ContextBlock(1, "ES2005b", "ES2005b", MEETING, 200),), "original", 10_000, 200)
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=3)).summarize(
        "What did the group decide about the remote control's buttons and case?", context)
    assert summary.bullets
    for bullet in summary.bullets:
        speaker, _, text = bullet.text.partition(": ")
        assert speaker in {"Project manager", "Marketing", "Industrial designer", "User interface"}
        assert not re.search(r"\b(?:marketing|project manager|industrial designer|user interface):", text)
        assert not text.endswith("?") and " ," not in text


def test_a_context_that_mixes_a_transcript_and_prose_keeps_the_prose() -> None:
    report = "The reservoir fell to 41 percent of its capacity in August, the lowest level since 1998."
    context = Context((ContextBlock(1, "ES2005b", "ES2005b", MEETING, 200), ContextBlock(2, "r", "Report", report, 20)),
                      "original", 10_000, 220)
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=2)).summarize("How low is the reservoir?", context)
    assert summary.bullets[0].text == report and summary.bullets[0].citations == ("r",)


def test_prose_that_quotes_someone_twice_is_not_a_transcript() -> None:
    blocks = ["The mayor said: we will decide on the tram in May. The council agreed to wait for the report.",
              "The mayor said: the budget is tight this year. The opposition asked for the figures again."]
    assert speaker_labels(blocks) is None  # "mayor said" and "said" are one turn each time, of one speaker
    assert not is_statement(clean_utterance("Um ."), 0)  # nothing left: no statement (and no error)
