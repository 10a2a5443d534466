"""The worked example's text: English-like prose generated from a small grammar.

No text is downloaded or copied: a fixed vocabulary and a handful of sentence patterns give prose
with the structure a character-level model can learn (spelling, frequent words, agreement of
articles, punctuation, paragraphs), so a better model or a better-tuned optimizer shows in the bits
per byte within seconds of CPU training. The same ``seed`` always gives the same text; the train
text, the agent's validation text and the judge's hidden texts come from different seeds.
"""

from __future__ import annotations

import random

__all__ = ["generate"]

_NOUNS = (
    "river",
    "garden",
    "lantern",
    "village",
    "teacher",
    "engine",
    "harbor",
    "market",
    "letter",
    "window",
    "mountain",
    "orchard",
    "signal",
    "bridge",
    "sailor",
    "kettle",
    "meadow",
    "library",
    "painter",
    "candle",
    "forest",
    "machine",
    "doctor",
    "station",
    "island",
    "farmer",
    "clock",
    "winter",
    "question",
    "number",
    "student",
    "carpenter",
    "valley",
    "storm",
    "wagon",
    "chapter",
    "mirror",
    "shadow",
    "basket",
    "tower",
)
_ADJECTIVES = (
    "quiet",
    "old",
    "bright",
    "narrow",
    "heavy",
    "gentle",
    "early",
    "distant",
    "small",
    "careful",
    "silver",
    "patient",
    "broken",
    "warm",
    "empty",
    "honest",
    "green",
    "sudden",
    "steady",
    "golden",
)
#: (base, third person, past)
_VERBS = (
    ("watch", "watches", "watched"),
    ("carry", "carries", "carried"),
    ("find", "finds", "found"),
    ("open", "opens", "opened"),
    ("follow", "follows", "followed"),
    ("remember", "remembers", "remembered"),
    ("build", "builds", "built"),
    ("answer", "answers", "answered"),
    ("measure", "measures", "measured"),
    ("cross", "crosses", "crossed"),
    ("paint", "paints", "painted"),
    ("repair", "repairs", "repaired"),
    ("count", "counts", "counted"),
    ("visit", "visits", "visited"),
    ("keep", "keeps", "kept"),
    ("leave", "leaves", "left"),
)
_PLACES = (
    "by the river",
    "near the old bridge",
    "in the market",
    "under the tower",
    "behind the orchard",
    "at the station",
    "on the island",
    "across the valley",
    "inside the library",
    "beyond the forest",
)
_TIMES = (
    "In the morning",
    "Before the storm",
    "After supper",
    "Every winter",
    "At dawn",
    "Later that day",
    "On the third day",
    "When the clock struck nine",
    "Long ago",
    "Some years later",
)
_NAMES = ("Anna", "Tomas", "Mirela", "Oskar", "Leda", "Ivo", "Marta", "Hugo", "Selma", "Piet")


def _noun_phrase(rng: random.Random) -> str:
    noun = rng.choice(_NOUNS)
    if rng.random() < 0.5:
        noun = f"{rng.choice(_ADJECTIVES)} {noun}"
    article = "an" if noun[0] in "aeiou" else "a"
    return rng.choice(("the", "the", article)) + " " + noun


def _sentence(rng: random.Random) -> str:
    verb = rng.choice(_VERBS)
    kind = rng.randrange(6)
    if kind == 0:
        text = f"{rng.choice(_TIMES)}, {rng.choice(_NAMES)} {verb[2]} {_noun_phrase(rng)} {rng.choice(_PLACES)}."
    elif kind == 1:
        subject = _noun_phrase(rng)
        text = f"{subject[0].upper()}{subject[1:]} {verb[1]} {_noun_phrase(rng)}."
    elif kind == 2:
        text = f'{rng.choice(_NAMES)} said, "The {rng.choice(_NOUNS)} is {rng.choice(_ADJECTIVES)} today."'
    elif kind == 3:
        count = rng.randint(2, 12)
        text = f"There were {count} {rng.choice(_NOUNS)}s {rng.choice(_PLACES)}, and {rng.choice(_NAMES)} {verb[2]} them all."
    elif kind == 4:
        text = f"Why does the {rng.choice(_ADJECTIVES)} {rng.choice(_NOUNS)} {verb[0]} {_noun_phrase(rng)}?"
    else:
        text = f"{rng.choice(_NAMES)} {verb[2]} {_noun_phrase(rng)}, then {rng.choice(_VERBS)[2]} {_noun_phrase(rng)} {rng.choice(_PLACES)}."
    return text


def generate(seed: int, n_bytes: int) -> str:
    """About ``n_bytes`` of ASCII prose (paragraphs of 3-7 sentences), the same for the same ``seed``."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n_bytes:
        paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7))) + "\n\n"
        out.append(paragraph)
        size += len(paragraph)
    return "".join(out)[:n_bytes]
