"""The joke service's built-in joke collection and the logic that picks one.

Kept apart from the service so it can be tested without a broker, and so the
service itself stays a thin example of :class:`DynamicToolService`.

The collection is plain data, ``{style: {topic: [joke, ...]}}``, with every
style covering every topic.  Topics the LLM asks for are matched loosely
(case, plurals, a small synonym table), because the LLM fills in the
``topic`` argument with whatever wording the user used; anything unmatched
gets a joke from the ``general`` topic rather than an error, and the service
says so (:func:`known_topic`): a joke about something else is a fair answer
only when it does not pass for one about what was asked.  A style, on the other hand, comes from the tool's configuration, so an
unknown one is a configuration mistake and is reported as such.
"""

from __future__ import annotations

import random
import re

__all__ = [
    "DEFAULT_STYLE",
    "FALLBACK_TOPIC",
    "JOKES",
    "STYLES",
    "TOPICS",
    "match_topic",
    "normalise_style",
    "pick_joke",
]

#: The styles the service understands, in the order they are listed to users.
STYLES: tuple[str, ...] = ("pun", "dad-joke", "one-liner")

#: Style used when the tool's config does not set one.
DEFAULT_STYLE = "pun"

#: Topic used when the requested one matches nothing.
FALLBACK_TOPIC = "general"

JOKES: dict[str, dict[str, list[str]]] = {
    "pun": {
        "programming": [
            "Git jokes are a branch of humour I'm fully committed to.",
            "The Python course was a real squeeze, but I wrapped it up in the end.",
            "My bakery's website kept crashing, so I had to clear the cookies.",
        ],
        "cats": [
            "My cat took up painting; her best work is a purr-trait of herself.",
            "The cat ran for mayor and won by a whisker.",
            "My kitten chaired the family meeting with real claw-thority.",
        ],
        "dogs": [
            "The dog went to night school to become a bark-ister.",
            "My dog became a botanist; he's really into bark.",
            "The puppy opened a tailor's shop that only sells ruff collars.",
        ],
        "science": [
            "The biology department's party was a huge success; everyone cell-ebrated.",
            "The chemist opened a café that only served noble gases; business was inert.",
            "Electricians never fall behind on the news; they always stay current.",
        ],
        "math": [
            "Our geometry teacher is so positive she finds the acute angle on everything.",
            "Calculus students make great surfers; they know how to ride a tangent.",
            "Fractions are the best dinner guests; they always know how to split the bill.",
        ],
        "music": [
            "The pianist locked himself out, so he tried all the keys.",
            "The drummer opened a bakery, and every order comes with a roll.",
            "The violinist is so well behaved she never gets into treble.",
        ],
        "food": [
            "The cheesemaker retired after a long and grate career.",
            "The bread-tasting club is a very well-bred bunch.",
            "The pasta chef stays calm under pressure; he never loses his noodle.",
        ],
        "space": [
            "The astronaut's farewell party was a blast from start to finish.",
            "Saturn got engaged and now it won't stop showing off its rings.",
            "The moon is broke most of the month, but it always ends up full.",
        ],
        "coffee": [
            "My coffee order is so complicated the barista calls it a brew-haha.",
            "The barista retired with no regrets; she'd bean there and done that.",
            "My decaf joke fell flat; nobody felt the buzz.",
        ],
        "work": [
            "The stapler got a promotion for holding the whole team together.",
            "The accountant found the new job taxing, but it all added up in the end.",
            "Our spreadsheet expert doesn't just work hard; she excels.",
        ],
        "general": [
            "The escalator retired after a career full of ups and downs.",
            "The lighthouse got promoted for being such a shining example.",
            "Clouds make great friends; they're there whenever you're under the weather.",
        ],
    },
    "dad-joke": {
        "programming": [
            "Why did the programmer bring a ladder to work? "
            "The project needed a higher-level language.",
            "How does a programmer fix a leaky roof? "
            "With a patch, and a promise to refactor it later.",
            "Why was the function so relaxed? It had no side effects.",
        ],
        "cats": [
            "Why did the cat join the choir? She wanted to work on her mew-sical range.",
            "Why did the cat apply to work at the courthouse? "
            "She heard they needed someone to paws the proceedings.",
            "Why did the cat sit by the computer all day? "
            "She was waiting for the mouse to make a move.",
        ],
        "dogs": [
            "Why did the dog get a job at the bank? He was great at fetching interest.",
            "Why don't dogs make good DJs? Every time the beat drops, they fetch it.",
            "What do you call a dog who runs a bakery? A pastry pointer.",
        ],
        "science": [
            "Why did the chemist keep her notes in the fridge? "
            "She wanted to preserve her solutions.",
            "What did the proton say to the electron that kept changing its mind? "
            "Stay positive!",
            "Why are geologists never bored? Their work rocks.",
        ],
        "math": [
            "Why did the fraction join a gym? It wanted to work on its whole self.",
            "Why are parallel lines such loyal friends? "
            "They always stick together, even though they never meet up.",
            "Why did the student bring a ladder to maths class? "
            "She heard the grades were on a curve.",
        ],
        "music": [
            "Why did the trumpet player get promoted? She blew everyone away.",
            "Why did the choir rehearse on the staircase? "
            "The conductor said it was time to work on their scales.",
            "Why was the music teacher locked out of the classroom? "
            "She'd left her keys in the piano.",
        ],
        "food": [
            "Why did the potato become a detective? It had an eye for detail.",
            "Why did the baker win an award? He was the family's bread-winner.",
            "Why are pancakes such good friends? They always stack up for you.",
        ],
        "space": [
            "Why did the astronaut break up with the moon? It kept going through phases.",
            "Why did the rocket do so well at school? It always aimed high.",
            "Why are astronauts such good dancers? They've mastered the moonwalk.",
        ],
        "coffee": [
            "Why did the coffee bean go to school? It wanted to be well-grounded.",
            "Why did the espresso keep checking its watch? It was pressed for time.",
            "Why did the barista stop talking to the kettle? "
            "It kept getting steamed over nothing.",
        ],
        "work": [
            "Why don't printers ever get promoted? They jam under pressure.",
            "Why did the manager bring a pencil to the meeting? "
            "To draw some conclusions.",
            "Why did the spreadsheet go to therapy? It had too many unresolved cells.",
        ],
        "general": [
            "Why did the clock go to the doctor? It was feeling a little run down.",
            "Why did the umbrella get promoted? It was great at covering for everyone.",
            "Why don't mountains ever get cold? They wear snowcaps.",
        ],
    },
    "one-liner": {
        "programming": [
            "My code has no bugs; it just has surprise features nobody asked for.",
            "I fixed the bug that haunted me for weeks, and three new ones threw it a leaving party.",
            "The documentation says it just works, which is also what I say when I don't know why.",
        ],
        "cats": [
            "My cat has two moods: asleep, and planning to knock something off the table.",
            "A cat will ignore you all day, then demand your full attention at 3 a.m.",
            "I bought my cat a luxury bed and she immediately moved into the box it came in.",
        ],
        "dogs": [
            "My dog greets me like I've been away for ten years every time I take out the bins.",
            "My dog's idea of hiding something is burying it in the middle of the lawn.",
            "A dog's bark is worse than its bite, but its snoring is worse than both.",
        ],
        "science": [
            "I asked a physicist for directions and got a lecture on vectors.",
            "In a lab, the scariest thing anyone can say is \"huh, that's interesting\".",
            "Chemistry taught me that everything is calm until someone adds a catalyst.",
        ],
        "math": [
            "I tried to split the bill fairly, and the remainder started an argument.",
            "My budget and I have agreed that my savings are an imaginary number.",
            "Infinity is just a number that never learned when to stop talking.",
        ],
        "music": [
            "I play the triangle in a band: one note per song and an enormous amount of pressure.",
            "My neighbour practises the bagpipes every evening, and my earplugs have asked for overtime.",
            "Every band has one song they're tired of playing, and it's always the one everyone came for.",
        ],
        "food": [
            "My cooking is so reliable that the smoke alarm now cheers me on.",
            "I tried to eat healthily, but the salad kept looking at me like it knew.",
            "The best diet is keeping the biscuits on a shelf too high to reach, until you buy a ladder.",
        ],
        "space": [
            "Space is big, empty and cold, much like my fridge before payday.",
            "Astronauts train for years to float around, which I manage every Sunday for free.",
            "The universe is expanding, which explains why my keys are always further away than I left them.",
        ],
        "coffee": [
            "I don't have a coffee problem; I have a not-enough-coffee problem.",
            "My morning routine is one coffee, then a second coffee to check on the first.",
            "Decaf is just coffee that gave up on its dreams.",
        ],
        "work": [
            "This meeting could have been an email, and that email could have been silence.",
            "I'm not procrastinating; I'm giving the deadline time to come to me.",
            "My job has many perks, chief among them the free coffee and the door at five o'clock.",
        ],
        "general": [
            "I told myself to stop talking to myself, and we both agreed it was a good idea.",
            "My houseplants and I have an understanding: I forget them, and they forgive me.",
            "My alarm clock and I are no longer on speaking terms; it keeps bringing up mornings.",
        ],
    },
}

#: Topics with their own jokes (every style covers all of them).
TOPICS: tuple[str, ...] = tuple(JOKES[DEFAULT_STYLE])

# Words (and a few phrases) that mean one of the topics.  Plurals are handled
# by match_topic, so only singular forms need listing.
_SYNONYMS: dict[str, str] = {
    # programming
    "program": "programming", "programmer": "programming", "code": "programming",
    "coding": "programming", "coder": "programming", "python": "programming",
    "software": "programming", "developer": "programming", "development": "programming",
    "computer": "programming", "computing": "programming", "bug": "programming",
    "debugging": "programming", "javascript": "programming", "java": "programming",
    "rust": "programming", "git": "programming", "algorithm": "programming",
    "tech": "programming", "technology": "programming", "hacker": "programming",
    # cats
    "cat": "cats", "kitten": "cats", "kitty": "cats", "feline": "cats", "kitties": "cats",
    # dogs
    "dog": "dogs", "puppy": "dogs", "puppies": "dogs", "pup": "dogs", "canine": "dogs",
    "hound": "dogs", "doggo": "dogs",
    # science
    "physics": "science", "physicist": "science", "chemistry": "science",
    "chemist": "science", "chemical": "science", "biology": "science",
    "biologist": "science", "scientist": "science", "lab": "science",
    "laboratory": "science", "atom": "science", "experiment": "science",
    "geology": "science", "electricity": "science",
    # math
    "maths": "math", "mathematics": "math", "mathematician": "math",
    "algebra": "math", "geometry": "math", "calculus": "math", "number": "math",
    "arithmetic": "math", "statistics": "math", "fraction": "math",
    # music
    "song": "music", "musician": "music", "guitar": "music", "piano": "music",
    "band": "music", "drum": "music", "jazz": "music", "singing": "music",
    "singer": "music", "violin": "music", "orchestra": "music", "concert": "music",
    # food
    "cooking": "food", "cook": "food", "pizza": "food", "cheese": "food",
    "bread": "food", "baking": "food", "chef": "food", "kitchen": "food",
    "fruit": "food", "vegetable": "food", "dinner": "food", "lunch": "food",
    "breakfast": "food", "eating": "food", "pasta": "food", "restaurant": "food",
    # space
    "astronomy": "space", "planet": "space", "star": "space", "moon": "space",
    "astronaut": "space", "rocket": "space", "galaxy": "space", "universe": "space",
    "mars": "space", "nasa": "space", "cosmos": "space", "outer space": "space",
    # coffee
    "espresso": "coffee", "latte": "coffee", "cappuccino": "coffee",
    "caffeine": "coffee", "barista": "coffee", "mocha": "coffee", "cafe": "coffee",
    "café": "coffee",
    # work
    "office": "work", "job": "work", "boss": "work", "meeting": "work",
    "career": "work", "coworker": "work", "colleague": "work", "deadline": "work",
    "monday": "work", "commute": "work", "employee": "work", "manager": "work",
    "workplace": "work",
}

_STYLE_ALIASES: dict[str, str] = {
    "puns": "pun",
    "dad": "dad-joke",
    "dadjoke": "dad-joke",
    "dad-jokes": "dad-joke",
    "oneliner": "one-liner",
    "one-liners": "one-liner",
    "one-line": "one-liner",
}

_WORD = re.compile(r"[^\W_]+")


def _lookup(term: str) -> str | None:
    if term in JOKES[DEFAULT_STYLE]:
        return term
    if term in _SYNONYMS:
        return _SYNONYMS[term]
    return None


def match_topic(topic: str | None) -> str:
    """Map free text from the LLM to one of :data:`TOPICS`.

    Tries the whole text, then each word in order (with a trailing "s" or "es"
    removed if that helps), and falls back to ``general``.  ``"my cat's
    hairballs"`` and ``"Python programming"`` both find a topic this way.
    """
    text = (topic or "").strip().lower()
    if not text:
        return FALLBACK_TOPIC
    found = _lookup(text)
    if found:
        return found
    for word in _WORD.findall(text):
        for candidate in (word, word[:-1] if word.endswith("s") else "",
                          word[:-2] if word.endswith("es") else ""):
            if candidate:
                found = _lookup(candidate)
                if found:
                    return found
    return FALLBACK_TOPIC


#: Topics that ask for no topic in particular: a general joke answers them as asked.
ANY_TOPIC = frozenset({"", "general", "any", "anything", "random", "whatever", "something", "joke", "jokes"})


def known_topic(topic: str | None) -> bool:
    """Whether ``topic`` is one of ours (in any wording :func:`match_topic` reads) or asks for
    none in particular; else the service says it has no joke on it rather than pass a general
    one off as one."""
    text = (topic or "").strip().lower()
    return text in ANY_TOPIC or match_topic(text) != FALLBACK_TOPIC


def normalise_style(style: str | None) -> str:
    """Return the canonical name of ``style``; empty means :data:`DEFAULT_STYLE`.

    Accepts case and separator variants ("Dad Joke", "one_liner") since the
    style is typed by whoever writes the tool descriptor.  Raises
    :class:`ValueError` naming the valid styles for anything else, so the
    service can send that back as an error reply.
    """
    if style is None:
        return DEFAULT_STYLE
    if not isinstance(style, str):
        raise ValueError(
            f"joke style must be a string, got {type(style).__name__}; "
            f"valid styles: {', '.join(STYLES)}"
        )
    key = re.sub(r"[\s_]+", "-", style.strip().lower())
    if not key:
        return DEFAULT_STYLE
    key = _STYLE_ALIASES.get(key, key)
    if key not in STYLES:
        raise ValueError(f"unknown joke style {style!r}; valid styles: {', '.join(STYLES)}")
    return key


def pick_joke(
    topic: str, style: str, rng: random.Random | None = None
) -> tuple[str, str]:
    """Pick a joke about ``topic`` in ``style``; return ``(style_used, joke)``.

    ``style_used`` is the canonical style name (the service may mention it).
    Pass a seeded ``rng`` for repeatable picks; by default the choice is random
    so that asking twice gives a different joke.
    """
    style_used = normalise_style(style)
    by_topic = JOKES[style_used]
    choices = by_topic.get(match_topic(topic)) or by_topic[FALLBACK_TOPIC]
    chooser = rng if rng is not None else random
    return style_used, chooser.choice(choices)
