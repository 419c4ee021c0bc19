"""Deterministic development sets for contextual recall: generated conversations and notes with known
evidence.

Two structurally different generators. ``chat``: long multi-session conversations between two speakers (one
record per turn, the speaker (and, in the ``dated`` title style, the session and date) in the title), where
each speaker's persona facts are mentioned in a few turns, often paraphrased, sometimes only as the answer to
the other speaker's question, among small talk and hard distractors (the other speaker or the owner using the
same words about something else). ``notes``: a personal-assistant memory of short titled notes with tags.
Questions paraphrase the evidence. Every phrasing list is split in two halves: the ``A`` half is for tuning,
the ``B`` half (different wording of statements *and* questions) only for held-out sets, so a gain that
survives on ``B`` is not a gain from memorising phrasings. The word lists of the ranker were written before
this file.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Question", "Record", "Scope", "chat_scopes", "notes_scopes"]


@dataclass(frozen=True)
class Record:
    doc: int
    title: str
    body: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[int, ...]
    category: str


@dataclass
class Scope:
    name: str
    records: list[Record] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


NAMES = [
    "Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Deborah", "Jolene", "Evan", "Sam", "Calvin",
    "Dave", "Maria", "John", "Tim", "Joanna", "Nate", "James", "Priya", "Omar", "Lena", "Hector",
]  # fmt: skip

TIMES = [
    "yesterday",
    "last week",
    "last Saturday",
    "two days ago",
    "this past weekend",
    "last Friday",
    "on Sunday",
    "a few days ago",
    "last month",
    "earlier today",
]


@dataclass(frozen=True)
class Family:
    """One kind of persona fact. Templates use {X} (value), {T} (time), {O} (other speaker), {N} (owner)."""

    key: str
    values: tuple[str, ...]
    statements: tuple[tuple[str, ...], tuple[str, ...]]
    questions: tuple[tuple[str, ...], tuple[str, ...]]
    # (prompt by the other speaker, answer by the owner): the answer alone is the evidence.
    exchanges: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = ((), ())
    # Same words, other meaning: said by either speaker, never evidence.
    decoys: tuple[str, ...] = ()
    mentions: int = 1
    category: str = "single-hop"


FAMILIES: tuple[Family, ...] = (
    Family(
        "destress",
        (
            "running",
            "painting",
            "yoga",
            "swimming",
            "baking bread",
            "gardening",
            "playing the guitar",
            "long walks with the dog",
            "pottery",
            "journaling",
        ),
        (
            (
                "{X} is how I destress after a long week.",
                "Honestly, {X} keeps me sane when work gets stressful.",
            ),
            (
                "Nothing helps me unwind like {X}.",
                "When everything piles up I turn to {X}, it calms me right down.",
            ),
        ),
        (
            ("What does {N} do to destress?", "How does {N} deal with stress?"),
            ("How does {N} relax?", "What helps {N} unwind after a hard week?"),
        ),
        (
            (("What do you do to relax, {N}?", "Mostly {X}. It really clears my head."),),
            (("How do you cope when things get hectic?", "{X}, every single time. Works like magic."),),
        ),
        (
            "Work has been so stressful lately, I barely sleep.",
            "I really need to relax more, my boss says so too.",
            "That sounds so stressful, I'm sorry.",
        ),
    ),
    Family(
        "event",
        (
            "LGBTQ support group",
            "charity run",
            "pottery workshop",
            "jazz concert",
            "book club meeting",
            "art exhibition",
            "job fair",
            "cooking class",
            "poetry reading",
            "farmers market",
            "mentorship meetup",
            "community cleanup",
        ),
        (
            (
                "I went to a {X} {T} and it was so powerful.",
                "I attended the {X} {T}, such a great experience.",
            ),
            ("{T} I finally checked out the {X}.", "Guess where I was {T}? At the {X}! Loved every minute."),
        ),
        (
            ("When did {N} go to the {X}?",),
            ("When did {N} attend the {X}?", "On what day was {N} at the {X}?"),
        ),
        decoys=(
            "I've always wanted to go to a {X}, maybe one day.",
            "My cousin runs a {X} near her place.",
            "Are you going to the {X} again next month?",
        ),
        category="temporal",
    ),
    Family(
        "books",
        (
            "Charlotte's Web",
            "Becoming Nicole",
            "The Night Circus",
            "Educated",
            "Project Hail Mary",
            "Where the Crawdads Sing",
            "The Midnight Library",
            "Atomic Habits",
            "Little Women",
            "Dune",
        ),
        (
            ('I just finished reading "{X}", loved it.', '"{X}" is the book I\'m reading right now.'),
            ('Finally got through "{X}" last night.', 'My latest novel is "{X}", I can\'t put it down.'),
        ),
        (("What books has {N} read?",), ("Which novels has {N} finished?", "What has {N} been reading?")),
        decoys=(
            "I don't have much time to read these days.",
            "Did you see the movie version? Not as good.",
            "I should join a book club at some point.",
        ),
        mentions=2,
        category="multi-hop",
    ),
    Family(
        "pet",
        (
            "dog Max",
            "cat Luna",
            "puppy Oliver",
            "kitten Bailey",
            "dog Biscuit",
            "cat Pepper",
            "rabbit Clover",
        ),
        (
            ("My {X} chewed up my shoes again this morning.", "I took my {X} to the vet for a checkup."),
            (
                "{X} (that's my little furball) kept me up all night.",
                "Walking {X} around the lake is the best.",
            ),
        ),
        (
            ("What is the name of {N}'s pet?", "What pet does {N} have?"),
            ("What is {N}'s animal called?", "What did {N} name the pet?"),
        ),
        decoys=("We had a dog when I was little.", "Pets are so much work, I don't know how you do it."),
    ),
    Family(
        "career",
        (
            "counseling",
            "nursing",
            "teaching",
            "graphic design",
            "social work",
            "software engineering",
            "law",
            "veterinary medicine",
        ),
        (
            ("I'm thinking about a career in {X}.", "I want to pursue {X} so I can help people."),
            (
                "I've applied to a program in {X}, fingers crossed!",
                "Working in {X} has been my dream forever.",
            ),
        ),
        (
            ("What career path is {N} considering?", "What career does {N} want to pursue?"),
            ("What field does {N} want to work in?", "What job is {N} hoping to get into?"),
        ),
        (
            (("So what do you want to do after school?", "I keep coming back to {X}, honestly."),),
            (("Any idea what's next for you, {N}?", "{X}. I think I'd be good at it."),),
        ),
        ("My career has been on hold for a while.", "Work is work, you know?"),
    ),
    Family(
        "instrument",
        ("guitar", "piano", "violin", "drums", "clarinet", "ukulele", "cello"),
        (
            ("I've been playing the {X} since I was a kid.", "I practiced the {X} for two hours today."),
            ("My {X} teacher says I'm improving fast.", "Just learned a new song on the {X}!"),
        ),
        (
            ("What instrument does {N} play?",),
            ("Which musical instrument has {N} learned?", "What does {N} make music with?"),
        ),
        decoys=("I love live music, it's the best.", "My neighbor plays music way too loud."),
    ),
    Family(
        "trip",
        ("Paris", "the Grand Canyon", "Japan", "Lake Tahoe", "the Rockies", "Barcelona", "Iceland", "Lisbon"),
        (
            ("We took a trip to {X} {T}, it was gorgeous.", "I traveled to {X} {T} with my family."),
            ("{T} we flew out to {X} for a little vacation.", "Just got back from {X}, we left {T}."),
        ),
        (("When did {N} travel to {X}?",), ("When was {N}'s vacation in {X}?", "When did {N} visit {X}?")),
        decoys=("I'd love to see {X} someday.", "My sister lived in {X} for a year."),
        category="temporal",
    ),
    Family(
        "cook",
        (
            "lasagna",
            "banana bread",
            "pad thai",
            "vegan chili",
            "apple pie",
            "homemade pizza",
            "chocolate cake",
        ),
        (
            ("I cooked {X} for the whole family on Sunday.", "My go-to recipe lately is {X}."),
            ("Made {X} from scratch, it came out perfect.", "Everyone begged for seconds of my {X}."),
        ),
        (
            ("What does {N} like to cook?", "What dish did {N} make?"),
            ("What food did {N} prepare for the family?", "What is {N}'s signature recipe?"),
        ),
        decoys=("I can't cook to save my life.", "We ordered takeout again, no time to make dinner."),
    ),
    Family(
        "hobby",
        (
            "salsa dancing",
            "rock climbing",
            "photography",
            "surfing",
            "knitting",
            "woodworking",
            "archery",
            "calligraphy",
        ),
        (
            ("I started taking {X} lessons last month!", "I've just picked up {X} as a new hobby."),
            ("Signed up for a beginner {X} class, so excited.", "I've been getting into {X} recently."),
        ),
        (
            ("What new hobby did {N} pick up?", "What hobby did {N} start?"),
            ("What did {N} begin learning recently?", "What new activity is {N} trying?"),
        ),
        decoys=("I need a new hobby, I'm so bored.", "My brother tried {X} once and hated it."),
    ),
    Family(
        "volunteer",
        (
            "animal shelter",
            "food bank",
            "homeless shelter",
            "youth center",
            "children's hospital",
            "senior center",
        ),
        (
            ("I volunteer at the {X} every Sunday.", "Volunteering at the {X} has been so rewarding."),
            ("I help out at the {X} on weekends.", "Spent my Saturday at the {X} sorting donations."),
        ),
        (("Where does {N} volunteer?",), ("What charity work does {N} do?", "Where does {N} give back?")),
        decoys=("I should volunteer more, I keep saying that.", "The {X} downtown closed last year."),
    ),
    Family(
        "support",
        ("mom", "sister", "best friend", "husband", "grandma", "partner", "mentor"),
        (
            ("My {X} has been my biggest support through all of this.", "Honestly my {X} keeps me going."),
            ("I don't know what I'd do without my {X}.", "My {X} always has my back, no matter what."),
        ),
        (("Who supports {N} the most?",), ("Who has been there for {N}?", "Who does {N} rely on?")),
        decoys=("Support is so important, you know.", "My {X} is visiting next week."),
    ),
    Family(
        "race",
        ("5k", "half marathon", "marathon", "10k", "trail race", "triathlon"),
        (
            ("I ran a {X} {T}, my legs are dead.", "I finished the {X} {T} in under my goal time!"),
            ("{T} I completed my first {X}.", "Crossed the finish line of the {X} {T}, still buzzing."),
        ),
        (("When did {N} run a {X}?",), ("When did {N} complete the {X}?", "When was {N}'s {X}?")),
        decoys=("I could never run a {X}, respect.", "Running is not for me, my knees hate it."),
        category="temporal",
    ),
    Family(
        "painted",
        (
            "sunset over the lake",
            "portrait of my dog",
            "field of sunflowers",
            "stormy sea",
            "city skyline",
            "bowl of lemons",
        ),
        (
            ("I painted a {X} last week, I'm proud of it.", "My latest painting is a {X}."),
            ("Finished a canvas of a {X}, hanging it in the hall.", "Here's my new piece: a {X}."),
        ),
        (
            ("What did {N} paint recently?",),
            ("What was the subject of {N}'s recent artwork?", "What is in {N}'s newest canvas?"),
        ),
        decoys=("I can't paint at all, stick figures only.", "We need to paint the kitchen at some point."),
    ),
    Family(
        "moved",
        ("Denver", "Austin", "Seattle", "Boston", "Portland", "Chicago"),
        (
            ("We moved to {X} {T}, still unpacking.", "Moving to {X} was the best decision."),
            (
                "Our new place in {X} is finally feeling like home.",
                "We relocated to {X}, the boxes are everywhere.",
            ),
        ),
        (("Where did {N} move to?",), ("Which city did {N} relocate to?", "Where is {N}'s new home?")),
        decoys=("Moving is the worst, I never want to do it again.", "Have you ever been to {X}?"),
    ),
    Family(
        "favorite_movie",
        ("Eternal Sunshine", "The Princess Bride", "Spirited Away", "Jurassic Park", "Little Miss Sunshine"),
        (
            ('My all-time favorite movie is "{X}".', 'I watched "{X}" again, still my favorite film.'),
            ('"{X}" never gets old, I\'ve seen it a dozen times.', 'Nothing beats "{X}" on a rainy night.'),
        ),
        (("What is {N}'s favorite movie?",), ("Which film does {N} love the most?",)),
        (
            (("What's your favorite movie?", 'Probably "{X}", I could quote the whole thing.'),),
            (("Which film could you watch forever?", '"{X}", no contest.'),),
        ),
        ("We watched a movie last night, it was meh.",),
    ),
    Family(
        "injury",
        ("sprained my ankle", "broke my wrist", "hurt my back", "twisted my knee", "pulled a muscle"),
        (
            ("I {X} playing soccer, so annoying.", "Ugh, I {X} on the stairs at work."),
            ("Doctor says it'll take weeks because I {X}.", "I {X} while hiking, had to limp back down."),
        ),
        (("What injury did {N} have?",), ("How did {N} get hurt?", "What happened to {N}'s body recently?")),
        decoys=("Be careful out there, injuries are no joke.",),
    ),
    Family(
        "outdoors",
        (
            "camping in the mountains",
            "hiking the coastal trail",
            "kayaking on the river",
            "stargazing in the desert",
        ),
        (
            ("Nothing makes me happier than {X}.", "We spent the whole weekend {X}."),
            ("My favorite memory this year is {X}.", "I'm always up for {X}, it recharges me."),
        ),
        (
            ("Would {N} enjoy an outdoor trip?", "What outdoor activities does {N} like?"),
            ("Is {N} an outdoorsy person?", "What does {N} love doing in nature?"),
        ),
        decoys=("I'm more of an indoor person honestly.",),
        category="open-domain",
    ),
)

SMALL_TALK = [
    "How have you been?", "That's awesome, I'm so happy for you!", "Wow, that sounds amazing.",
    "Thanks, I really appreciate it.", "Haha, totally.", "I know, right?", "That's so cool!",
    "It's been a crazy couple of weeks.", "I hope you have a great weekend!", "Talk soon!",
    "Same here, it's been nonstop.", "That means a lot to me.", "Good luck with everything!",
    "Tell me more about it.", "I'm doing okay, just tired.", "You always know what to say.",
    "That's really inspiring.", "The weather has been so nice lately.", "I had a long day at work.",
    "I totally get that.", "Let's catch up again soon.", "I'm proud of you, seriously.",
    "What have you been up to?", "Anything new with you?", "Sounds like a plan!", "Oh no, that's rough.",
    "It's so good to hear from you.", "I've been thinking about what you said last time.",
    "Life has been a rollercoaster lately.", "Glad things are looking up.", "Take care of yourself.",
    "We should hang out soon.", "That's hilarious.", "I can't believe it's already been a month.",
    "My family says hi.", "I'm trying to stay positive.", "It was a good day overall.",
    "Things at work are finally calming down.", "I had coffee with an old friend.", "Time flies, doesn't it?",
]  # fmt: skip

CHATTER_SUBJECTS = [
    "My sister",
    "The kids",
    "My best friend",
    "Our neighbor",
    "My coworker",
    "My dad",
    "My mom",
    "Everyone at work",
    "My cousin",
    "A friend from college",
    "My partner",
    "The new guy at the office",
]
CHATTER_PREDICATES = [
    "has been so busy with the new house",
    "went to the beach and got sunburned",
    "adopted a puppy, total chaos",
    "started a new job downtown",
    "is planning a big trip for the summer",
    "lent me a book I'll never finish",
    "signed up for a yoga class",
    "is stressed about school",
    "won a little art contest",
    "is learning to cook",
    "keeps sending me funny videos",
    "finally got engaged",
    "moved into a tiny apartment",
    "ran into an old teacher",
    "is training for a race",
    "had a rough week at the hospital",
    "bought a used car",
    "is into painting now",
    "took up gardening",
    "threw a huge birthday party",
    "volunteers at the library",
    "got a promotion",
    "is obsessed with a video game",
    "went camping in the rain",
    "joined a choir",
    "baked way too many cookies",
    "has a job interview tomorrow",
    "is visiting family next week",
    "hurt their shoulder at the gym",
    "keeps talking about music festivals",
    "is writing a novel",
    "finished a marathon somehow",
]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip


def _fill(template: str, rng: random.Random, *, x: str, owner: str, other: str) -> str:
    text = template.replace("{X}", x).replace("{N}", owner).replace("{O}", other)
    if "{T}" in text:
        text = text.replace("{T}", rng.choice(TIMES))
    return text[0].upper() + text[1:]


def chat_scopes(seed: int, *, half: int, conversations: int = 5, title_style: str = "name") -> list[Scope]:
    """Generate ``conversations`` two-speaker dialogues using phrasing half ``half`` (0 = A, 1 = B)."""
    rng = random.Random(seed)
    scopes = []
    for c in range(conversations):
        a, b = rng.sample(NAMES, 2)
        scopes.append(_conversation(rng, f"chat-s{seed}-h{'AB'[half]}-{c}", (a, b), half, title_style))
    return scopes


def _conversation(rng: random.Random, name: str, speakers: tuple[str, str], half: int, style: str) -> Scope:
    # Plan the facts first: each speaker owns a random subset of families with distinct values.
    plan: list[tuple[str, Family, str]] = []
    for speaker in speakers:
        for family in rng.sample(FAMILIES, k=rng.randint(10, 13)):
            for value in rng.sample(family.values, k=family.mentions):
                plan.append((speaker, family, value))
    rng.shuffle(plan)
    n_sessions = rng.randint(20, 28)
    slots: list[list[tuple[str, Family, str]]] = [[] for _ in range(n_sessions)]
    for item in plan:
        slots[rng.randrange(n_sessions)].append(item)

    scope = Scope(name)
    evidence: dict[tuple[str, str, str], list[int]] = {}
    used: set[tuple[str, str]] = set()
    day = rng.randrange(0, 28)
    for session, facts in enumerate(slots):
        day += rng.randint(3, 20)
        date = f"{1 + day % 28} {MONTHS[(day // 28) % 12]} 2023"
        turns: list[tuple[str, str, tuple[str, str, str] | None]] = []
        for owner, family, value in facts:
            other = speakers[1 - speakers.index(owner)]
            exchanges = family.exchanges[half]
            if exchanges and rng.random() < 0.4:
                prompt, answer = rng.choice(exchanges)
                turns.append((other, _fill(prompt, rng, x=value, owner=owner, other=other), None))
                turns.append(
                    (owner, _fill(answer, rng, x=value, owner=owner, other=other), (owner, family.key, value))
                )
            else:
                text = _fill(rng.choice(family.statements[half]), rng, x=value, owner=owner, other=other)
                turns.append((owner, text, (owner, family.key, value)))
                if rng.random() < 0.5:
                    turns.append((other, rng.choice(SMALL_TALK), None))
            if family.decoys and rng.random() < 0.7:
                decoy_value = rng.choice(family.values)
                who = rng.choice(speakers)
                text = _fill(rng.choice(family.decoys), rng, x=decoy_value, owner=who, other=owner)
                # People rarely repeat a sentence verbatim; duplicates would crowd every top-k list.
                if (who, text) not in used:
                    used.add((who, text))
                    turns.append((who, text, None))
        for _ in range(rng.randint(8, 16)):
            turns.insert(rng.randrange(len(turns) + 1), (rng.choice(speakers), rng.choice(SMALL_TALK), None))
        for _ in range(rng.randint(6, 12)):
            chatter = f"{rng.choice(CHATTER_SUBJECTS)} {rng.choice(CHATTER_PREDICATES)}."
            who = rng.choice(speakers)
            if (who, chatter) not in used:
                used.add((who, chatter))
                turns.insert(rng.randrange(len(turns) + 1), (who, chatter, None))
        for _ in range(rng.randint(1, 4)):
            family = rng.choice([f for f in FAMILIES if f.decoys])
            who = rng.choice(speakers)
            text = _fill(rng.choice(family.decoys), rng, x=rng.choice(family.values), owner=who, other=who)
            if (who, text) not in used:
                used.add((who, text))
                turns.insert(rng.randrange(len(turns) + 1), (who, text, None))
        # Alternate speakers where the plan allows it, as a real dialogue does.
        for speaker, text, key in turns:
            doc = len(scope.records) + 1
            title = speaker if style == "name" else f"{speaker} · session {session + 1} · {date}"
            scope.records.append(Record(doc, title, text))
            if key is not None:
                evidence.setdefault(key, []).append(doc)

    by_family: dict[tuple[str, str], list[tuple[str, list[int]]]] = {}
    for (owner, fkey, value), docs in evidence.items():
        by_family.setdefault((owner, fkey), []).append((value, docs))
    families = {f.key: f for f in FAMILIES}
    for (owner, fkey), items in sorted(by_family.items()):
        family = families[fkey]
        if (
            family.mentions > 1
            or family.category == "open-domain"
            or "{X}" not in "".join(family.questions[half])
        ):
            # One question about all mentions ("What books has X read?").
            template = rng.choice(family.questions[half])
            docs = tuple(sorted(d for _, ds in items for d in ds))
            scope.questions.append(
                Question(_fill(template, rng, x="", owner=owner, other=""), docs, family.category)
            )
        else:
            for value, docs in items:
                template = rng.choice(family.questions[half])
                text = _fill(template, rng, x=value, owner=owner, other="")
                scope.questions.append(Question(text, tuple(docs), family.category))
    return scope


# ----------------------------------------------------------------------------------------------------
# Personal-assistant notes: short titled notes with tags, questions in the user's words.

NoteFamily = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], tuple[tuple[str, ...], ...]]
NOTE_FAMILIES: tuple[NoteFamily, ...] = (
    # (tag, values, (title, body) templates for halves A and B interleaved, (questions A), (questions B))
    ("travel", ("aisle seat", "window seat", "exit row"),
     (("Flight preferences", "User prefers an {X} on flights and hates red-eyes."),
      ("Flying", "When booking planes always pick an {X} for the user.")),
     (("Which seat does the user like when flying?",), ("What seat should I book on the plane?",))),
    ("diet", ("peanuts", "shellfish", "gluten", "lactose", "eggs"),
     (("Allergy", "User is allergic to {X}; check menus before ordering."),
      ("Food restriction", "Avoid {X} in anything ordered for the user, bad reaction.")),
     (("What is the user allergic to?",), ("Which food must be avoided when ordering for the user?",))),
    ("coffee", ("oat milk flat white", "black americano", "iced latte with vanilla", "double espresso"),
     (("Coffee order", "Usual coffee: {X}."), ("Morning drink", "Gets a {X} every morning before standup.")),
     (("How does the user take their coffee?",), ("What coffee should I grab for the user?",))),
    ("people", ("Dana Whitfield", "Raj Patel", "Sofia Moreno", "Ken Ito"),
     (("Manager", "User's manager is {X}; weekly 1:1 on Tuesdays."),
      ("Reporting line", "Reports to {X}, who approves all vacation requests.")),
     (("Who is the user's boss?",), ("Who approves the user's time off?",))),
    ("deploy", ("staging first then canary", "blue-green with manual approval", "feature flags only"),
     (("Deploy procedure", "Release process: {X}; never deploy on Fridays."),
      ("Shipping code", "To ship changes use {X}, rollback within ten minutes if errors spike.")),
     (("How should code be deployed?",), ("What is the process to release changes?",))),
    ("health", ("Tuesday at 3pm", "every other Monday", "the first Friday of the month"),
     (("Therapy", "Therapy sessions are {X} with Dr. Lane."),
      ("Counselor appointment", "Sees the counselor {X}; do not schedule meetings then.")),
     (("When does the user see their therapist?",), ("When are the user's counseling appointments?",))),
    ("family", ("Mia", "Leo", "Ava", "Noah"),
     (("Kid's name", "User's daughter is called {X}, she is seven."),
      ("Family", "{X} is the user's child; school pickup at 3:15.")),
     (("What is the name of the user's kid?",), ("Who is the user's daughter?",))),
    ("car", ("blue Subaru Outback", "white Tesla Model 3", "red Honda Civic"),
     (("Vehicle", "User drives a {X}; plate ends in 42."), ("Car", "The user's {X} is due for service.")),
     (("What car does the user drive?",), ("Which vehicle does the user own?",))),
    ("fitness", ("swimming laps", "cycling", "weightlifting", "pilates"),
     (("Exercise routine", "Works out by {X} three times a week."),
      ("Gym habits", "Keeps fit with {X} before work.")),
     (("How does the user exercise?",), ("What is the user's workout?",))),
    ("music", ("jazz", "synthwave", "classical piano", "bluegrass"),
     (("Focus music", "Likes {X} playing while coding."),
      ("Playlist", "Put on {X} when the user needs to focus.")),
     (("What music does the user listen to while working?",), ("Which songs help the user concentrate?",))),
    ("home", ("Oakland", "Brooklyn", "Cambridge", "Boulder"),
     (("Home city", "User lives in {X} and commutes by train."),
      ("Address", "Home is in {X}, near the park.")),
     (("Where does the user live?",), ("What city is the user's house in?",))),
    ("gotcha",
     ("the VPN must be on", "tests need the local Redis", "the build cache breaks on branch switch"),
     (("Gotcha", "Remember: {X} or the integration suite fails."),
      ("Known issue", "Integration suite errors usually mean {X}.")),
     (("Why does the integration suite fail?",), ("What breaks the integration tests?",))),
)  # fmt: skip

NOTE_FILLER = [
    ("Meeting notes", "Discussed roadmap and hiring; follow up next week."),
    ("Reminder", "Renew the passport before the summer trip."),
    ("Idea", "Try a standing desk to help with back pain."),
    ("Book list", "Wants to read more science fiction this year."),
    ("Birthday", "Partner's birthday is in October; likes handwritten cards."),
    ("Preference", "Prefers short emails with bullet points."),
    ("Gym", "The gym closes early on Sundays."),
    ("Restaurant", "Liked the Thai place near the office, order the curry."),
    ("Project", "The migration project is blocked on the database upgrade."),
    ("Travel", "Has a conference in Berlin next spring."),
    ("Coffee chat", "Grab coffee with the new hire on Thursday."),
    ("Flight", "Last flight was delayed four hours, rebook with another airline."),
    ("Kids", "School holidays start mid July."),
    ("Car wash", "Car needs a wash before the road trip."),
    ("Music", "Concert tickets for the jazz festival arrive by mail."),
    ("Health", "Annual checkup booked with the doctor in March."),
    ("Code review", "Prefers small pull requests with tests."),
    ("Allergy season", "Pollen is bad in April, keep the windows closed."),
]  # fmt: skip


def notes_scopes(seed: int, *, half: int, scopes: int = 3) -> list[Scope]:
    """Generate note memories; each scope holds every note family once plus many fillers and decoy values."""
    rng = random.Random(seed)
    out = []
    for s in range(scopes):
        scope = Scope(f"notes-s{seed}-h{'AB'[half]}-{s}")
        pending: list[tuple[str, str, tuple[str, ...], int | None]] = []
        for index, (tag, values, templates, questions) in enumerate(NOTE_FAMILIES):
            value = rng.choice(values)
            title, body = templates[half]
            pending.append((title, body.replace("{X}", value), (tag,), index))
            # A stale or other-person note with another value of the same kind: a hard negative.
            if rng.random() < 0.6:
                other = rng.choice([v for v in values if v != value])
                pending.append(
                    (f"{title} (old)", f"Previously: {other}. Superseded, keep for history.", (tag,), None)
                )
            _ = questions
        for _ in range(rng.randint(150, 250)):
            title, body = rng.choice(NOTE_FILLER)
            pending.append((title, body, (rng.choice(["misc", "work", "home", "todo"]),), None))
        rng.shuffle(pending)
        positions: dict[int, int] = {}
        for doc, (title, body, tags, family_index) in enumerate(pending, start=1):
            scope.records.append(Record(doc, title, body, tags))
            if family_index is not None:
                positions[family_index] = doc
        for family_index, doc in sorted(positions.items()):
            question = rng.choice(NOTE_FAMILIES[family_index][3][half])
            scope.questions.append(Question(question, (doc,), "note"))
        out.append(scope)
    return out
