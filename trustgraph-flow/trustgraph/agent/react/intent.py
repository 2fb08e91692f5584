"""Whether a question asks for something to be done, and whether a tool does something.

The ranker reads what a question is about, not what it asks for: "Is coffee bad for your heart?"
is 0.55 near a tool that orders coffee, "Why are taxis yellow in New York?" 0.45 near one that
books a taxi, and the agent (the ranker's clear first tool, the 135M model's choice no evidence)
ordered a coffee called "bad" and booked a taxi to New York.  A tool that acts on the world is
called only for a question that asks for an action; a question that asks to know something is
asked back about it instead (``steps.judge_call``), where a tool that only reads answers it.

What a tool does is what it says (its ``read-only`` and ``destructive`` annotations, MCP's
hints); a tool that says neither is read by the verb its description starts with ("Order pizza
for delivery", "Book a taxi ride", "Turn the lights in a room on or off").  A question asks for
an action when one of its sentences is said as a request: an imperative ("Book a table for 4",
"Put on some jazz"; also a bare name, "Pizza for two"; "What's Jane's number? Text her that I'm
late"), a request's opening ("Can you", "Could I get", "I'd like", "I need", "Let's", "How
about", "Shall we", "Would you mind", "Don't let me forget"), either of them in a later clause
("I'm freezing, bump the heating up", "I swam for 45 minutes, can you log it?"; there only an
action's verb is an imperative), or "please" anywhere; but not a request to be told something
("Can you explain photosynthesis?", "Recommend a movie").  "Can dogs eat chocolate?", "How often
should I water succulents?", "In Paris, are taxis yellow?" and "I swam for 45 minutes" are not
requests; the last is asked back, not logged.
A question in another language than English is read as a request: its form is not read here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .wordlists import VERB_SYNONYMS

#: What a question may start with before what it says: "Please", "Hey", "OK so".
_LEAD = re.compile(r"^\W*(?:(?:please|hey|hi|hello|ok|okay|so|now|and|also|then)\b\W*)*", re.IGNORECASE)
#: How a request opens when it is not an imperative.
_REQUEST = re.compile(
    r"^(?:can|could|would|will|won't)\s+(?:you|u)\b"
    r"|^(?:can|could|may|might)\s+(?:i|we)\s+(?:get|have|order|book|grab|borrow)\b"
    r"|^(?:i|we)(?:'d|\s+would)\s+(?:like|love)\b|^(?:i|we)\s+(?:want|need|wanna)\b"
    r"|^(?:i|we)'ll\s+(?:have|take)\b|^(?:i|we)\s+(?:have\s+to|must)\b|^let'?s\b|^help\s+me\b"
    r"|^why\s+don'?t\s+(?:you|we)\b|^how\s+about\s+\w+ing\b|^shall\s+(?:i|we)\b|^(?:would|do)\s+you\s+mind\b"
    r"|^(?:don'?t|do\s+not|never)\s+(?!(?:you|we|i|they|he|she|it|mind)\b)[a-z]",
    re.IGNORECASE)
_PLEASE = re.compile(r"\bplease\b", re.IGNORECASE)
#: The first words of a question that asks to know something, or states it, or of a clause that
#: sets the scene for what follows ("In Paris, ...", "If it rains, ..."), or a courtesy ("Thanks,
#: that's all"): not a request.
_NOT_IMPERATIVE = frozenset("""what what's whats which who who's whom whose why when when's where where's how how's
is isn't are aren't was wasn't were weren't do does did don't doesn't didn't can can't could couldn't will won't
would wouldn't should shouldn't shall may might must have has had am i i'm i've i'd i'll we we're we've my our your
you you're it it's its there there's this that these those the a an any some if
in on at for from after before during since until till by with without about as like than unlike because though
although while whereas unless once yesterday today tonight tomorrow
thanks thank cheers bye goodbye great cool nice yes no yeah yep nope sure wow oh never""".split())
#: And as typed without their apostrophes ("wheres my ordr 30388?" had cancelled the order, pending approval).
_NOT_IMPERATIVE |= frozenset(w.replace("'", "") for w in _NOT_IMPERATIVE)
#: The verbs a tool's description starts with when the tool acts on the world (it books, sends,
#: sets, turns, records...), where it says nothing of its effects.
ACTION_VERBS = frozenset("""order book send transfer pay buy purchase delete remove cancel create add put set turn switch
start stop play call phone ring text email message post publish water feed log record schedule reserve submit
upload move rename write save lock unlock close launch run deploy install reboot restart shut dim""".split())
_FIRST_WORD = re.compile(r"[\w']+")


#: Where a sentence of a question ends: a request may follow one that asks ("What's Jane's
#: number? Text her that I'm late").
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
#: Where a clause of a sentence starts after a comma or a dash: a request may follow what the
#: speaker says of themselves ("I swam for 45 minutes, can you note that down?", "I'm freezing,
#: bump the heating up").
_CLAUSES = re.compile(r"\s*(?:[,:]|\s[-\u2013\u2014]{1,2})\s+")
#: The first words of a clause that asks to know something.
_ASKS = frozenset("""what what's whats which who who's whom whose why when when's where where's how how's is isn't
are aren't was were do does did can could will would should""".split())
_ASKS |= frozenset(w.replace("'", "") for w in _ASKS)
#: The verbs a later clause starts with when it is an imperative: an action's verb, or one that
#: asks for one.  Only these: a clause after a comma may start with any noun ("In Paris, taxis
#: are yellow"), where a sentence's first word that asks nothing is rare.
_CLAUSE_VERBS = ACTION_VERBS | frozenset("""bump raise lower increase decrease crank get give make remind note jot
wake dial grab bring fetch keep tell show find check open help""".split()) | frozenset(VERB_SYNONYMS)
#: The verbs of a request to tell something, not to do it: "Can you explain photosynthesis?" had
#: watered a plant called "photosynthesis".
_TELLING = frozenset("""explain describe define teach recommend suggest clarify summarise summarize compare
list name know learn understand""".split())   # "I need to know when my books are due" asks to be told
#: "Tell me ..." is one too; "Tell Bob that lunch is ready" asks for a message to be sent.
_TELL_ME = re.compile(r"^\W*tell\s+(?:me|us)\b", re.IGNORECASE)
#: At most this many sentences, of this many characters, are read: a request is said early.
MAX_SENTENCES = 20
MAX_READ_CHARS = 10_000


def asks_for_action(question: str) -> bool:
    """Whether ``question`` is said as a request (an imperative, a request's opening, "please"),
    in any of its first sentences."""
    text = question.strip()[:MAX_READ_CHARS]
    return any(_requests(sentence) for sentence in _SENTENCES.split(text)[:MAX_SENTENCES])


#: How a question opens when it asks for a cause ("Why not book ..." suggests), or for how something
#: works, or how two things differ: an explanation.
_WHY = re.compile(r"^(?:why(?!\s+not\b)|how\s+come\b|how\s+(?:does|do|did)\b(?=.*\bwork(?:s|ed)?\b)"
                  r"|what(?:'s|’s|s|\s+is|\s+are)\s+the\s+differences?\s+between)\b", re.IGNORECASE)
#: The words by which a question speaks of someone: the asker or the one asked ("Why is my parcel
#: late?" asks of the asker's parcel, which a tool may know).
_PERSONAL = frozenset("""i me my mine myself we us our ours ourselves you your yours yourself i'm i've i'd i'll
we're we've we'd we'll you're you've you'd you'll im ive""".split())


def asks_how_or_why_in_general(question: str) -> bool:
    """Whether ``question`` asks for the cause of something in general, or how it works, or how two
    things differ: it opens with "why", "how come", "how does ... work" or "what's the difference
    between", asks for no action (:func:`asks_for_action`), and speaks of no one (no "I", "my",
    "you"), of nothing named (no capitalised word after a sentence's first) and of no number.
    How the world is, which the model answers from what it knows, where a tool reads a state of
    things: "Why do cats purr?" had asked a pet's vaccinations for the pet `cats`, "Why is petrol
    more expensive than diesel in some countries?" read the fuel prices, and "how does plastic
    recycling actually work" asked which bin takes `plastic`."""
    text = question.strip()[:MAX_READ_CHARS]
    sentences = [_LEAD.sub("", s, count=1) for s in _SENTENCES.split(text)[:MAX_SENTENCES] if s.strip()]
    if not sentences or not _WHY.match(sentences[0]) or any(ch.isdigit() for ch in text) or asks_for_action(text):
        return False
    for sentence in sentences:
        words = _FIRST_WORD.findall(sentence)
        if any(w.lower() in _PERSONAL for w in words) or any(w[:1].isupper() for w in words[1:]):
            return False
    return True


def _requests(sentence: str) -> bool:
    if _PLEASE.search(sentence):
        # "please" asks for something, unless for being told something ("Please explain how vaccines work").
        opening = _REQUEST.search(_LEAD.sub("", sentence, count=1))
        return not _tells(_LEAD.sub("", sentence, count=1)[opening.end():] if opening else sentence)
    # What the sentence starts with before what it says ("Hey, ", "OK so, ") is no clause of its own.
    first_clause, *clauses = _CLAUSES.split(_LEAD.sub("", sentence, count=1))
    clauses = clauses[:MAX_SENTENCES]
    # A first clause that names something is a request ("Pizza for two") unless a later clause
    # asks about it ("Coffee, tea or juice: which has the most caffeine?").
    asked = any(_first_word(clause) in _ASKS for clause in clauses)
    if _opens_request(first_clause, _CLAUSE_VERBS.__contains__ if asked else lambda word: word not in _NOT_IMPERATIVE):
        return True
    return any(_opens_request(clause, _CLAUSE_VERBS.__contains__) for clause in clauses)


def _first_word(text: str) -> str:
    first = _FIRST_WORD.match(_LEAD.sub("", text, count=1))
    return first.group(0).lower() if first is not None else ""


def _tells(text: str) -> bool:
    """Whether ``text`` (what follows a request's opening, or an imperative) asks to be told something."""
    first = _first_word(re.sub(r"^\W*to\s+", "", text, count=1, flags=re.IGNORECASE))   # "I need to know ..."
    return first in _TELLING or bool(_TELL_ME.match(_LEAD.sub("", text, count=1)))


def _opens_request(clause: str, imperative: Callable[[str], bool]) -> bool:
    """Whether ``clause`` opens as a request does, or as an imperative: its first word (lower
    case) is one ``imperative`` accepts; either way not a request to tell something (:data:`_TELLING`)."""
    text = _LEAD.sub("", clause, count=1)
    if (opening := _REQUEST.search(text)) is not None:
        return not _tells(text[opening.end():])
    first = _first_word(clause)
    return bool(first) and not _tells(text) and imperative(first)


#: Where one request of a question may end and the next start: "and" (after a comma or not,
#: "and then", "and also"), "then", "also", "plus", a semicolon, or a sentence's end followed by
#: one of those words ("...? Also, what ..."); two sentences alone are one request said twice as
#: often as two ("Is 'candid' a compliment? What does it signify?").
_NEXT_REQUEST = re.compile(r",?\s+(?:and|plus)\s+(?:then\s+|also\s+)?|,\s+(?:then|also)\s+|\s*;\s*"
                           r"|(?<=[.!?])\s+(?:and|also|plus|then)\b,?\s*", re.IGNORECASE)
#: A quoted text, whose "and" joins no requests ("Translate 'salt and pepper'"): a quote mark after a
#: space (or at the start, or a colon) to one before a space or punctuation (not "Liverpool's").
_QUOTE = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=:))([\"'“‘])(?:(?!\1).)+?[\"'”’](?=[\s?.!,;:)]|$)")
#: The verbs a next request opens with: an imperative's (:data:`_CLAUSE_VERBS`), one asking to be
#: told something, and those of asking a tool to work something out ("and then pick a number").
_NEXT_VERBS = _CLAUSE_VERBS | _TELLING | frozenset("""pick choose roll flip generate convert calculate compute work
translate spell count look search track estimate""".split())
#: The fewest words a request has: "and book it" leaves no request before it in "Find and book".
MIN_REQUEST_WORDS = 3
#: The words of a go-ahead, which is no request of its own ("ok go ahead and grab P-14 ...", "yes
#: please, go on and book it"): what follows is the request.
_GO_AHEAD = frozenset("ok okay yes yeah yep sure right alright fine please pls so then now just well go ahead on "
                      "carry".split())
#: At most this many requests are read of a question.
MAX_REQUESTS = 4


def requests_of(question: str) -> list[str]:
    """The requests ``question`` makes, in order: one, or several joined by "and", a semicolon or a
    sentence's end, each of the next ones opening as a question (:data:`_ASKS`: "What day is 31
    October and how many days away is it?") or an imperative (:data:`_NEXT_VERBS`: "Find me a
    hotel in Rome and book a table at Roscioli"; after a sentence's end, of any verb: "...? Also,
    assign ticket 3310 to Marco Rossi"); "and" before anything else joins words of one
    request ("Add milk and eggs to my list").  What a question says before its request is no
    request of its own ("I have 75 dollars. How many Swiss francs is that?"), and a quoted text
    is never split."""
    text = question.strip()[:MAX_READ_CHARS]
    masked = _QUOTE.sub(lambda m: "x" * len(m.group(0)), text)
    parts: list[str] = []
    start = 0
    for m in _NEXT_REQUEST.finditer(masked):
        if len(parts) >= MAX_REQUESTS - 1:
            break
        before = masked[start:m.start()]
        word = _first_word(masked[m.end():])
        # After a sentence's end ("...? Also, assign ticket 3310 ..."), an imperative of any verb.
        sentence = m.start() > 0 and masked[m.start() - 1] in ".!?" and word not in _NOT_IMPERATIVE
        if (word in _ASKS or word in _NEXT_VERBS or sentence) and len(_FIRST_WORD.findall(before)) >= MIN_REQUEST_WORDS \
                and not {w.lower() for w in _FIRST_WORD.findall(before)} <= _GO_AHEAD \
                and _is_request(before, first=not parts):
            parts.append(text[start:m.start()].strip())
            start = m.end()
    parts.append(text[start:].strip())
    # A next request without its joining word ("also, what day ..." is "what day ...").
    return [p if i == 0 else _LEAD.sub("", p, count=1) for i, p in enumerate(parts) if p]


def _is_request(part: str, first: bool = False) -> bool:
    """Whether ``part`` of a question asks something or asks for something: a question, a
    request's opening, or an imperative (the ``first`` part's by any verb, "Scale my pancake
    recipe ...", as :func:`asks_for_action` reads it); not what the asker says of their situation."""
    stripped = _LEAD.sub("", part, count=1)
    word = _first_word(stripped)
    if part.rstrip().endswith("?") or word in _ASKS or word in _NEXT_VERBS or _REQUEST.search(stripped) is not None:
        return True
    return first and _opens_request(part, lambda w: w not in _NOT_IMPERATIVE)


def acts(tool: Any) -> bool:
    """Whether calling ``tool`` does something in the world: it says so (``read-only`` false, or
    ``destructive`` true), or, saying neither, its description starts with an action's verb."""
    annotations = getattr(tool, "annotations", None)
    read_only = getattr(annotations, "read_only", None)
    if read_only is False or getattr(annotations, "destructive", None) is True:
        return True
    if read_only is True:
        return False
    return _description_verb(tool) in ACTION_VERBS


def _description_verb(tool: Any) -> str:
    """The first word of ``tool``'s description (lower case; empty when it has none): the verb of
    what it does, by the convention the docs ask of tool authors."""
    first = _FIRST_WORD.match(str(getattr(tool, "description", "") or "").strip())
    return first.group(0).lower() if first is not None else ""


#: The words a request is said with before its verb: "please report it", "can you just check".
_BEFORE_VERB = frozenset("please just kindly quickly also then now me us".split())


def requested_verbs(question: str) -> set[str]:
    """The words (lower case) a request of ``question`` asks to be done with: an imperative's first
    word, the first after a request's opening ("Can you report ...") or after "please" ("...,
    please report it"); none for a question that asks to know something.  What a tool does is its
    description's first word (:func:`said_verb`): a request that says it tells apart two tools the
    ranker cannot ("Play episode 212 of Radiolab": playing a podcast 0.027 nearer than listing its
    episodes)."""
    text = question.strip()[:MAX_READ_CHARS]
    verbs: set[str] = set()
    for sentence in _SENTENCES.split(text)[:MAX_SENTENCES]:
        if not _requests(sentence):
            continue
        for i, clause in enumerate(_CLAUSES.split(_LEAD.sub("", sentence, count=1))[:MAX_SENTENCES]):
            # (Its verb after what a clause starts with: "so scrap repair RR-30990".)
            stripped = _LEAD.sub("", clause, count=1)
            pleased = _PLEASE.search(clause) is not None
            words = [w.lower() for w in _FIRST_WORD.findall(stripped)]
            if (opening := _REQUEST.search(stripped)) is not None:
                words = [w.lower() for w in _FIRST_WORD.findall(stripped[opening.end():])]
            elif words and words[0] in _NOT_IMPERATIVE and "please" in words:
                words = words[words.index("please") + 1:]
            elif i > 0 and words and words[0] not in _CLAUSE_VERBS and not pleased:
                continue   # a later clause says a request with a verb it knows, or "please"
            while words and words[0] in _BEFORE_VERB:
                words = words[1:]
            if words and words[0] not in _NOT_IMPERATIVE:
                verbs.add(words[0])
    return verbs


def said_verb(tool: Any, verbs: set[str]) -> bool:
    """Whether ``tool``'s description starts with one of ``verbs`` (a request's, :func:`requested_verbs`)
    or a verb one of them may mean (:data:`~.wordlists.VERB_SYNONYMS`: "scrap" a repair is to cancel
    it), as said or in its third person ("Plays", "Watches")."""
    word = _description_verb(tool)
    meant = set(verbs).union(*(VERB_SYNONYMS.get(v, ()) for v in verbs))
    return bool(word) and any(word in (v, v + "s", v + "es") for v in meant)
