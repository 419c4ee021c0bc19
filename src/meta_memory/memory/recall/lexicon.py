"""Hand-written word lists of the recall analyzer: stopwords, irregular forms and paraphrase concepts.

The 45 upstream stopwords (REFERENCE 3.4) are kept verbatim and extended with other English function words and
conversational filler, because recall now also indexes two-letter tokens. Irregular forms map past tenses and
plurals that a suffix stemmer cannot reach (went→go, children→child). Concept groups are small, general
synonym sets for everyday conversational paraphrase (relax/unwind/destress, attend/go/visit, kid/child/son);
each word of a group additionally indexes a concept token so a paraphrase matches without expanding the query
into many postings reads. The lists are deliberately generic English, written before any development data
existed; they are not tuned to one data set, and changing them requires re-indexing (bump ``ANALYZER_VERSION``
in ``analyzer.py``).
"""

from __future__ import annotations

__all__ = [
    "CONCEPT_GROUPS",
    "IRREGULAR_FORMS",
    "QUERY_STOPWORDS",
    "STOPWORDS",
    "TIME_WORDS",
    "UPSTREAM_STOPWORDS",
]


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


UPSTREAM_STOPWORDS: frozenset[str] = _wordset(
    """about after again also and are ask but can could did does for from had has have how into just may not
    now only our out put should that the their then there this was what when where which who why with would
    you your"""
)

STOPWORDS: frozenset[str] = UPSTREAM_STOPWORDS | _wordset(
    """a am an as at be by do if in is it me my no of on or so to up us we i he oh ok im ll ve re don didn
    doesn isn wasn aren weren won wouldn couldn shouldn haven hasn hadn ain
    all any been being both each few more most other some such than too very own same off over under further
    once here its itself she her hers herself him his himself they them theirs themselves those these myself
    yours yourself ours ourselves were will shall might must whom whose while during before because until
    against between through above below down yes yeah yep nope wow hey hi hello hmm um uh lol haha omg
    really actually just like pretty quite maybe something anything everything nothing thing things stuff lot
    lots much many get got gets getting also even still though although anyway sure okay thats whats
    one ones"""
)

# Words that only carry the *form* of a question ("what kind of", "how many times"); dropping them from
# queries keeps them from matching chatty turns that happen to use them.
QUERY_STOPWORDS: frozenset[str] = _wordset(
    """kind kinds type types sort sorts likely probably mention mentioned mentions say said says tell told
    name names ever usually currently recently typically often times specific particular describe"""
)

IRREGULAR_FORMS: dict[str, str] = {
    "went": "go", "gone": "go", "goes": "go", "ran": "run", "bought": "buy", "made": "make", "took": "take",
    "taken": "take", "saw": "see", "seen": "see", "gave": "give", "given": "give", "found": "find",
    "felt": "feel", "kept": "keep", "left": "leave", "met": "meet", "paid": "pay", "sold": "sell",
    "sent": "send", "spent": "spend", "taught": "teach", "thought": "think", "told": "tell", "wrote": "write",
    "written": "write", "began": "begin", "begun": "begin", "brought": "bring", "built": "build",
    "caught": "catch", "chose": "choose", "chosen": "choose", "drew": "draw", "drawn": "draw",
    "drove": "drive", "driven": "drive", "ate": "eat", "eaten": "eat", "fell": "fall", "fallen": "fall",
    "flew": "fly", "flown": "fly", "forgot": "forget", "forgotten": "forget", "grew": "grow", "grown": "grow",
    "heard": "hear", "held": "hold", "knew": "know", "known": "know", "led": "lead", "lost": "lose",
    "rode": "ride", "ridden": "ride", "sang": "sing", "sung": "sing", "sat": "sit", "slept": "sleep",
    "spoke": "speak", "spoken": "speak", "stood": "stand", "swam": "swim", "swum": "swim", "threw": "throw",
    "thrown": "throw", "wore": "wear", "worn": "wear", "won": "win", "broke": "break", "broken": "break",
    "came": "come", "became": "become", "fought": "fight", "hid": "hide", "hidden": "hide", "lent": "lend",
    "woke": "wake", "woken": "wake", "shook": "shake", "bit": "bite", "dug": "dig", "fed": "feed",
    "understood": "understand", "children": "child", "kids": "kid", "men": "man", "women": "woman",
    "people": "person", "feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose", "wives": "wife",
    "lives": "life", "knives": "knife", "leaves": "leaf", "shelves": "shelf", "selves": "self",
}  # fmt: skip

# One group per line: the first word names the concept token; every word (after stemming) indexes it.
_GROUPS = """
relax relax unwind destress decompress chill calm recharge soothe peaceful
attend attend go visit join participate
buy buy purchase shop order
child child kid son daughter baby toddler
parent parent mom mother dad father mum
partner partner husband wife spouse boyfriend girlfriend fiance fiancee
sibling sibling brother sister
friend friend buddy pal bestie
book book novel read reader author
movie movie film cinema
music music song band concert gig album singer playlist
instrument instrument guitar piano violin drum ukulele flute cello saxophone
art art paint painting draw drawing sketch artwork canvas artist
pottery pottery ceramic clay
pet pet dog cat puppy kitten pup
job job work career profession occupation employer workplace
school school class course college university degree education student lesson
travel travel trip vacation holiday journey tour getaway abroad
hike hike trek trail hiking
run run jog marathon race
exercise exercise workout gym fitness yoga
cook cook bake recipe cuisine kitchen
food food meal dinner lunch breakfast snack
home home house apartment
move move relocate
car car vehicle truck
doctor doctor physician hospital clinic nurse medical
sick sick ill illness disease flu
injury injury hurt injure accident
happy happy glad joy delighted thrilled excited proud
sad sad upset depressed unhappy heartbroken
anxious anxious nervous worried stress stressed overwhelmed
start start begin launch
finish finish complete
enjoy enjoy love like fond favorite favourite adore prefer passion
learn learn study practice
sport sport game match tournament
garden garden plant flower gardening
beach beach sea ocean coast shore
mountain mountain hill peak climb
camp camp camping tent
photo photo picture pic photograph camera
gift gift present
wedding wedding marry married marriage engaged engagement
birthday birthday bday
party party celebrate celebration
volunteer volunteer charity donate fundraiser nonprofit
help help support assist mentor
write write journal blog essay poem poetry
money money cash salary income budget
adopt adopt adoption foster
talk talk chat speak discuss conversation
create create make build craft
city city town
counsel counsel counselor counseling therapist therapy psychologist
faith faith church religious spiritual
award award prize trophy medal
group group club community
family family relative
dance dance dancing ballet
swim swim swimming pool
game videogame gaming console
phone phone call text
plan plan planning goal dream
friendship friendship relationship
"""

CONCEPT_GROUPS: dict[str, tuple[str, ...]] = {
    line.split()[0]: tuple(line.split()[1:]) for line in _GROUPS.strip().splitlines() if line.strip()
}

# Words that anchor a statement in time; a "when ..." question prefers turns that carry one.
TIME_WORDS: frozenset[str] = _wordset(
    """yesterday today tonight tomorrow ago last next week weeks weekend month months year years day days
    monday tuesday wednesday thursday friday saturday sunday january february march april june july august
    september october november december morning evening afternoon night recently earlier soon since
    summer winter spring autumn season anniversary date"""
)
