"""Closed word lists a request's values are read with: languages, currencies, the calendar.

Kept apart from the readers that use them (``grounding``: whether a call's values were said;
``coverage``: which tool's arguments take more of a question) so that both read a word the same
way: "Portuguese" is a language, never a place, and "euros" a currency, for both.
"""

from __future__ import annotations

#: Languages by their English names (a request says "in Portuguese", "into spanish").
LANGUAGES = frozenset("""english spanish french german italian portuguese dutch russian chinese mandarin
cantonese japanese korean arabic hindi bengali urdu turkish greek polish swedish norwegian danish finnish
czech hungarian romanian ukrainian hebrew thai vietnamese indonesian malay swahili persian farsi latin
tagalog filipino irish welsh catalan basque croatian serbian bulgarian slovak slovenian estonian latvian
lithuanian icelandic tamil telugu punjabi gujarati marathi esperanto afrikaans zulu yoruba amharic""".split())

#: The ISO code a currency's name says, alone ("euros") or after a country's adjective ("Canadian
#: dollars"); a name whose adjective is not in :data:`COUNTRY_CODES` says no code.
CURRENCY_NAMES = {**dict.fromkeys("dollar dollars bucks greenback greenbacks".split(), "USD"),
                  **dict.fromkeys("euro euros".split(), "EUR"),
                  **dict.fromkeys("pound pounds sterling quid".split(), "GBP"),
                  "yen": "JPY", "yuan": "CNY", "renminbi": "CNY", **dict.fromkeys("rupee rupees".split(), "INR"),
                  **dict.fromkeys("franc francs".split(), "CHF"),
                  **dict.fromkeys("rouble roubles ruble rubles".split(), "RUB"), "lira": "TRY",
                  **dict.fromkeys("shekel shekels".split(), "ILS"), "baht": "THB", "naira": "NGN", "zloty": "PLN",
                  "forint": "HUF", "koruna": "CZK", "ringgit": "MYR", "rupiah": "IDR",
                  **dict.fromkeys("dirham dirhams".split(), "AED"), **dict.fromkeys("riyal riyals".split(), "SAR"),
                  **dict.fromkeys("peso pesos".split(), "MXN"), **dict.fromkeys("krona kronor".split(), "SEK"),
                  **dict.fromkeys("krone kroner".split(), "NOK")}
#: Currencies by name (not "won", "real", "rand", "dong": words of other meanings).
CURRENCIES = frozenset(CURRENCY_NAMES)
#: Currencies by ISO 4217 code, as a request writes them (upper case).
CURRENCY_CODES = frozenset("""USD EUR GBP JPY CHF CAD AUD NZD CNY HKD SGD INR KRW RUB TRY ILS BRL MXN SEK NOK
DKK PLN CZK HUF ZAR THB VND NGN PHP IDR MYR AED SAR""".split())
#: A currency name's code after a country's adjective ("Canadian dollars"); after one not here, none.
COUNTRY_CODES = {"us": "USD", "american": "USD", "canadian": "CAD", "australian": "AUD", "singapore": "SGD",
                 "hong": "HKD", "new": "NZD", "british": "GBP", "swiss": "CHF", "mexican": "MXN",
                 "danish": "DKK", "norwegian": "NOK", "swedish": "SEK", "japanese": "JPY", "indian": "INR",
                 "chinese": "CNY", "european": "EUR"}

#: Months and weekdays, which are capitalised after "in" and "on" and are no places.
CALENDAR = frozenset("""january february march april may june july august september october november
december monday tuesday wednesday thursday friday saturday sunday""".split())
#: Words said after "in" that are a manner, a measure or a phrase's, no place ("in characters",
#: "in order", "in total").
IN_PHRASES = frozenset("""characters letters words syllables digits order total general fact advance time detail
short particular public private person mind bed love trouble charge stock use turn return theory practice""".split())
#: Words capitalised after "in", "to" or "on" that name no place ("in Portuguese", "in Euros",
#: "on Friday"), or said after "in" in lower case ("in characters"): read so by grounding and
#: coverage alike.
NOT_PLACES = LANGUAGES | CURRENCIES | CALENDAR | IN_PHRASES


#: Verbs said of oneself that are no value of any tool ("I took 200 mg", "it moved", "I forgot my
#: password"), in their common forms: what someone did, not what a tool is asked about.  Not the
#: verbs of an activity a tool may log or count ("I cycled", "I ran", "I swam").
LIGHT_VERBS = frozenset("""take takes took taken taking go goes went gone going make makes made making say says said
think thinks thought know knows knew move moves moved moving feel feels felt keep keeps kept try tries tried
use uses used using see sees saw seen hear heard find finds found give gives gave given put puts left come comes
came buy buys bought pay pays paid send sends sent tell tells told ask asks asked forget forgot forgotten
lose lost miss missed start started stop stopped finish finished wonder wondered guess guessed hope hoped
mean meant suppose believe reckon love like hate prefer""".split())


#: What a request's verb may mean among the verbs tools' descriptions start with ("Cancel a
#: repair visit", "Remove an item from a list"): everyday words for the same act.  "so scrap repair
#: RR-30990" had shown the request's status, cancelling being no word the question said.
VERB_SYNONYMS = {
    **dict.fromkeys("scrap ditch axe nix scrub".split(), frozenset({"cancel"})),
    **dict.fromkeys("scratch strike erase".split(), frozenset({"remove", "delete"})),
    "delete": frozenset({"remove"}), "remove": frozenset({"delete"}),
    "ping": frozenset({"message", "send", "text"}), "shoot": frozenset({"send"}),
    **dict.fromkeys("pop stick chuck".split(), frozenset({"add"})),
    "grab": frozenset({"book", "reserve"}), "reserve": frozenset({"book"}), "book": frozenset({"reserve"}),
    "switch": frozenset({"turn"}), "turn": frozenset({"switch"}),
    **dict.fromkeys("kill halt".split(), frozenset({"stop"})), "begin": frozenset({"start"}),
    "drop": frozenset({"cancel", "remove", "delete"}), "finish": frozenset({"end", "stop", "complete"}),
    "end": frozenset({"stop", "finish"}),
    # Doing it again is doing it: "please reorder my statins" orders a refill.
    "reorder": frozenset({"order"}), "rebook": frozenset({"book"}), "resend": frozenset({"send"}),
    "restart": frozenset({"start"}), "resubmit": frozenset({"submit"}),
}


#: Chat shorthand and the words it stands for ("any boxing tmrw?", "bikes at hyde park corner rn",
#: "can u"): read as those words by the ranker, the argument check and the model.  Only forms that
#: are no word of their own in a request ("atm" is a cash machine too, "ty" a name: not here).
SHORTHAND = {
    "rn": "right now", **dict.fromkeys("tmrw tmrrw tmr tmro tmrow tmoro 2moro 2morrow 2mrw tomoz".split(), "tomorrow"),
    **dict.fromkeys("tonite 2nite 2night".split(), "tonight"), "2day": "today", "u": "you", "ur": "your",
    "r": "are", **dict.fromkeys("pls plz plse pleez".split(), "please"), **dict.fromkeys("thx thnx thanx".split(), "thanks"),
    "b4": "before", "ppl": "people", "abt": "about", "msg": "message", "appt": "appointment",
    "gimme": "give me", "lemme": "let me", "gonna": "going to",
}
