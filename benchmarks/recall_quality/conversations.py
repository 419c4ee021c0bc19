"""A conversational development set that behaves like real human multi-session chat.

``conversation_scopes(seed, half=...)`` generates long dialogues between two friends who catch up every week
or two for months: 15-30 dated sessions, roughly 500-900 turns per conversation, one record per turn (title
``"{Speaker} · session {n} · {date}"``, body the turn). Each speaker has 8-12 life *topics* (a job, painting,
a pet, the kids, running, a health issue, ...) that come back again and again: core statements of the
interest, talk about it without a detail worth asking about, the friend asking how it goes, and *facts*: the
same kind of event several times with different specific details (a painted subject, a pet's name, a race,
a place, a person, a number). Around them: greetings, reactions ("Wow, that's amazing! How did it go?"),
thanks, small talk; turns often wrap the news in filler or feelings, and a speaker's two consecutive things
are sometimes merged into one turn.

Questions are what an annotator would write from the evidence: ``single-hop`` (reusing the fact's detail
words), ``temporal`` ("When did ...?", answered by the session date in the title), ``multi-hop`` (the same
kind of fact across 2-3 sessions: "What has X painted?"), ``paraphrase`` (only the topic words are shared, the
detail is described in other words) and ``open-domain`` (an inference from the speaker's core statements that
shares almost no word with them). Some facts are only told as the answer to the friend's question, so the
evidence turn lacks the question's subject words.

Why this set exists: on real multi-session chat, embedding neighbours alone and their fusion with the
lexical ranker were clearly worse than the lexical ranker, and the older generated sets (``devset.py`` chat,
``paraphrase.py``) did not show it. The mechanism modelled here is the topic cluster: a question about a
speaker's painting is close in embedding space to every one of that speaker's 10-40 painting turns (and to
the friend's "How's the painting going?"), while only a detail word (the lake, the café on Maple Street, the
name Biscuit) singles out the evidence; rare words are what BM25-style ranking weighs most.

Every phrasing list (statements, chatter, fillers, questions) has two halves as in ``devset.py``: ``half``
0 (A) is for tuning (seeds 1, 2), 1 (B) with other wording of both statements and questions is held out
(seeds 11, 12). Detail values (painted subjects, pet names, places) are shared by both halves.

Caveat, plainly: this is generated data from one author, with templated English. It imitates properties
of human chat (topic recurrence, word overlap between questions and evidence, filler), not any public
benchmark, and absolute figures on it mean little. Use it for *differences* between recall systems, and
trust a difference only when it also holds on held-out half B.
"""

from __future__ import annotations

import datetime
import random
import re
from dataclasses import dataclass, field

from devset import Question, Record, Scope

__all__ = ["TOPICS", "Fact", "Topic", "conversation_scopes"]

Halves = tuple[tuple[str, ...], tuple[str, ...]]
Exchanges = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class Fact:
    """One kind of event or detail of a topic, told once per value (1-3 values per speaker).

    Templates use ``{a}`` (the value's detail), ``{c}`` (its short form), ``{pa}`` (the detail in other words, for paraphrase
    questions), ``{p}`` (the speaker's persona value of the topic), ``{N}`` (the owner), ``{O}`` (the
    friend), ``{m}`` (a person's name), ``{k}`` (a small number) and ``{T}`` (a relative time).
    """

    key: str
    values: tuple[tuple[str, str, str], ...]  # (detail, its short form, the detail in other words)
    statements: Halves  # by the owner, the evidence turn
    replies: Exchanges  # (the friend's prompt, the owner's answer): only the answer is evidence
    whats: Halves  # single-hop questions for the detail, reusing other words of statements[half][i]
    asks: Halves  # single-hop questions reusing the detail
    paraphrases: Halves  # the same questions with the detail paraphrased ({pa})
    whens: Halves  # temporal questions
    multi: Halves = ((), ())  # one question over all of the owner's values of this fact
    later: Halves = ((), ())  # the owner mentions a told value again ({c}), never evidence
    noun: bool = True  # the short forms are noun phrases, fit for CALLBACKS
    sad: bool = False  # bad news: the friend sympathises instead of cheering


@dataclass(frozen=True)
class Topic:
    """A life topic a speaker keeps talking about."""

    key: str
    persona: tuple[str, ...]  # one value per speaker, fixed for the conversation ({p})
    gist: Halves  # a few words naming the topic, for RECAPS ("my watercolors", "school runs")
    core: Halves  # the owner states the interest; evidence for open-domain questions
    inferences: Halves  # open-domain questions answered by the core statements
    chatter: Halves  # the owner about the topic, no detail worth a question
    prompts: Halves  # the friend asks about the owner's topic
    facts: tuple[Fact, ...] = field(default=())


# ----------------------------------------------------------------------------------------------------
# Topics. Each list of phrasings is (half A, half B).

TOPICS: tuple[Topic, ...] = (
    Topic(
        "painting",
        ("watercolors", "oil paints", "acrylics", "gouache", "pastels"),
        gist=(("painting every evening", "my {p}"), ("hours at the easel", "art projects")),
        core=(
            ("I've been painting with {p} almost every evening lately, it's honestly my happy place.",
             "Painting keeps me sane. I grab my {p}, put on some music and lose track of time."),
            ("Most nights you'll find me at the easel with my {p}. It's how I switch off after work.",
             "I started working with {p} a while ago and now I can't stop, art is basically my therapy."),
        ),
        inferences=(
            ("Would {N} enjoy a visit to an art museum?", "Would {N} like a set of brushes as a present?"),
            ("Is {N} likely to go to a gallery opening?", "Would {N} appreciate a gift card for an art supply shop?"),
        ),
        chatter=(
            ("My hands are covered in paint again, haha.",
             "I've been trying to loosen up my brushstrokes, it's harder than it looks.",
             "Some days the colors just don't work and I have to walk away from the canvas.",
             "I reorganized all my {p} this weekend, weirdly satisfying.",
             "I keep a little sketchbook in my bag now, just in case inspiration hits.",
             "Art has taught me to be patient with myself, which I really needed."),
            ("Got paint on my favorite jeans again, oh well.",
             "I'm experimenting with bolder colors, it's a bit scary.",
             "I scrapped a whole canvas yesterday, it just wasn't working.",
             "My little corner studio is finally organized, my {p} all lined up.",
             "I doodle in my notebook whenever I'm on the bus now.",
             "Painting makes me slow down and notice things, like how light falls on a wall."),
        ),
        prompts=(
            ("Have you been painting much lately?", "How's the art going?",
             "I love seeing your paintings, they always make me smile."),
            ("Are you still at the easel every night?", "Any new artwork to show me?",
             "Your art always looks so peaceful to me."),
        ),
        facts=(
            Fact(
                "painted",
                (("the lake at sunset", "the lake", "a scene by the water"),
                 ("a field of sunflowers", "the sunflowers", "some flowers"),
                 ("the old family farmhouse", "the farmhouse", "an old building"),
                 ("two horses in the snow", "the horses", "some animals in winter"),
                 ("the harbor at dawn", "the harbor", "a waterfront in the morning"),
                 ("a portrait of the neighbor's dog", "the dog portrait", "somebody's animal"),
                 ("the view from our balcony", "the balcony view", "the view from home"),
                 ("a stormy sky over the hills", "the stormy sky", "some dramatic weather")),
                statements=(
                    ("I finally finished painting {a}! It took me {k} evenings but I'm really proud of it.",
                     "Look what I painted {T}: {a}. I used way more color than usual and I love how it came out."),
                    ("Guess what, my painting of {a} is done! {k} evenings of work, totally worth it.",
                     "{T} I sat down and painted {a}. It's probably the best thing I've made so far."),
                ),
                replies=(
                    (("What have you been working on at the easel?",
                      "{a}! I spent {k} evenings on it and it's finally done."),),
                    (("Did you finish that piece you were telling me about?",
                      "Yes! {a}, after {k} evenings. I'm thrilled with it."),),
                ),
                whats=(
                    ("What did {N} spend {k} evenings painting?", "What did {N} paint using more color than usual?"),
                    ("Which painting took {N} {k} evenings of work?", "What does {N} consider the best thing they've painted so far?"),
                ),
                asks=(
                    ("How many evenings did {N} spend painting {a}?", "How did {N} feel about the painting of {a}?"),
                    ("How long did it take {N} to finish painting {a}?", "What did {N} think of the finished painting of {a}?"),
                ),
                paraphrases=(("What did {N} paint that showed {pa}?",), ("Which painting of {pa} did {N} finish?",)),
                whens=(("When did {N} paint {a}?",), ("When did {N} finish the painting of {a}?",)),
                multi=(("What has {N} painted?",), ("What subjects has {N} painted?",)),
                later=(
                    ("I hung the painting of {c} in the hallway, it makes me happy every time I walk past.", "{m} wants to buy the painting of {c}, but I don't think I can part with it."),
                    ("The painting of {c} is now above my desk, I look at it all day.", "Someone offered me money for the painting of {c}, can you believe it?"),
                ),
            ),
            Fact(
                "exhibit",
                (("the Riverside Art Fair", "the Riverside fair", "an outdoor event"),
                 ("a café on Maple Street", "the Maple Street café", "a place to eat and drink"),
                 ("the town library's lobby", "the library", "a public building"),
                 ("a small gallery downtown", "the gallery", "a place in the city"),
                 ("the farmers market", "the farmers market", "a market"),
                 ("a pop-up show at the old train station", "the train station show", "a temporary venue"),
                 ("the hospital's hallway gallery", "the hospital", "a medical building"),
                 ("the wine bar on Second Avenue", "the wine bar", "a bar")),
                statements=(
                    ("Big news: {k} of my paintings are going to be shown at {a}! I'm so nervous and excited.",
                     "I had my first little exhibit at {a} {T}, and {k} people asked about prices!"),
                    ("So {a} agreed to hang {k} of my pieces. I can't believe it!",
                     "{T} my art was on display at {a}. Somebody even bought one of the {k} pieces!"),
                ),
                replies=(
                    (("Where are you showing your work?", "At {a}, {k} pieces. I'm still pinching myself."),),
                    (("Did anyone agree to show your stuff in the end?", "{a} did! {k} pieces on the wall."),),
                ),
                whats=(
                    ("Where were {k} of {N}'s paintings going to be shown?", "Where did {N} have a first little exhibit?"),
                    ("Which place agreed to hang {N}'s pieces?", "Where was {N}'s art on display when somebody bought a piece?"),
                ),
                asks=(
                    ("How many of {N}'s paintings were shown at {a}?", "How did {N} feel about showing art at {a}?"),
                    ("How many pieces did {N} have on display at {a}?", "What happened when {N}'s art was shown at {a}?"),
                ),
                paraphrases=(("How many paintings did {N} exhibit at {pa}?",), ("What art did {N} show at {pa}?",)),
                whens=(("When did {N} show paintings at {a}?",), ("When was {N}'s art on display at {a}?",)),
                multi=(("Where has {N} shown art?",), ("Which places have displayed {N}'s art?",)),
                later=(
                    ("I went back to {c} to check on my paintings, one is gone!", "The people at {c} asked if I'd bring more pieces next month."),
                    ("Stopped by {c} today, people were actually looking at my art.", "They want me back at {c} for another show."),
                ),
            ),
        ),
    ),
    Topic(
        "pet",
        ("dog", "cat", "dog", "cat", "puppy"),
        gist=(("the {p} being a menace", "vet bills"), ("chasing the {p} around", "pet chaos")),
        core=(
            ("Our {p} is basically the boss of the house, I can't imagine life without pets.",
             "Having a {p} at home makes every bad day better, honestly."),
            ("I'm such an animal person, my {p} follows me everywhere.",
             "Coming home to my {p} is the best part of my day."),
        ),
        inferences=(
            ("Would {N} be a good person to pet-sit for a weekend?", "Is {N} likely to visit an animal shelter?"),
            ("Would {N} enjoy volunteering at a rescue for animals?", "Does {N} like animals?"),
        ),
        chatter=(
            ("The {p} knocked a glass off the table this morning, classic.",
             "I spend way too much money on pet toys.",
             "Walking around with fur on everything is just my life now.",
             "The {p} got into the trash again, what a mess.",
             "I swear my {p} understands every word I say.",
             "Pets really teach you about unconditional love."),
            ("My {p} stole a sock and ran around the house with it.",
             "The pet food bill this month was ridiculous.",
             "There's hair on every piece of furniture I own.",
             "The {p} has decided the couch belongs to them now.",
             "I talk to my {p} more than to most people.",
             "Animals just make a home feel alive."),
        ),
        prompts=(
            ("How's your {p} doing?", "Any funny pet stories this week?", "Send me a picture of your {p}!"),
            ("Is your {p} still ruling the house?", "What's the little furball been up to?",
             "I miss your {p}, give them a hug from me."),
        ),
        facts=(
            Fact(
                "adopted",
                (("a puppy named Biscuit", "Biscuit", "new dog"), ("a kitten called Pepper", "Pepper", "new cat"),
                 ("an old beagle named Max", "Max", "older dog"), ("a guinea pig called Peanut", "Peanut", "small pet"),
                 ("a rescue greyhound named Luna", "Luna", "rescue dog"), ("a parakeet named Kiwi", "Kiwi", "bird"),
                 ("a tabby cat named Oliver", "Oliver", "cat"), ("a three-legged cat called Tripod", "Tripod", "disabled cat")),
                statements=(
                    ("We adopted {a} {T}! I've been smiling nonstop, the whole family is in love.",
                     "Meet the newest member of the family: {a}. We brought them home from the shelter {T}."),
                    ("So... we have {a} now! Picked them up from the rescue {T} and I'm obsessed.",
                     "{T} we brought home {a}. The house is chaos but it's the good kind."),
                ),
                replies=(
                    (("Wait, is that a new pet in your photo?", "Yep, {a}! Got them from the shelter and I'm already in love."),),
                    (("Who's that cutie in your picture?", "That's {a}, the newest family member!"),),
                ),
                whats=(
                    ("What pet did {N}'s whole family fall in love with?", "What did {N} bring home from the shelter?"),
                    ("What did {N} pick up from the rescue?", "What did {N} bring home that made the house chaos?"),
                ),
                asks=(
                    ("Where did {N} adopt {a} from?", "How does {N}'s family feel about {a}?"),
                    ("Where did {N} find {a}?", "How has {N}'s home changed since {a} arrived?"),
                ),
                paraphrases=(("What is the name of {N}'s {pa}?",), ("What did {N} name the {pa}?",)),
                whens=(("When did {N} adopt {a}?",), ("When did {a} join {N}'s family?",)),
                multi=(("What pets has {N} adopted?",), ("Which animals has {N} brought home?",)),
                later=(
                    ("{c} chewed up my favorite slippers today, little monster.", "{c} has finally figured out where the food bowl is, haha."),
                    ("{c} fell asleep on my lap for three hours, I couldn't move.", "{c} is getting so big, you wouldn't recognize them."),
                ),
            ),
            Fact(
                "vet",
                (("a sprained paw", "the paw", "a limp"), ("an ear infection", "the ear infection", "an infection"),
                 ("a swallowed sock", "the sock", "something it ate"), ("a bee sting on the nose", "the bee sting", "a sting"),
                 ("a broken tooth", "the tooth", "a mouth problem"), ("a stomach bug", "the stomach bug", "an upset stomach"),
                 ("a tick bite", "the tick", "a bite"), ("an allergic rash", "the rash", "a skin problem")),
                statements=(
                    ("Rough week, the {p} had {a} and we spent {k} hours at the vet. All good now, thank goodness.",
                     "Poor {p} came home with {a} {T}. The vet bill was painful but they're fine."),
                    ("{T} we rushed the {p} to the animal clinic with {a}. I was a wreck.",
                     "The {p} is recovering from {a}, the vet said {k} days of rest."),
                ),
                replies=(
                    (("Is everything okay with your {p}? You seemed worried.", "It was {a}, the vet sorted it out. Scary though."),),
                    (("You mentioned an emergency last time, what happened?", "{a}, can you believe it? We were at the clinic for hours."),),
                ),
                whats=(
                    ("Why did {N} spend {k} hours at the vet?", "What did {N}'s {p} come home with?"),
                    ("Why did {N} rush the pet to the animal clinic?", "What is {N}'s {p} recovering from?"),
                ),
                asks=(
                    ("How long was {N}'s {p} at the vet for {a}?", "How did {N} cope when the pet had {a}?"),
                    ("How many days of rest did {N}'s pet need after {a}?", "How did {N} react when the pet got {a}?"),
                ),
                paraphrases=(("Why did {N} take the pet to the vet for {pa}?",), ("What happened after {N}'s pet had {pa}?",)),
                whens=(("When did {N}'s {p} have {a}?",), ("When did {N} take the pet to the clinic for {a}?",)),
                multi=(("What health problems has {N}'s pet had?",), ("Why has {N}'s pet needed the vet?",)),
                later=(
                    ("The {p} is totally fine after {c}, back to causing trouble.", "Still paying off the vet bill from {c}, haha."),
                    ("No more problems since {c}, thank goodness.", "The vet called to check in about {c}, so sweet."),
                ),
                sad=True,
            ),
            Fact(
                "trick",
                (("to give a high five", "to high-five", "a paw trick"), ("to ring a bell to go outside", "to ring the bell", "a signal for the door"),
                 ("to fetch the newspaper", "to fetch the paper", "a fetching trick"), ("to roll over", "to roll over", "a floor trick"),
                 ("to wait patiently before eating", "to wait for food", "patience with food"), ("to walk nicely on a leash", "leash walking", "better walks"),
                 ("to come back when I whistle", "to come to a whistle", "coming when called"), ("to spin in a circle", "to spin", "a turning trick")),
                statements=(
                    ("Proud pet parent moment: after {k} weeks of practice the {p} finally learned {a}!",
                     "The {p} learned {a} {T}, I literally screamed with joy."),
                    ("All those treats paid off, the {p} now knows how {a}. Took {k} weeks!",
                     "{T} the {p} finally figured out how {a}. Best feeling ever."),
                ),
                replies=(
                    (("How's the training going?", "Great actually, they finally learned {a}!"),),
                    (("Any luck with those training sessions?", "Yes! They know how {a} now."),),
                ),
                whats=(
                    ("What did {N}'s {p} learn after {k} weeks of practice?", "What did the {p} learn that made {N} scream with joy?"),
                    ("What does {N}'s pet know now thanks to all those treats?", "What did {N}'s {p} finally figure out?"),
                ),
                asks=(
                    ("How long did it take {N}'s pet to learn {a}?", "How did {N} react when the {p} learned {a}?"),
                    ("How many weeks of practice did {N}'s pet need to learn {a}?", "How did {N} feel when the pet learned {a}?"),
                ),
                paraphrases=(("How long did {N}'s pet take to master {pa}?",), ("When did {N}'s pet finally master {pa}?",)),
                whens=(("When did {N}'s {p} learn {a}?",), ("When did {N}'s pet finally learn {a}?",)),
                multi=(("What tricks does {N}'s pet know?",), ("What has {N} taught the pet?",)),
                noun=False,
                later=(
                    ("The {p} shows off the new trick to every guest now, such a ham.", "Training is going so well, the {p} is a fast learner."),
                    ("Every visitor has to watch the {p}'s trick now, haha.", "I think the {p} is smarter than me at this point."),
                ),
            ),
        ),
    ),
    Topic(
        "job",
        ("a nurse", "a graphic designer", "a high school teacher", "an accountant", "a software developer",
         "a physiotherapist", "a pharmacist", "an electrician"),
        gist=(("crazy hours at work", "my boss"), ("long shifts", "endless meetings")),
        core=(
            ("I've been working as {p} for {k} years now, and most days I still really love it.",
             "Work keeps me busy. Being {p} is exhausting sometimes but it means a lot to me."),
            ("Being {p} isn't always easy, but I can't picture doing anything else.",
             "I've been {p} for {k} years, and the job still surprises me."),
        ),
        inferences=(
            ("Would {N} consider switching careers?", "Does {N} find the job fulfilling?"),
            ("Is {N} happy at work overall?", "Would {N} take a job in another field?"),
        ),
        chatter=(
            ("Work was absolutely nuts today, I barely had time for lunch.",
             "My boss finally noticed all the overtime I've been doing.",
             "We have a new person on the team, still figuring them out.",
             "Mondays at work are the worst, honestly.",
             "I'm trying hard not to check work emails at night.",
             "There's a big deadline coming and everyone is on edge."),
            ("Long shift today, my feet are killing me.",
             "My manager actually said thanks today, small wins!",
             "The new hire asked me to show them the ropes.",
             "I dread the Monday morning meeting every single week.",
             "I turned off work notifications on my phone, best decision ever.",
             "Crunch time at work again, everyone is stressed."),
        ),
        prompts=(
            ("How's work been treating you?", "Are things calmer at the job now?", "Still enjoying being {p}?"),
            ("How are things at work these days?", "Did that busy stretch at work ever end?",
             "Is the job still keeping you crazy busy?"),
        ),
        facts=(
            Fact(
                "success",
                (("a promotion to team lead", "the promotion", "a new position"),
                 ("the employee of the month award", "employee of the month", "an award"),
                 ("a raise after the annual review", "the raise", "a pay increase"),
                 ("a bonus for the winter project", "the bonus", "some extra money"),
                 ("a private office with a window", "the new office", "a better workspace"),
                 ("a seat on the planning committee", "the committee seat", "a new responsibility"),
                 ("a trip to the national conference", "the conference", "a work trip"),
                 ("a mentoring role for new hires", "the mentoring role", "a new role with juniors")),
                statements=(
                    ("Guess what? {m} told me {T} that I'm getting {a}! All those late nights paid off.",
                     "Some good news: my manager {m} says I'm getting {a}. I'm over the moon."),
                    ("{T} my boss {m} called me in, and I'm getting {a}! I actually cried a little.",
                     "Work news: {m} pulled me aside and offered me {a}. So happy!"),
                ),
                replies=(
                    (("Any news from work? You said something was coming.", "Yes! {a}. I still can't quite believe it."),),
                    (("So, what happened at that meeting with your boss?", "I got {a}! Totally unexpected."),),
                ),
                whats=(
                    ("What did {m} tell {N} about?", "What good news did {N}'s manager give?"),
                    ("Why did {N}'s boss call {N} in?", "What did {m} offer {N}?"),
                ),
                asks=(
                    ("Who told {N} about {a}?", "How did {N} feel about getting {a}?"),
                    ("Which manager offered {N} {a}?", "How did {N} react to getting {a}?"),
                ),
                paraphrases=(("Who told {N} about {pa}?",), ("How did {N} react to being offered {pa}?",)),
                whens=(("When did {N} learn about {a}?",), ("When was {N} offered {a}?",)),
                multi=(("What successes has {N} had at work?",), ("What good news has {N} had at the job?",)),
                later=(
                    ("Still settling in after {c}, it's a lot more responsibility.", "{m} at work keeps congratulating me on {c}, it's sweet."),
                    ("{c} is great but my inbox has doubled.", "People at work keep bringing up {c}, I'm blushing."),
                ),
            ),
            Fact(
                "bad day",
                (("the computer system crashed for the whole day", "the system crashed", "nothing technical worked"),
                 ("a customer started shouting in front of everyone", "a customer shouted", "someone made a scene"),
                 ("we lost our biggest client", "the big client left", "the business lost money"),
                 ("half the team called in sick", "the team was out sick", "the office was empty"),
                 ("the fire alarm went off during the big presentation", "the fire alarm went off", "a meeting got interrupted"),
                 ("the whole project got cancelled", "the project got cancelled", "the work was wasted"),
                 ("a mistake turned up in the budget report", "the budget had a mistake", "the numbers were wrong"),
                 ("the office flooded after the storm", "the office flooded", "the building was damaged")),
                statements=(
                    ("Ugh, awful day at work: {a}. I came home and just lay on the floor.",
                     "Work was a disaster {T}, {a}. {m} was the only one who stayed calm."),
                    ("Worst shift ever, {a}. I need a vacation.",
                     "{T} {a} and I honestly wanted to quit on the spot."),
                ),
                replies=(
                    (("You look exhausted, what happened?", "Oh, {a}. Just one of those days."),),
                    (("Why the long face last time?", "{a}. I'm still recovering."),),
                ),
                whats=(
                    ("Why did {N} come home and lie on the floor?", "Why was work a disaster for {N}?"),
                    ("Why did {N} have the worst shift ever?", "What made {N} want to quit on the spot?"),
                ),
                asks=(
                    ("How did {N} handle the day when {a}?", "What did {N} do after work when {a}?"),
                    ("How did {N} feel after {a}?", "What did {N} want to do when {a}?"),
                ),
                paraphrases=(("How did {N} handle the day when {pa}?",), ("What did {N} want to do when {pa}?",)),
                whens=(("When did {N} have a bad day because {a}?",), ("When was {N}'s terrible shift when {a}?",)),
                noun=False,
                later=(
                    ("Work is calmer now, that awful day feels like ages ago.", "We still joke at work about that terrible day."),
                    ("Things at the office have settled since that disaster.", "My team still talks about that horrible shift, haha."),
                ),
                sad=True,
            ),
        ),
    ),
    Topic(
        "kids",
        ("two kids", "three kids", "twins", "two boys", "two girls"),
        gist=(("the kids' schedules", "school runs"), ("homework battles", "the kids")),
        core=(
            ("Being a parent of {p} is the hardest and best thing I've ever done.",
             "My family is my whole world, {p} keep me on my toes every single day."),
            ("Raising {p} is chaos, but I wouldn't trade it for anything.",
             "Everything I do is for my family, honestly. {p} and a very tired me, haha."),
        ),
        inferences=(
            ("Is family important to {N}?", "Would {N} enjoy a trip to a theme park?"),
            ("Does {N} value time at home?", "Would {N} like a weekend at a family resort?"),
        ),
        chatter=(
            ("The kids were bouncing off the walls all afternoon.",
             "School pickup traffic is my personal nightmare.",
             "Bedtime took two hours tonight, I'm exhausted.",
             "We had a lazy family movie night, it was perfect.",
             "The little one asked me why the sky is blue, I had no idea how to answer.",
             "Packing lunches every morning is an art form."),
            ("The house is a disaster zone after the weekend with the kids.",
             "Homework battles again tonight, wish me luck.",
             "Someone decided to wake up at 5 am, you can guess who.",
             "We built a blanket fort in the living room and ate snacks in it.",
             "My kid asked where rain comes from and I just made something up.",
             "I found a crayon drawing on the wall, at least it's a nice one."),
        ),
        prompts=(
            ("How are the kids doing?", "How's family life these days?", "Are the little ones keeping you busy?"),
            ("How's everyone at home?", "What are the kids up to lately?", "Is the house as noisy as ever?"),
        ),
        facts=(
            Fact(
                "milestone",
                (("learned to ride a bike without training wheels", "learned to ride a bike", "got better at cycling"),
                 ("lost a first tooth", "lost a tooth", "grew up a bit"),
                 ("read a whole chapter book alone", "read a chapter book", "got better at reading"),
                 ("scored a goal at the soccer game", "scored a goal", "did well in sports"),
                 ("won the school spelling bee", "won the spelling bee", "won a school competition"),
                 ("swam a full length of the pool", "swam a length", "did well at swimming"),
                 ("played a solo at the school concert", "played a solo", "performed at school"),
                 ("started kindergarten", "started kindergarten", "started school")),
                statements=(
                    ("Proud parent moment: my kid {a} {T}! We celebrated with ice cream.",
                     "I have to tell you, {m}'s kid and mine were together when mine {a}. I cried a little."),
                    ("{T} my little one {a}! I'm still beaming.",
                     "Big day in our house: the youngest {a}, and we threw a tiny party."),
                ),
                replies=(
                    (("How did the big day go for your little one?", "Amazing! {a}, can you believe it?"),),
                    (("Any news from the kids?", "Oh yes, {a}! Totally made my week."),),
                ),
                whats=(
                    ("Why did {N}'s family celebrate with ice cream?", "What happened when {N}'s kid was with {m}'s kid?"),
                    ("Why is {N} still beaming about the little one?", "Why did {N}'s family throw a tiny party?"),
                ),
                asks=(
                    ("How did {N} celebrate when the kid {a}?", "How did {N} feel when the child {a}?"),
                    ("What did {N}'s family do after the child {a}?", "How did {N} react when the kid {a}?"),
                ),
                paraphrases=(("How did {N} celebrate when the kid {pa}?",), ("How did {N} react when the child {pa}?",)),
                whens=(("When did {N}'s kid {a}?",), ("When did {N}'s child {a}?",)),
                multi=(("What milestones have {N}'s kids reached?",), ("What have {N}'s children achieved?",)),
                noun=False,
                later=(
                    ("The kids keep telling everyone about their big moment, so cute.", "My youngest is so proud of themselves lately."),
                    ("My little one brings up their big achievement every day.", "The kids are growing up way too fast."),
                ),
            ),
            Fact(
                "outing",
                (("the aquarium downtown", "the aquarium", "a place with animals"),
                 ("a pumpkin patch", "the pumpkin patch", "a farm"),
                 ("the science museum", "the science museum", "a museum"),
                 ("a petting zoo", "the petting zoo", "a place with animals"),
                 ("the water park", "the water park", "a place to get wet"),
                 ("a strawberry farm", "the strawberry farm", "a farm"),
                 ("the planetarium", "the planetarium", "a place about space"),
                 ("a puppet show at the library", "the puppet show", "a show")),
                statements=(
                    ("We took the kids to {a} {T}, they talked about it the whole drive home!",
                     "Family day at {a} with my friend {m}'s kids too. Total chaos, total fun."),
                    ("{T} we went to {a} as a family and the kids loved every minute.",
                     "Spent Saturday at {a} with the kids and {m}. Exhausting but so worth it."),
                ),
                replies=(
                    (("What did you do with the kids over the weekend?", "We went to {a}! They were so excited."),),
                    (("Did you end up going anywhere fun with the family?", "Yes, {a}! The kids didn't want to leave."),),
                ),
                whats=(
                    ("What did {N}'s kids talk about the whole drive home?", "Where did {N} have a family day with {m}'s kids?"),
                    ("Where did {N}'s family go that the kids loved every minute?", "Where did {N} spend Saturday with the kids and {m}?"),
                ),
                asks=(
                    ("What did {N}'s kids think of {a}?", "Who went with {N}'s family to {a}?"),
                    ("How did {N}'s kids like {a}?", "Who joined {N} and the kids at {a}?"),
                ),
                paraphrases=(("What did {N}'s kids think of {pa}?",), ("How did {N}'s children like {pa}?",)),
                whens=(("When did {N} take the kids to {a}?",), ("When did {N}'s family visit {a}?",)),
                multi=(("Where has {N} taken the kids?",), ("What family outings has {N} gone on?",)),
                later=(
                    ("The kids still talk about {c} every day.", "We bought a souvenir at {c} and it's on the fridge now."),
                    ("The kids keep begging to go back to {c}.", "The photos from {c} are all over our fridge."),
                ),
            ),
        ),
    ),
    Topic(
        "running",
        ("5 km", "10 km", "half marathon", "marathon"),
        gist=(("early morning runs", "training"), ("my running plan", "sore legs")),
        core=(
            ("Running has become a huge part of my life, I try to get out five mornings a week.",
             "I'm training for my next {p} and honestly running keeps my head clear."),
            ("I run almost every morning now, it's my time to think.",
             "Lacing up my shoes and hitting the road is the best part of my day, I'm aiming for a {p}."),
        ),
        inferences=(
            ("Would {N} enjoy a hiking trip?", "Is {N} someone who values fitness?"),
            ("Would {N} like a fitness watch as a gift?", "Does {N} lead an active lifestyle?"),
        ),
        chatter=(
            ("My legs are so sore after this morning's run.",
             "I need new running shoes, mine are falling apart.",
             "It was so cold on my run today that my fingers went numb.",
             "I'm trying to stretch more, my knees keep complaining.",
             "Early runs are brutal but I feel amazing afterwards.",
             "I have a new playlist for running, it's so motivating."),
            ("My calves are screaming after the hill session.",
             "My sneakers have holes in them, time for a new pair.",
             "Ran in the rain this morning and loved it, weirdly.",
             "Foam rolling is painful but it helps my legs so much.",
             "Getting up before sunrise to run is tough, but worth it.",
             "Podcasts make my long runs go by so much faster."),
        ),
        prompts=(
            ("How's the running going?", "Still getting up early to run?", "How's the training coming along?"),
            ("Are you still out on the road every morning?", "How are your legs holding up?",
             "Any new personal bests?"),
        ),
        facts=(
            Fact(
                "race",
                (("the Harbor Bridge 10K", "the Harbor Bridge race", "a city race"),
                 ("the Turkey Trot on Thanksgiving", "the Turkey Trot", "a holiday race"),
                 ("the Cherry Blossom run", "the Cherry Blossom run", "a spring race"),
                 ("a trail race up Eagle Mountain", "the Eagle Mountain race", "a hill race"),
                 ("the Glow Night run", "the Glow Night run", "an evening race"),
                 ("the charity run for the children's hospital", "the charity run", "a race for a good cause"),
                 ("the Lakeside half marathon", "the Lakeside half", "a long race"),
                 ("the Midnight Mile", "the Midnight Mile", "a short race")),
                statements=(
                    ("I did {a} {T}! Finished in {k}0 minutes and I could barely walk after.",
                     "So I ran {a} with my friend {m}. We crossed the finish line holding hands, haha."),
                    ("{T} I ran {a}. My time was {k}0 minutes, a new record for me!",
                     "Finished {a} together with {m}, my legs are jelly but I'm so proud."),
                ),
                replies=(
                    (("How did the race go?", "{a} was tough but I finished! {k}0 minutes."),),
                    (("So did you survive that race?", "Yes! {a}, and I didn't even walk once."),),
                ),
                whats=(
                    ("Which race did {N} finish in {k}0 minutes?", "What race did {N} run with {m}?"),
                    ("What race gave {N} a new record?", "What did {N} finish together with {m}?"),
                ),
                asks=(
                    ("How long did it take {N} to finish {a}?", "Who ran {a} with {N}?"),
                    ("What was {N}'s time at {a}?", "Who did {N} run {a} with?"),
                ),
                paraphrases=(("How did {N} do in {pa}?",), ("What was {N}'s time in {pa}?",)),
                whens=(("When did {N} run {a}?",), ("When did {N} take part in {a}?",)),
                multi=(("What races has {N} run?",), ("Which running events has {N} done?",)),
                later=(
                    ("I still have my medal from {c} hanging on the wall.", "{m} wants to do {c} again next year."),
                    ("My medal from {c} is on my bedroom door.", "Already thinking about signing up for {c} again."),
                ),
            ),
            Fact(
                "injury",
                (("shin splints", "shin splints", "sore legs"),
                 ("a twisted ankle", "the ankle", "a hurt joint"),
                 ("a pulled hamstring", "the hamstring", "a muscle problem"),
                 ("a blister the size of a coin", "the blister", "a foot problem"),
                 ("runner's knee", "runner's knee", "a sore joint"),
                 ("a stress fracture in the foot", "the stress fracture", "a bone problem"),
                 ("a sore Achilles tendon", "the Achilles", "a heel problem"),
                 ("a stubborn calf strain", "the calf strain", "a tight lower leg")),
                statements=(
                    ("Bad news on the running front, I've got {a} and the doctor said {k} weeks off.",
                     "I was out on a run {T} and ended up with {a}. So frustrating."),
                    ("{T} my physio told me it's {a}. No running for {k} weeks, ugh.",
                     "Turns out I have {a}, I'm going crazy not being able to run."),
                ),
                replies=(
                    (("Why haven't you been running lately?", "{a}, unfortunately. Doctor's orders to rest."),),
                    (("Are you taking a break from training?", "Have to, {a}. I'm so annoyed."),),
                ),
                whats=(
                    ("Why did the doctor tell {N} to take {k} weeks off?", "What did {N} end up with after a run?"),
                    ("What did {N}'s physio find?", "Why is {N} going crazy not being able to run?"),
                ),
                asks=(
                    ("How long did {N} have to stop running because of {a}?", "How did {N} feel about getting {a}?"),
                    ("How many weeks off did {N} need for {a}?", "How did {N} cope with {a}?"),
                ),
                paraphrases=(("How long did {N} stop running because of {pa}?",), ("How did {N} cope with {pa}?",)),
                whens=(("When did {N} get {a}?",), ("When did {N} find out about {a}?",)),
                later=(
                    ("{c} is slowly getting better, I did a short walk today.", "The physio says {c} needs another few weeks."),
                    ("Recovery from {c} is so slow, I'm going stir crazy.", "I tested {c} on a short jog, so far so good."),
                ),
                sad=True,
            ),
        ),
    ),
    Topic(
        "music",
        ("guitar", "piano", "violin", "ukulele", "drums"),
        gist=(("practicing the {p}", "learning new songs"), ("my {p}", "music practice")),
        core=(
            ("I've been playing the {p} since I was a teenager, music is my escape.",
             "Whenever I'm stressed I pick up my {p} and play for an hour, works every time."),
            ("Music has always been my thing, I practice the {p} most evenings.",
             "My {p} and I go way back, playing is how I process my feelings."),
        ),
        inferences=(
            ("Would {N} enjoy going to a live concert?", "Would {N} like lessons from a professional musician?"),
            ("Is {N} likely to join a band?", "Would {N} enjoy a music festival?"),
        ),
        chatter=(
            ("My fingers hurt from practicing so much, haha.",
             "I've been stuck on the same song for a week.",
             "I need to restring my {p}, it sounds awful.",
             "Music just makes everything feel lighter.",
             "I recorded myself playing and cringed so hard.",
             "I played for an hour tonight and forgot all my worries."),
            ("Practice went badly tonight, my hands just wouldn't cooperate.",
             "There's one tricky part of this song that I keep messing up.",
             "My {p} needs a tune-up, it's been neglected.",
             "Playing music is the only time my brain goes quiet.",
             "I listened back to a recording of myself, oof.",
             "Jammed for ages last night, it was so relaxing."),
        ),
        prompts=(
            ("Have you been playing much music lately?", "How's the {p} going?", "Learned any new songs?"),
            ("Are you still practicing every evening?", "Play anything fun on the {p} recently?",
             "How's the music coming along?"),
        ),
        facts=(
            Fact(
                "song",
                (("'Hallelujah' by Leonard Cohen", "'Hallelujah'", "a slow classic"),
                 ("'Wonderwall'", "'Wonderwall'", "a nineties hit"),
                 ("'Clair de Lune'", "'Clair de Lune'", "a classical piece"),
                 ("'Here Comes the Sun'", "'Here Comes the Sun'", "an old pop song"),
                 ("'Hotel California'", "'Hotel California'", "a rock classic"),
                 ("'Fur Elise'", "'Fur Elise'", "a piece by a famous composer"),
                 ("'Riptide' by Vance Joy", "'Riptide'", "an upbeat song"),
                 ("'Moon River'", "'Moon River'", "a song from a movie")),
                statements=(
                    ("I finally nailed {a} on the {p}! Took me {k} weeks of practice.",
                     "{T} I played {a} for my friend {m}, and they actually sang along!"),
                    ("After {k} weeks I can play {a} all the way through. So happy!",
                     "{T} I performed {a} for {m}, my hands were shaking but I did it."),
                ),
                replies=(
                    (("What have you been practicing?", "{a}! Finally got it after weeks."),),
                    (("Any new songs in your repertoire?", "Yes, {a}. Took forever to learn."),),
                ),
                whats=(
                    ("What did {N} nail on the {p}?", "What did {N} play that {m} sang along to?"),
                    ("What can {N} play all the way through after {k} weeks?", "What did {N} perform for {m}?"),
                ),
                asks=(
                    ("How long did it take {N} to learn {a}?", "Who did {N} play {a} for?"),
                    ("How many weeks did {N} practice {a}?", "Who listened to {N} play {a}?"),
                ),
                paraphrases=(("How long did {N} practice {pa}?",), ("Who heard {N} play {pa}?",)),
                whens=(("When did {N} play {a}?",), ("When did {N} perform {a}?",)),
                multi=(("What songs has {N} learned?",), ("Which pieces can {N} play?",)),
                later=(
                    ("I keep playing {c} over and over, the neighbors must hate me.", "{m} asked me to play {c} again at the next dinner."),
                    ("{c} is stuck in my head all day now.", "I played {c} for the kids and they danced."),
                ),
            ),
            Fact(
                "gig",
                (("the open mic at the Blue Door café", "the Blue Door", "an open stage"),
                 ("a cousin's wedding", "the wedding", "a family event"),
                 ("the street fair on Main Street", "the street fair", "an outdoor festival"),
                 ("a nursing home on Sunday afternoon", "the nursing home", "a place for older people"),
                 ("the school fundraiser", "the fundraiser", "a school event"),
                 ("a friend's backyard barbecue", "the barbecue", "a party at someone's house"),
                 ("the Christmas market", "the Christmas market", "a holiday event"),
                 ("a tiny jazz bar called Velvet", "Velvet", "a small club")),
                statements=(
                    ("I played my {p} at {a} {T}! My knees were shaking but people clapped.",
                     "So I performed at {a} with {m} on vocals. We played {k} songs!"),
                    ("{T} I got up and played at {a}. Terrifying but amazing.",
                     "We did a little set of {k} songs at {a}, {m} sang and I played."),
                ),
                replies=(
                    (("Did you end up playing in public?", "Yes! At {a}. I was so nervous."),),
                    (("How did your first performance go?", "{a} was packed, and it went great!"),),
                ),
                whats=(
                    ("Where did {N} play the {p} with shaking knees?", "Where did {N} perform with {m} on vocals?"),
                    ("Where did {N} get up and play?", "Where did {N} do a set of {k} songs?"),
                ),
                asks=(
                    ("How many songs did {N} play at {a}?", "Who sang when {N} played at {a}?"),
                    ("How did {N} feel playing at {a}?", "Who performed with {N} at {a}?"),
                ),
                paraphrases=(("How many songs did {N} play at {pa}?",), ("Who performed with {N} at {pa}?",)),
                whens=(("When did {N} perform at {a}?",), ("When did {N} play music at {a}?",)),
                multi=(("Where has {N} performed?",), ("Where has {N} played music in public?",)),
                later=(
                    ("Someone from {c} asked me to come back and play again.", "I watched the video from {c}, I look so nervous, haha."),
                    ("They invited me back to {c} next month!", "Rewatched the clip from {c}, not bad actually."),
                ),
            ),
        ),
    ),
    Topic(
        "cooking",
        ("baking bread", "Italian food", "Thai food", "baking cakes", "Mexican food"),
        gist=(("cooking experiments", "trying new recipes"), ("the kitchen", "baking")),
        core=(
            ("I've gotten really into cooking lately, especially {p}. The kitchen is my happy place.",
             "Cooking for people I love is my favorite thing, and {p} is my specialty."),
            ("These days I'm always in the kitchen trying new recipes, mostly {p}.",
             "Food is how I show love, and lately I'm all about {p}."),
        ),
        inferences=(
            ("Would {N} enjoy a cooking class?", "Would {N} like a new cookbook as a gift?"),
            ("Is {N} likely to try a new restaurant?", "Would {N} enjoy a food festival?"),
        ),
        chatter=(
            ("I burned dinner tonight, we ordered pizza instead.",
             "My kitchen looks like a tornado went through it.",
             "I bought way too many spices at the market.",
             "Cooking is so relaxing after a long day.",
             "I keep watching cooking videos at midnight.",
             "I tried a new recipe and it was a total flop, haha."),
            ("Smoke alarm went off while I was cooking again, classic.",
             "Every pot I own is dirty right now.",
             "I have a whole drawer of spices I never use.",
             "Chopping vegetables is weirdly meditative for me.",
             "I fell down a rabbit hole of recipe videos last night.",
             "Not every experiment in the kitchen works out, today was proof."),
        ),
        prompts=(
            ("Cooked anything good lately?", "What's on the menu this week?", "How's the cooking going?"),
            ("Any new recipes to share?", "What have you been making in the kitchen?",
             "Still experimenting with {p}?"),
        ),
        facts=(
            Fact(
                "dish",
                (("a lemon meringue pie", "the meringue pie", "a dessert"),
                 ("homemade ramen", "the ramen", "a soup"), ("a three-layer chocolate cake", "the chocolate cake", "a dessert"),
                 ("sourdough with rosemary", "the sourdough", "some bread"), ("a huge pot of chili", "the chili", "a stew"),
                 ("fresh pasta with pesto", "the pesto pasta", "an Italian dish"),
                 ("cinnamon rolls", "the cinnamon rolls", "some pastries"), ("a vegetable lasagna", "the lasagna", "a baked dish")),
                statements=(
                    ("I made {a} {T} and it came out perfect! Even {m} asked for seconds.",
                     "Weekend project: {a}. It took {k} hours but wow, so good."),
                    ("{T} I tried making {a} for the first time, and honestly it was delicious!",
                     "Spent {k} hours making {a}, and {m} said it was the best they'd ever had."),
                ),
                replies=(
                    (("What did you end up cooking for the party?", "{a}! Everyone loved it."),),
                    (("What was that amazing thing in your photo?", "{a}, my first try!"),),
                ),
                whats=(
                    ("What did {N} make that {m} asked for seconds of?", "What was {N}'s weekend project?"),
                    ("What did {N} try making for the first time?", "What did {m} call the best they'd ever had?"),
                ),
                asks=(
                    ("Who asked for seconds when {N} made {a}?", "How long did {N} spend making {a}?"),
                    ("What did {m} think when {N} made {a}?", "How many hours did {N} need to make {a}?"),
                ),
                paraphrases=(("How did it turn out when {N} made {pa}?",), ("How long did it take {N} to cook {pa}?",)),
                whens=(("When did {N} make {a}?",), ("When did {N} cook {a}?",)),
                multi=(("What dishes has {N} made?",), ("What has {N} cooked recently?",)),
                later=(
                    ("I made {c} again, even better the second time.", "Everyone keeps asking me for the recipe for {c}."),
                    ("{c} is now a weekly thing in our house.", "{m} begged me to make {c} again."),
                ),
            ),
            Fact(
                "class",
                (("a sushi-making class", "the sushi class", "an Asian cooking class"),
                 ("a French pastry workshop", "the pastry workshop", "a baking class"),
                 ("a knife skills course", "the knife course", "a technique class"),
                 ("a cheese-making workshop", "the cheese workshop", "a workshop on dairy"),
                 ("a dumpling class in Chinatown", "the dumpling class", "an Asian cooking class"),
                 ("a barbecue masterclass", "the barbecue class", "a grilling class"),
                 ("a cake decorating course", "the cake course", "a baking class"),
                 ("a vegan cooking class", "the vegan class", "a healthy cooking class")),
                statements=(
                    ("I signed up for {a}! First session was {T} and I loved it.",
                     "So I took {a} with my friend {m}, we laughed the whole time."),
                    ("{T} I went to {a}. I learned so much in {k} hours!",
                     "Went to {a} with {m}, and now I want to quit my job and cook full time, haha."),
                ),
                replies=(
                    (("How was that class you signed up for?", "{a} was so fun! Learned a ton."),),
                    (("What did you do on Saturday?", "{a}! Best Saturday in ages."),),
                ),
                whats=(
                    ("What did {N} sign up for?", "What did {N} take with {m}?"),
                    ("Where did {N} learn so much in {k} hours?", "What made {N} want to cook full time?"),
                ),
                asks=(
                    ("Who went to {a} with {N}?", "What did {N} think of {a}?"),
                    ("Who joined {N} at {a}?", "How did {N} like {a}?"),
                ),
                paraphrases=(("What did {N} think of {pa}?",), ("Who joined {N} for {pa}?",)),
                whens=(("When did {N} take {a}?",), ("When did {N} go to {a}?",)),
                later=(
                    ("I've been practicing what I learned at {c} every weekend.", "{m} and I want to sign up for another round of {c}."),
                    ("Still using tricks from {c} every time I cook.", "Thinking about a second round of {c}."),
                ),
            ),
        ),
    ),
    Topic(
        "travel",
        ("road trips", "beach holidays", "backpacking trips", "city breaks", "camping trips abroad"),
        gist=(("planning the next trip", "flight searches"), ("travel plans", "my bucket list")),
        core=(
            ("Traveling is my biggest passion, I'm always planning the next trip. {p} are my favorite.",
             "I save every spare penny for travel, seeing new places keeps me alive. Especially {p}."),
            ("I get restless if I don't travel for a few months, {p} are my thing.",
             "Exploring new places is what I live for, honestly, mostly {p}."),
        ),
        inferences=(
            ("Would {N} enjoy a job that involves travel?", "Would {N} like a travel guidebook as a gift?"),
            ("Is {N} likely to go abroad next year?", "Would {N} enjoy a month-long trip overseas?"),
        ),
        chatter=(
            ("I've been looking at flights way too much this week.",
             "My suitcase is still not unpacked from the last trip, oops.",
             "Jet lag is hitting me hard right now.",
             "I have a whole list of places I want to see before I'm forty.",
             "Airports are so stressful, but I love the feeling of taking off.",
             "I made a photo album of all my trips, it's huge now."),
            ("Flight prices are crazy right now, I keep checking anyway.",
             "My bag from the last trip is still sitting in the hallway.",
             "Still adjusting to the time difference, I'm a zombie.",
             "My travel bucket list keeps getting longer.",
             "Packing is the worst part of any trip.",
             "I printed my favorite travel photos and put them on the wall."),
        ),
        prompts=(
            ("Any trips planned?", "Where are you off to next?", "Are you still dreaming about traveling?"),
            ("Got any travel plans coming up?", "What's the next destination?", "How was your last getaway?"),
        ),
        facts=(
            Fact(
                "trip",
                (("Lisbon", "Lisbon", "a European city"), ("the Grand Canyon", "the Grand Canyon", "a national park"),
                 ("Kyoto", "Kyoto", "an Asian city"), ("Iceland", "Iceland", "a cold country"),
                 ("the Amalfi Coast", "Amalfi", "a coastline in Europe"), ("Banff", "Banff", "a mountain town"),
                 ("Marrakech", "Marrakech", "an African city"), ("the Scottish Highlands", "Scotland", "a mountainous region")),
                statements=(
                    ("Just got back from {a}! {k} days of pure magic, I didn't want to leave.",
                     "{T} we booked a trip to {a} with {m}. I can't stop smiling."),
                    ("We spent {k} days in {a} and it was everything I dreamed of.",
                     "{T} I got home from {a}. {m} and I walked everywhere, my feet hate me."),
                ),
                replies=(
                    (("Where did you go on vacation? You were quiet for a while.", "{a}! It was unreal."),),
                    (("So how was the big trip?", "{a} was incredible, I want to move there."),),
                ),
                whats=(
                    ("Where did {N} spend {k} days of pure magic?", "Where did {N} book a trip with {m}?"),
                    ("Where did {N} spend {k} days?", "Where did {N} and {m} walk everywhere?"),
                ),
                asks=(
                    ("How many days did {N} spend in {a}?", "Who traveled with {N} to {a}?"),
                    ("How long was {N}'s trip to {a}?", "Who went to {a} with {N}?"),
                ),
                paraphrases=(("How many days did {N} spend in {pa}?",), ("Who went with {N} to {pa}?",)),
                whens=(("When did {N} go to {a}?",), ("When did {N} travel to {a}?",)),
                multi=(("Where has {N} traveled?",), ("What places has {N} visited?",)),
                later=(
                    ("I miss {c} so much, I keep looking at the photos.", "I'm already planning to go back to {c}."),
                    ("My screensaver is a picture from {c} now.", "I'd move to {c} in a heartbeat."),
                ),
            ),
            Fact(
                "mishap",
                (("losing the passport at the airport", "the lost passport", "a problem with documents"),
                 ("missing the connecting flight", "the missed flight", "a problem with flights"),
                 ("getting food poisoning from street food", "the food poisoning", "getting sick"),
                 ("the rental car breaking down in the desert", "the rental car", "car trouble"),
                 ("the hotel giving away the room", "the hotel mix-up", "a booking problem"),
                 ("a suitcase ending up in another country", "the lost suitcase", "a luggage problem"),
                 ("getting caught in a huge thunderstorm", "the thunderstorm", "bad weather"),
                 ("a phone falling into the sea", "the phone in the sea", "losing a phone")),
                statements=(
                    ("Travel disaster story: {a}! We laugh about it now but I panicked.",
                     "{T}, on the trip, the low point was {a}. {m} had to calm me down."),
                    ("The trip had one disaster: {a}. Can you believe that?",
                     "Not my finest travel moment {T}, {a}, haha."),
                ),
                replies=(
                    (("Anything go wrong on the trip?", "Oh, {a}. Total nightmare."),),
                    (("Was the trip smooth?", "Not exactly, {a}!"),),
                ),
                whats=(
                    ("What is {N}'s travel disaster story?", "What was the low point of {N}'s trip?"),
                    ("What was the one disaster on {N}'s trip?", "What was not {N}'s finest travel moment?"),
                ),
                asks=(
                    ("How did {N} react to {a}?", "Who calmed {N} down after {a}?"),
                    ("What happened to {N} after {a}?", "How does {N} feel now about {a}?"),
                ),
                paraphrases=(("What did {N} do about {pa} on the trip?",), ("How did {N} react to {pa} while traveling?",)),
                whens=(("When did {N} talk about {a}?",), ("When did {N} tell the story of {a}?",)),
                later=(
                    ("We still laugh about {c} at every family dinner.", "I'm much more careful on trips since {c}."),
                    ("{c} has become our favorite travel story.", "Lesson learned from {c}, believe me."),
                ),
                sad=True,
            ),
        ),
    ),
    Topic(
        "health",
        ("back pain", "asthma", "knee pain", "anxiety", "chronic fatigue", "eczema"),
        gist=(("doctor's appointments", "the {p}"), ("my health stuff", "appointments")),
        core=(
            ("I've been dealing with {p} for years, some weeks are really hard.",
             "My health has been up and down, the {p} never fully goes away."),
            ("Living with {p} is exhausting, but I'm learning to manage it.",
             "The {p} has been flaring up again, it's been a tough stretch."),
        ),
        inferences=(
            ("Is {N} careful about health?", "Would {N} appreciate a meditation app?"),
            ("Does {N} take health seriously?", "Would {N} enjoy a spa weekend to recover?"),
        ),
        chatter=(
            ("Not feeling my best today, but hanging in there.",
             "I've been trying to drink more water, it actually helps.",
             "Slept terribly again last night.",
             "Some days my body just says no.",
             "I'm trying to be kinder to myself on the bad days.",
             "Rest days are important, I keep reminding myself."),
            ("Kind of a rough day health-wise, but I'm okay.",
             "I'm sleeping a bit better since I stopped looking at my phone at night.",
             "Woke up tired again, it's been a pattern.",
             "My energy is really low this week.",
             "I'm learning not to feel guilty about resting.",
             "Listening to my body is a full-time job lately."),
        ),
        prompts=(
            ("How are you feeling these days?", "Is the {p} any better?", "Are you taking care of yourself?"),
            ("How's your health been?", "Still struggling with the {p}?", "Any better this week?"),
        ),
        facts=(
            Fact(
                "treatment",
                (("acupuncture", "acupuncture", "an alternative therapy"), ("a new medication", "the medication", "a prescription"),
                 ("physical therapy twice a week", "physical therapy", "regular exercises"),
                 ("a gluten-free diet", "the gluten-free diet", "a diet change"), ("meditation every morning", "meditation", "a daily habit"),
                 ("a specialist in the city", "the specialist", "a new doctor"),
                 ("swimming laps twice a week", "swimming", "a sport"), ("a sleep clinic", "the sleep clinic", "a clinic")),
                statements=(
                    ("I started {a} {T}, and I think it's helping? Fingers crossed.",
                     "My doctor, Dr. {m}, suggested {a}. It's been {k} weeks and I feel a bit better."),
                    ("{T} I began {a} for the {p}. Early days, but I'm hopeful.",
                     "After {k} weeks of {a} the {p} is calmer, Dr. {m} is pleased."),
                ),
                replies=(
                    (("Have you tried anything new for it?", "{a}, actually. So far so good."),),
                    (("Did the doctor suggest anything?", "Yes, {a}. I'm giving it a real try."),),
                ),
                whats=(
                    ("What did {N} start that might be helping?", "What did Dr. {m} suggest to {N}?"),
                    ("What did {N} begin for the {p}?", "What has made {N}'s {p} calmer?"),
                ),
                asks=(
                    ("Who suggested {a} to {N}?", "How long has {N} been trying {a}?"),
                    ("Which doctor recommended {a} to {N}?", "How is {a} working for {N}?"),
                ),
                paraphrases=(("How is {pa} working for {N}?",), ("Who suggested {pa} to {N}?",)),
                whens=(("When did {N} start {a}?",), ("When did {N} begin {a}?",)),
                multi=(("What treatments has {N} tried?",), ("What has {N} done for their health?",)),
                later=(
                    ("Still doing {c}, some weeks are better than others.", "Not sure {c} is working, I'll ask the doctor."),
                    ("Keeping up with {c}, slowly seeing results.", "{c} is a hassle but I think it helps."),
                ),
            ),
            Fact(
                "scare",
                (("an ambulance ride after fainting at the mall", "the ambulance ride", "an emergency"),
                 ("a night in the emergency room", "the emergency room", "a hospital visit"),
                 ("a scan that showed nothing serious", "the scan", "a test"),
                 ("stitches after a kitchen knife slipped", "the stitches", "an accident at home"),
                 ("an allergic reaction to shellfish", "the shellfish reaction", "a reaction to food"),
                 ("a bad fall on the icy stairs", "the fall", "an accident outside"),
                 ("a high fever for three days", "the fever", "an illness"),
                 ("a minor surgery on the shoulder", "the shoulder surgery", "an operation")),
                statements=(
                    ("Scary week: I ended up with {a}. I'm okay now, just shaken.",
                     "{T} I had {a}. {m} drove me and stayed the whole time."),
                    ("So that was frightening, {a} {T}. All fine now, thankfully.",
                     "I had {a}, and my friend {m} never left my side."),
                ),
                replies=(
                    (("Are you okay? I heard something happened.", "{a}, but I'm fine now. Just scared."),),
                    (("Why were you offline last week?", "Ugh, {a}. Better now though."),),
                ),
                whats=(
                    ("What happened during {N}'s scary week?", "Why did {m} drive {N} and stay the whole time?"),
                    ("What frightening thing happened to {N}?", "Why did {m} never leave {N}'s side?"),
                ),
                asks=(
                    ("Who stayed with {N} after {a}?", "How did {N} feel after {a}?"),
                    ("Who looked after {N} after {a}?", "How is {N} doing since {a}?"),
                ),
                paraphrases=(("Who looked after {N} after {pa}?",), ("How did {N} feel after {pa}?",)),
                whens=(("When did {N} have {a}?",), ("When did {N} go through {a}?",)),
                later=(
                    ("Had a follow-up appointment after {c}, all clear.", "Still a bit shaken when I think about {c}."),
                    ("The doctor checked on me after {c}, everything looks fine.", "I think about {c} more than I'd like."),
                ),
                sad=True,
            ),
        ),
    ),
    Topic(
        "volunteering",
        ("the food bank", "an animal shelter", "a youth center", "a community garden", "a homeless shelter"),
        gist=(("volunteering at {p}", "fundraising"), ("shifts at {p}", "charity work")),
        core=(
            ("I volunteer at {p} every week, giving back really matters to me.",
             "Helping out at {p} gives me so much purpose, it's the highlight of my week."),
            ("My Saturdays belong to {p}, I've been volunteering there for ages.",
             "Giving time to {p} keeps me grounded, the people there are amazing."),
        ),
        inferences=(
            ("Does {N} care about the community?", "Would {N} join a charity fundraiser?"),
            ("Is {N} likely to donate to a local cause?", "Would {N} help organize a neighborhood cleanup?"),
        ),
        chatter=(
            ("Long shift at {p} today but it felt good.",
             "We're always short on volunteers, it's a constant struggle.",
             "The people I meet volunteering have such amazing stories.",
             "Giving back is the best way I know to feel useful.",
             "I'm so tired but so happy after volunteering.",
             "Some days at {p} are hard emotionally."),
            ("Spent the afternoon at {p}, exhausted but fulfilled.",
             "We desperately need more helpers, if you know anyone.",
             "I met someone at {p} today with the most incredible life story.",
             "Volunteering reminds me how lucky I am.",
             "My back hurts from lifting boxes but my heart is full.",
             "Not every day volunteering is easy, today was heavy."),
        ),
        prompts=(
            ("How's the volunteering going?", "Still helping out at {p}?", "Anything new at {p}?"),
            ("Are you still spending Saturdays at {p}?", "How are things at the shelter and all that?",
             "How's your charity work going?"),
        ),
        facts=(
            Fact(
                "event",
                (("a bake sale", "the bake sale", "a food sale"), ("a winter coat drive", "the coat drive", "a clothing collection"),
                 ("a charity auction", "the auction", "a fundraiser"), ("a toy drive for the holidays", "the toy drive", "a holiday collection"),
                 ("a park cleanup", "the cleanup", "an outdoor project"), ("a 24-hour dance marathon", "the dance marathon", "a long event"),
                 ("a book sale", "the book sale", "a sale"), ("a pancake breakfast", "the pancake breakfast", "a breakfast")),
                statements=(
                    ("We organized {a} for {p} {T} and raised {k}00 dollars!",
                     "I helped run {a} with {m}, and we collected way more than we expected."),
                    ("{T} {p} held {a}, and I coordinated the volunteers. We raised {k}00 dollars!",
                     "Our team, led by {m}, put on {a}. It was a huge success."),
                ),
                replies=(
                    (("How did the fundraiser go?", "{a} was a hit, we raised so much!"),),
                    (("What was the big event you were planning?", "{a}! And it went brilliantly."),),
                ),
                whats=(
                    ("What did {N} organize for {p}?", "What did {N} help run with {m}?"),
                    ("What did {p} hold when {N} coordinated the volunteers?", "What did {m}'s team put on?"),
                ),
                asks=(
                    ("How much money did {N} raise with {a}?", "Who helped {N} run {a}?"),
                    ("How much did {a} raise for {N}'s charity?", "Who led the team at {a} with {N}?"),
                ),
                paraphrases=(("How much did {N} raise by {pa}?",), ("Who helped {N} with {pa}?",)),
                whens=(("When did {N} organize {a}?",), ("When did {N} help with {a}?",)),
                multi=(("What fundraising events has {N} helped with?",), ("What charity events has {N} run?",)),
                later=(
                    ("We're already planning to repeat {c} next year.", "People keep thanking me for {c}, it's sweet."),
                    ("{c} was such a success we're doing it again.", "I still get messages about {c}."),
                ),
            ),
        ),
    ),
    Topic(
        "books",
        ("mystery novels", "fantasy series", "memoirs", "science fiction", "poetry"),
        gist=(("reading", "my book pile"), ("books", "late-night reading")),
        core=(
            ("I'm a huge reader, especially {p}. I always have a book in my bag.",
             "Reading before bed is my ritual, lately it's all {p}."),
            ("I devour books, {p} mostly, I can't fall asleep without reading.",
             "Books have always been my comfort, I'm obsessed with {p} right now."),
        ),
        inferences=(
            ("Would {N} enjoy joining a book club?", "Would {N} like a library membership?"),
            ("Would {N} appreciate a bookstore gift card?", "Is {N} likely to go to an author reading?"),
        ),
        chatter=(
            ("I stayed up way too late reading again.",
             "My to-read pile is out of control.",
             "Nothing beats a rainy day with a good book.",
             "I bought three more books even though I haven't finished the last ones.",
             "Reading really helps me switch off.",
             "I love the smell of old books, is that weird?"),
            ("Couldn't put my book down last night, I'm so tired now.",
             "My bookshelf is overflowing, I need another one.",
             "Rainy weekends are made for reading.",
             "I keep buying books faster than I can read them.",
             "A good book is the best escape from a bad week.",
             "Second-hand bookstores are my weakness."),
        ),
        prompts=(
            ("Read anything good lately?", "What are you reading these days?", "Still devouring {p}?"),
            ("Any book recommendations?", "What's on your nightstand right now?", "Finished any good books?"),
        ),
        facts=(
            Fact(
                "read",
                (("'The Night Circus'", "'The Night Circus'", "a fantasy novel"),
                 ("'Educated' by Tara Westover", "'Educated'", "a memoir"),
                 ("'Dune'", "'Dune'", "a science fiction classic"),
                 ("'Where the Crawdads Sing'", "'Where the Crawdads Sing'", "a bestseller"),
                 ("'The Hobbit'", "'The Hobbit'", "a fantasy classic"),
                 ("'Becoming' by Michelle Obama", "'Becoming'", "a memoir"),
                 ("'Project Hail Mary'", "'Project Hail Mary'", "a science fiction novel"),
                 ("'Little Women'", "'Little Women'", "a classic novel")),
                statements=(
                    ("I just finished {a} and wow, I cried at the end. {m} recommended it.",
                     "Reading {a} right now, I'm {k}0 pages in and already hooked."),
                    ("{T} I finished {a}. It completely wrecked me, in a good way.",
                     "{m} lent me {a} and I read it in {k} days, couldn't stop."),
                ),
                replies=(
                    (("What book are you on now?", "{a}! I can't put it down."),),
                    (("Finish anything good recently?", "{a}, it was incredible."),),
                ),
                whats=(
                    ("What book made {N} cry at the end?", "What is {N} reading right now?"),
                    ("What book completely wrecked {N}?", "What did {m} lend {N}?"),
                ),
                asks=(
                    ("Who recommended {a} to {N}?", "What did {N} think of {a}?"),
                    ("Who lent {N} a copy of {a}?", "How did {N} feel about {a}?"),
                ),
                paraphrases=(("What did {N} think of {pa}?",), ("Who gave {N} {pa}?",)),
                whens=(("When did {N} read {a}?",), ("When did {N} finish {a}?",)),
                multi=(("What books has {N} read?",), ("Which books has {N} finished?",)),
                later=(
                    ("I'm rereading {c}, it's even better the second time.", "I lent {c} to {m}, I hope they love it."),
                    ("Can't stop recommending {c} to everyone.", "{m} borrowed my copy of {c}."),
                ),
            ),
        ),
    ),
    Topic(
        "garden",
        ("tomatoes", "roses", "herbs", "succulents", "vegetables"),
        gist=(("the garden", "weeding"), ("my plants", "the vegetable beds")),
        core=(
            ("My garden is my pride and joy, I spend hours out there with my {p}.",
             "Gardening keeps me grounded, there's nothing like growing your own {p}."),
            ("I'm out in the garden every spare minute, the {p} are thriving.",
             "Getting my hands in the dirt is my therapy, especially with the {p}."),
        ),
        inferences=(
            ("Would {N} enjoy visiting a botanical garden?", "Would {N} like a gift of seeds?"),
            ("Is {N} likely to go to a flower show?", "Would {N} enjoy living in the countryside?"),
        ),
        chatter=(
            ("I've got dirt under my fingernails permanently now.",
             "The snails are eating everything, I'm losing the war.",
             "Watering the garden at sunset is my favorite part of the day.",
             "I spent all morning pulling weeds, my back hurts.",
             "The {p} need more sun than this yard gets.",
             "There's something magical about watching things grow."),
            ("My hands are permanently green, haha.",
             "The slugs got into the beds again, I'm furious.",
             "Evening watering is my little ritual.",
             "Weeding is endless, I swear they grow back overnight.",
             "The {p} are struggling with this heat.",
             "Seeing the first sprouts come up still makes me giddy."),
        ),
        prompts=(
            ("How's the garden?", "Are the {p} doing well?", "Got any veggies yet?"),
            ("How's everything growing?", "Is the garden surviving the weather?", "Still fighting the slugs?"),
        ),
        facts=(
            Fact(
                "harvest",
                (("a pumpkin that weighed twenty pounds", "the pumpkin", "a big vegetable"),
                 ("a whole basket of strawberries", "the strawberries", "some fruit"),
                 ("a sunflower over six feet tall", "the giant sunflower", "a tall plant"),
                 ("a bucket of green beans", "the green beans", "some vegetables"),
                 ("purple carrots", "the purple carrots", "some vegetables"),
                 ("the first lemon from the little potted tree", "the lemon", "some fruit"),
                 ("a blue ribbon rose", "the blue ribbon rose", "a flower"),
                 ("a zucchini as long as an arm", "the zucchini", "a big vegetable")),
                statements=(
                    ("Look at this, {a}! The garden really came through {T}.",
                     "So proud, I grew {a}. My neighbor {m} came over to take a photo."),
                    ("{T} I harvested {a}, I was jumping around the yard.",
                     "Guess who grew {a}? Me! {m} couldn't believe it."),
                ),
                replies=(
                    (("Did the garden give you anything this year?", "{a}! Best season yet."),),
                    (("What's that you're holding in your picture?", "{a}, straight from my garden!"),),
                ),
                whats=(
                    ("What did {N}'s garden produce?", "What did {N} grow that {m} came to photograph?"),
                    ("What did {N} harvest?", "What did {N} grow that {m} couldn't believe?"),
                ),
                asks=(
                    ("Who came over to see when {N} grew {a}?", "How did {N} feel about growing {a}?"),
                    ("What did {m} think when {N} grew {a}?", "How did {N} react to harvesting {a}?"),
                ),
                paraphrases=(("How did {N} feel about growing {pa}?",), ("Who came to see when {N} grew {pa}?",)),
                whens=(("When did {N} grow {a}?",), ("When did {N} harvest {a}?",)),
                multi=(("What has {N} grown in the garden?",), ("What has {N} harvested?",)),
                later=(
                    ("I'm still so proud of {c}, I show everyone the photo.", "The neighbors are still talking about {c}."),
                    ("My photo of {c} got so many likes, haha.", "Everyone at work heard about {c}, I'm insufferable."),
                ),
            ),
        ),
    ),
    Topic(
        "house",
        ("the kitchen", "the bathroom", "the basement", "the attic", "the backyard deck"),
        gist=(("the renovation", "trips to the hardware store"), ("fixing up the house", "DIY projects")),
        core=(
            ("We bought an old house and we're fixing it up ourselves, right now it's {p}.",
             "The renovation never ends, this month it's {p}. I love it though."),
            ("Our fixer-upper is a money pit but I adore it, we're redoing {p}.",
             "Every weekend is a DIY weekend lately, currently {p}."),
        ),
        inferences=(
            ("Would {N} enjoy a home improvement show?", "Is {N} handy with tools?"),
            ("Would {N} like a gift card for a hardware store?", "Would {N} enjoy a woodworking class?"),
        ),
        chatter=(
            ("There's sawdust in every corner of the house.",
             "Home renovations cost double what you plan, always.",
             "I spent my whole Saturday at the hardware store.",
             "The house is a mess but it's slowly coming together.",
             "I never thought I'd have opinions about tiles.",
             "My arms are sore from sanding all weekend."),
            ("Everything in the house is covered in dust right now.",
             "The renovation budget is a fantasy at this point.",
             "I basically live at the hardware store now.",
             "Half the house is a construction zone.",
             "I can talk for hours about paint colors now, help.",
             "Sanded the floors all weekend, I can't lift my arms."),
        ),
        prompts=(
            ("How's the house project going?", "Is {p} done yet?", "How's the renovation?"),
            ("Still fixing up the house?", "Any progress on {p}?", "Is the house livable yet?"),
        ),
        facts=(
            Fact(
                "fixed",
                (("new hardwood floors", "the hardwood floors", "new flooring"), ("a tiled backsplash", "the backsplash", "something in the kitchen"),
                 ("a built-in bookshelf", "the bookshelf", "some storage"), ("a brand new roof", "the roof", "something on top of the house"),
                 ("a vintage clawfoot tub", "the clawfoot tub", "something in the bathroom"), ("skylights in the hallway", "the skylights", "more light"),
                 ("a brick fire pit", "the fire pit", "something for the yard"), ("a window seat", "the window seat", "a cozy corner")),
                statements=(
                    ("We finally put in {a}! It took {k} weekends but it looks amazing.",
                     "{T} my friend {m} helped me install {a}. Total game changer."),
                    ("After {k} weekends of work, {a} is finally in!",
                     "{m} came over {T} and we put in {a}. I'm so happy with it."),
                ),
                replies=(
                    (("What's the latest with the house?", "{a}! Finally done."),),
                    (("Any progress since last time?", "Yes, {a}, come see it sometime!"),),
                ),
                whats=(
                    ("What did {N} put in that took {k} weekends?", "Which friend helped {N} install something?"),
                    ("What is finally in after {k} weekends of work at {N}'s place?", "What did {N} and {m} put in?"),
                ),
                asks=(
                    ("How long did it take {N} to put in {a}?", "Who helped {N} install {a}?"),
                    ("How many weekends did {a} take {N}?", "Who helped {N} with {a}?"),
                ),
                paraphrases=(("Who helped {N} put in {pa}?",), ("How long did {N} spend on {pa}?",)),
                whens=(("When did {N} install {a}?",), ("When did {N} finish {a}?",)),
                multi=(("What has {N} added to the house?",), ("What improvements has {N} made to the house?",)),
                later=(
                    ("I can't stop admiring {c}, it changed the whole room.", "{m} came over and couldn't believe {c}."),
                    ("{c} still makes me happy every morning.", "Every guest comments on {c} now."),
                ),
            ),
        ),
    ),
    Topic(
        "studies",
        ("nursing", "psychology", "Spanish", "web design", "accounting"),
        gist=(("classes", "homework"), ("studying", "assignments")),
        core=(
            ("I went back to school part-time to study {p}, it's tough but I love learning again.",
             "Studying {p} at night after work is exhausting, but it's my dream."),
            ("I'm taking evening classes in {p}, juggling it all is a lot.",
             "Going back to study {p} was the best decision I've made in years."),
        ),
        inferences=(
            ("Is {N} ambitious?", "Would {N} consider getting a master's degree?"),
            ("Does {N} enjoy learning new things?", "Would {N} go to an education fair?"),
        ),
        chatter=(
            ("I have so much homework, I feel like a teenager again.",
             "Studying at the kitchen table at midnight is my life now.",
             "My classmates are so much younger than me, haha.",
             "Coffee is the only thing getting me through this semester.",
             "I forgot how hard exams are.",
             "Learning something new at my age feels amazing."),
            ("Drowning in assignments this week.",
             "Late-night study sessions are becoming a habit.",
             "Everyone in my class could be my kid, it's funny.",
             "I've had four coffees today and it's only noon, study life.",
             "Exam season is brutal.",
             "It's never too late to learn, I really believe that now."),
        ),
        prompts=(
            ("How are classes going?", "How's the {p} course?", "Surviving the semester?"),
            ("How's school treating you?", "Still studying every night?", "How's the {p} program going?"),
        ),
        facts=(
            Fact(
                "exam",
                (("the statistics final", "the statistics final", "a math exam"),
                 ("the first oral presentation", "the oral presentation", "a presentation"),
                 ("the anatomy midterm", "the anatomy midterm", "a science exam"),
                 ("a group project on climate change", "the climate project", "a group assignment"),
                 ("the certification exam", "the certification exam", "an exam"),
                 ("a research paper on sleep", "the sleep paper", "a paper"),
                 ("the practical skills test", "the skills test", "a test"),
                 ("the end-of-year portfolio", "the portfolio", "a final assignment")),
                statements=(
                    ("I passed {a}! Got {k}0 percent and I'm still in shock.",
                     "{T} I had {a}. {m} from my class helped me prepare, thank goodness."),
                    ("Results are in: {a} went great, {k}0 percent!",
                     "{T} was {a}. Studied with {m} for days, and I think it went well."),
                ),
                replies=(
                    (("How did the big test go?", "{a}, passed! So relieved."),),
                    (("Did you get your results back?", "Yes! {a}, and I did really well."),),
                ),
                whats=(
                    ("What did {N} pass with {k}0 percent?", "What did {m} help {N} prepare for?"),
                    ("What went great for {N}?", "What did {N} study for with {m}?"),
                ),
                asks=(
                    ("What score did {N} get on {a}?", "Who helped {N} prepare for {a}?"),
                    ("How well did {N} do on {a}?", "Who studied with {N} for {a}?"),
                ),
                paraphrases=(("How well did {N} do on {pa}?",), ("Who helped {N} get ready for {pa}?",)),
                whens=(("When did {N} take {a}?",), ("When did {N} have {a}?",)),
                multi=(("What exams has {N} passed?",), ("What has {N} completed at school?",)),
                later=(
                    ("I framed my results from {c}, is that silly?", "{m} and I celebrated {c} with pizza."),
                    ("Still riding the high from {c}.", "My family keeps bringing up {c}, so embarrassing."),
                ),
            ),
        ),
    ),
    Topic(
        "outdoors",
        ("camping", "hiking", "kayaking", "fishing", "rock climbing"),
        gist=(("weekend trips outdoors", "{p}"), ("getting outside", "{p}")),
        core=(
            ("Being outdoors is where I feel most alive, {p} every chance I get.",
             "I'm happiest out in nature, {p} is my favorite way to spend a weekend."),
            ("Weekends are for {p}, I need the fresh air to stay sane.",
             "Nature recharges me like nothing else, especially {p}."),
        ),
        inferences=(
            ("Would {N} enjoy a national park vacation?", "Would {N} like a new tent as a present?"),
            ("Is {N} an outdoorsy person?", "Would {N} prefer a cabin in the woods to a city hotel?"),
        ),
        chatter=(
            ("I got so many mosquito bites last weekend.",
             "Nothing beats the smell of a campfire.",
             "I need new hiking boots, mine are done.",
             "Being in the woods resets my whole brain.",
             "I checked the weather ten times for this weekend.",
             "Sleeping under the stars is the best sleep I get."),
            ("The bugs were vicious out there, I'm covered in bites.",
             "My clothes still smell like smoke from the fire, I love it.",
             "My boots finally gave up, time for new ones.",
             "Time in nature is the best medicine.",
             "I'm obsessively watching the forecast for the weekend.",
             "There's nothing like the silence of the forest at night."),
        ),
        prompts=(
            ("Been out in nature lately?", "How was the weekend outdoors?", "Any {p} plans?"),
            ("Have you been outside much?", "Where's your next adventure?", "Still doing lots of {p}?"),
        ),
        facts=(
            Fact(
                "spot",
                (("Pine Lake", "Pine Lake", "a lake"), ("Bear Creek Trail", "Bear Creek", "a trail"),
                 ("Crystal Falls", "Crystal Falls", "a waterfall"), ("Red Rock Canyon", "Red Rock", "a canyon"),
                 ("Moose Island", "Moose Island", "an island"), ("Silver Ridge", "Silver Ridge", "a mountain"),
                 ("Otter Bay", "Otter Bay", "the coast"), ("Hidden Valley campground", "Hidden Valley", "a campground")),
                statements=(
                    ("We spent the weekend at {a}! Saw a bald eagle and everything.",
                     "{T} I went to {a} with {m}, {k} hours outside and my soul is healed."),
                    ("{T} we went up to {a}, the views were unreal.",
                     "{m} and I spent {k} hours at {a}. I didn't want to come home."),
                ),
                replies=(
                    (("Where did you go this weekend?", "{a}! So beautiful."),),
                    (("What were those gorgeous photos you posted?", "From {a}, it was magical."),),
                ),
                whats=(
                    ("Where did {N} see a bald eagle?", "Where did {N} spend {k} hours outside with {m}?"),
                    ("Where did {N} go that had unreal views?", "Where did {N} and {m} spend {k} hours?"),
                ),
                asks=(
                    ("What did {N} see at {a}?", "Who went to {a} with {N}?"),
                    ("How long was {N} at {a}?", "Who did {N} go to {a} with?"),
                ),
                paraphrases=(("Who went with {N} to {pa}?",), ("What did {N} see at {pa}?",)),
                whens=(("When did {N} go to {a}?",), ("When did {N} visit {a}?",)),
                multi=(("Where has {N} gone outdoors?",), ("What outdoor places has {N} visited?",)),
                later=(
                    ("I want to go back to {c} next month.", "My photos from {c} are my phone background now."),
                    ("Still dreaming about {c}.", "Planning another trip up to {c} soon."),
                ),
            ),
        ),
    ),
    Topic(
        "friends",
        ("college friends", "book club friends", "old coworkers", "church friends", "neighbors"),
        gist=(("catching up with friends", "the group chat"), ("seeing my {p}", "social plans")),
        core=(
            ("My {p} are like family to me, we've been close for years.",
             "I'm so lucky with my friends, my {p} especially keep me going."),
            ("Friendships mean the world to me, my {p} are my support system.",
             "I don't know what I'd do without my {p}, honestly."),
        ),
        inferences=(
            ("Is {N} a social person?", "Would {N} enjoy hosting a dinner party?"),
            ("Does {N} value friendship?", "Would {N} go to a reunion?"),
        ),
        chatter=(
            ("Had a long phone call with an old friend, it filled my cup.",
             "Trying to plan anything with adults is impossible, haha.",
             "I love my people so much.",
             "The group chat is out of control today.",
             "I've been a bad friend lately, I need to reach out more.",
             "Good friends make everything easier."),
            ("Caught up with a friend for hours, felt so good.",
             "Scheduling a get-together with everyone is a nightmare.",
             "My friends are honestly the best.",
             "Our group chat has two hundred unread messages.",
             "I need to be better at staying in touch.",
             "Friends are the family you choose, right?"),
        ),
        prompts=(
            ("How are your friends doing?", "Seen your {p} lately?", "Any fun plans with friends?"),
            ("Caught up with anyone lately?", "How are your {p} doing?", "Doing anything social this week?"),
        ),
        facts=(
            Fact(
                "party",
                (("a surprise birthday party for {m}", "the surprise party", "a surprise"),
                 ("a murder mystery dinner", "the murder mystery dinner", "a themed dinner"),
                 ("a karaoke night", "karaoke night", "a night of singing"),
                 ("a potluck in the park", "the potluck", "a meal outside"),
                 ("an ugly sweater party", "the sweater party", "a holiday party"),
                 ("a game night with board games", "game night", "a night of games"),
                 ("a bonfire on the beach", "the beach bonfire", "a night outside"),
                 ("a movie marathon", "the movie marathon", "a night of films")),
                statements=(
                    ("We had {a} {T}, I laughed so hard my stomach hurt.",
                     "I hosted {a} for my {p}, {k} people came!"),
                    ("{T} my {p} and I did {a}, best night in ages.",
                     "So I threw {a} and {k} people showed up, it was wild."),
                ),
                replies=(
                    (("What did you get up to on Friday night?", "{a}! It was so much fun."),),
                    (("How was the weekend?", "Great, we did {a}!"),),
                ),
                whats=(
                    ("What made {N} laugh so hard their stomach hurt?", "What did {N} host for the {p}?"),
                    ("What did {N} and the {p} do for the best night in ages?", "What did {N} throw that {k} people showed up to?"),
                ),
                asks=(
                    ("How many people came when {N} had {a}?", "How did {N} feel about {a}?"),
                    ("How many guests came when {N} threw {a}?", "What did {N} think of {a}?"),
                ),
                paraphrases=(("How many people came when {N} had {pa}?",), ("What did {N} think of {pa}?",)),
                whens=(("When did {N} have {a}?",), ("When did {N} host {a}?",)),
                multi=(("What parties has {N} been to?",), ("What social events has {N} hosted?",)),
                later=(
                    ("People are still talking about {c}, haha.", "I found glitter from {c} in my car, still."),
                    ("{c} is going to be a yearly thing now.", "My friends keep asking me to host {c} again."),
                ),
            ),
        ),
    ),
)  # fmt: skip

# ----------------------------------------------------------------------------------------------------
# Fillers, by phrasing half.

NAMES = [
    "Aria", "Brooke", "Cyrus", "Dalia", "Emmett", "Farah", "Gideon", "Hazel", "Imani", "Jasper", "Keira",
    "Lionel", "Mira", "Nolan", "Opal", "Pierce", "Quinn", "Rosalind", "Silas", "Thea", "Ulric", "Vera",
]  # fmt: skip

PEOPLE = [
    "Rosa", "Derek", "Tasha", "Marcus", "Ellie", "Victor", "Hannah", "Kofi", "Bea", "Liam", "Nadia", "Oscar",
    "Greta", "Felix", "Ivy", "Ramon", "Sunita", "Walt", "Chloe", "Arjun",
]  # fmt: skip

TIMES: Halves = (
    ("yesterday", "last weekend", "on Saturday", "a few days ago", "this morning", "last Tuesday"),
    ("last Friday", "two days ago", "over the weekend", "earlier this week", "on Sunday", "last night"),
)

GREETINGS: Halves = (
    ("Hey {O}! It's been a while, how are you?", "Hi {O}! So good to talk to you again.",
     "Hey! How was your week?", "Hi {O}, I've missed our chats!"),
    ("Hello {O}! Long time no talk, what's new?", "Hey {O}, great to hear from you!",
     "Hi! How have things been since we last talked?", "{O}! I was just thinking about you."),
)  # fmt: skip

CLOSINGS: Halves = (
    ("I have to run, talk soon!", "Take care, {O}! Let's catch up again soon.",
     "Bye for now, it was great chatting.", "Okay, I should get some sleep. Night!"),
    ("Gotta go, but this was fun!", "Talk to you soon, {O}, take care!",
     "Catch you later, thanks for the chat.", "I'm off to bed, good night!"),
)  # fmt: skip

CHEERS: Halves = (  # the friend, after good news
    ("Wow, that's amazing! How did it go?", "That's so cool, I'm really happy for you!",
     "No way! Tell me everything.", "Oh wow, you must be so proud!", "Aww, that's wonderful.",
     "That's incredible, well done!", "Ooh, I love that for you!", "Sounds like quite the adventure!",
     "You deserve it, seriously.", "That's so sweet, I'm smiling reading this."),
    ("Oh my gosh, really? How was it?", "Amazing news, congratulations!",
     "Wait, what?! I need details.", "You should be really proud of yourself.", "That's lovely to hear.",
     "Incredible, nicely done!", "This makes me so happy for you!", "What a story!",
     "Nobody deserves it more than you.", "That's adorable, honestly."),
)  # fmt: skip

SYMPATHY: Halves = (  # the friend, after bad news
    ("Oh no, that sounds awful. I'm sorry.", "Oof, that's rough. Are you okay?", "That must have been so scary.",
     "Ugh, I'm sorry you had to deal with that.", "Sending you a big hug.", "I hope things get better soon."),
    ("Yikes, that sounds stressful. Hope you're alright.", "Ugh, I'm so sorry that happened.",
     "That sounds terrifying, honestly.", "Oh no, poor you!", "Hugs, seriously.",
     "Fingers crossed it gets easier."),
)  # fmt: skip

NODS: Halves = (  # the friend, after everyday talk
    ("Haha, I know that feeling.", "Oh, totally get that.", "Ha, sounds about right!", "Same here, honestly.",
     "Haha, love that.", "Oh, that's so relatable.", "Ha, story of my life.", "Oh, I hear you.", "Haha, classic.",
     "Mm, makes sense."),
    ("Lol, been there.", "Ha, I feel that.", "Yep, that tracks!", "Honestly, same.", "Haha, amazing.",
     "So relatable, ugh.", "Ugh, tell me about it.", "Haha, of course.", "Oh, fair enough.", "Totally, I get it."),
)  # fmt: skip

THANKS: Halves = (  # the owner, after a reaction
    ("Thanks! I'm so glad you think so.", "Haha, thank you! It means a lot.", "Right? I'm still buzzing.",
     "Thanks, it was honestly such a relief.", "Yeah, it was a lot, but it's all good now.",
     "Thank you, you're always so supportive."),
    ("Aw, thanks so much!", "Thank you, that really means a lot to me.", "I know, I'm still on cloud nine.",
     "Thanks, I needed to hear that.", "Yeah, it's been a ride, but I'm okay.",
     "You're the best, thank you."),
)  # fmt: skip

SAD_THANKS: Halves = (  # the owner, after sympathy
    ("Thanks, I appreciate that.", "Thank you, it helps to talk about it.", "Yeah, it was a lot.",
     "Thanks, I'm hanging in there."),
    ("Thank you, that means a lot.", "Thanks, talking about it helps.", "Yeah, not fun at all.",
     "Thanks, I'm getting there."),
)  # fmt: skip

SMALL_TALK: Halves = (
    ("The weather has been so gloomy lately.", "I'm so tired this week, I need a vacation.",
     "Did you watch anything good on TV recently?", "I've been drinking way too much coffee.",
     "Can you believe how fast this year is going?", "I'm trying to eat healthier, it's not going great.",
     "My phone screen cracked again, of course.", "Traffic this morning was unbelievable.",
     "I finally cleaned out my closet, it feels amazing.", "I've been sleeping terribly, any tips?",
     "We should grab lunch sometime!", "I've been thinking about what you said last time.",
     "Life has been a rollercoaster lately.", "It's been such a long week.", "I'm trying to stay positive."),
    ("It's been raining nonstop here.", "I'm running on empty this week.",
     "Seen any good shows lately?", "I think I'm addicted to iced coffee.",
     "Is it just me or is time flying?", "I'm cutting back on sugar, wish me luck.",
     "I dropped my phone in the sink this morning, it survived.", "My commute was a nightmare today.",
     "I did a big spring clean, feels so good.", "Insomnia has been rough lately.",
     "Let's get coffee soon!", "I keep thinking about our last conversation.",
     "Things have been up and down.", "This week felt like a month.", "Trying to look on the bright side."),
)  # fmt: skip

CALLBACKS: Halves = (  # the owner, later, about a detail told before ({c})
    ("Still can't stop thinking about {c}, honestly.", "{m} brought up {c} again today, haha.",
     "I showed {m} a photo of {c} and they loved it.", "Remember {c}? I still smile about it.",
     "I was telling my mom about {c} the other day."),
    ("{c} still comes up in every conversation, lol.", "I was telling {m} all about {c} yesterday.",
     "Found an old photo of {c} on my phone.", "Ha, {c}, what a time that was.",
     "My coworkers keep asking me about {c}."),
)  # fmt: skip

FRIEND_CALLBACKS: Halves = (  # the friend, later, about a detail the owner told ({c})
    ("Any update on {c}?", "I keep thinking about {c}, how is all that going?",
     "Did anything else happen with {c}?"),
    ("Any news about {c}?", "Whatever happened after {c}?", "So how are things since {c}?"),
)  # fmt: skip

RECAPS: Halves = (  # a speaker sums up their life in passing: {g1}, {g2}, {g3} are topic gists
    ("Life's been so busy lately, between {g1}, {g2} and {g3}.", "Honestly, {g1} and {g2} are taking up all my time.",
     "My week in a nutshell: {g1}, {g2}, {g3}.", "Same old, same old: {g1} and {g2}, mostly."),
    ("Things are hectic: {g1}, {g2}, plus {g3}.", "It's all {g1} and {g2} over here lately.",
     "Quick update: {g1}, {g2} and {g3}, as usual.", "Not much new, just {g1} and {g2}."),
)  # fmt: skip

ACKS: Halves = (  # the friend, a short bridge between two things the other says
    ("Haha, yes!", "Totally.", "Right?", "Oh nice.", "Mm, I get that.", "Ha, same here."),
    ("Ha, for sure!", "Absolutely.", "I know!", "Oh cool.", "Yeah, I hear you.", "Same, honestly."),
)  # fmt: skip

FOLLOW_UPS: Halves = (  # the friend, after news, asking for more
    ("How did you feel about it?", "What made you decide to do that?", "Was it hard?",
     "Did you take any pictures?", "What's next?", "How long did that take?"),
    ("How are you feeling about it now?", "What got you into that?", "Was it tough?",
     "Any photos? I want to see!", "What's the plan now?", "How long have you been at it?"),
)  # fmt: skip

LEADS: Halves = (  # prefixed to a content turn
    ("Oh, and ", "Honestly, ", "So, ", "Haha, ", "Okay so ", "Guess what? ", "Thanks, {O}! ",
     "Not much new here, but ", "Hey, good to hear from you! ", "Ah, you know how it is. "),
    ("Oh! Also, ", "To be honest, ", "Anyway, ", "Lol, ", "Well, ", "Get this: ", "Aw, thank you {O}! ",
     "Things are okay, ", "Hi, so nice to hear from you! ", "Oh, it's been a week. "),
)  # fmt: skip

ELABORATIONS: Halves = (  # a story sentence after good news
    ("I didn't expect it to mean so much to me.", "I'll send you pictures later.",
     "I called my mom right after to tell her.", "I've been wanting to tell you all week.",
     "Honestly, it's been on my mind a lot.", "I keep replaying it in my head.",
     "It's such a small thing but it made me so happy.", "I really needed some good news."),
    ("It hit me harder than I thought it would.", "Remind me to show you photos.",
     "First thing I did was text my sister.", "I couldn't wait to tell you.",
     "It's all I've been thinking about.", "I can't stop thinking about it.",
     "Little things like that make life good.", "Some good news, finally!"),
)  # fmt: skip

TAILS: Halves = (  # appended to a content turn
    ("It made my whole week.", "I'm still smiling about it.", "Life is funny like that.",
     "Anyway, how are you?", "It's been such a roller coaster.", "I feel really grateful."),
    ("Honestly, it made my month.", "I can't stop grinning.", "Funny how things work out.",
     "But enough about me, what's up with you?", "What a ride it's been.", "I'm so thankful."),
)  # fmt: skip

SAD_TAILS: Halves = (  # appended to bad news
    ("Anyway, I'm okay now.", "Ugh, what a week.", "I'm just glad it's over.", "It really knocked me down.",
     "Not my favorite memory, honestly.", "I'm trying to laugh about it now."),
    ("I'm fine now, though.", "What a mess that was.", "Glad that's behind me.", "It shook me more than I expected.",
     "Still a bit upset about it, honestly.", "Can't do anything but laugh now."),
)  # fmt: skip

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip

# ----------------------------------------------------------------------------------------------------
# Generation

# How often a fact's turn gets a filler lead, a story sentence, a filler tail, a line on another topic.
LEAD, ELABORATE, TAIL, ASIDE = 0.5, 0.7, 0.6, 0.5
REPLY = 0.2  # share of facts told only in answer to the friend's question
CHATTER_BLOCKS = (3, 10)  # exchanges per speaker and topic about the topic in general
SMALL_TALK_BLOCKS = (2, 6)  # exchanges per session about nothing in particular
RECAP_COUNTS = (0, 0, 1, 1, 2)  # recaps per session (one drawn per session)
MERGE = 0.8  # a speaker's two things in a row become one turn (else the friend acknowledges in between)
CALLBACK_COUNTS = (1, 2, 2, 3, 4)  # later mentions of a told detail (one drawn per fact value)
PROMPTED = 0.6  # share of the owner's general talk on a topic that answers the friend's question
ASKED_BACK = 0.4  # share of later mentions of a detail that are the friend asking about it
ASKED = 0.65  # share of told fact values that get a question of their own
INFERRED = 0.35  # share of (speaker, topic) pairs that get an open-domain question
WHAT = 0.8  # share of single-hop questions asking for the detail itself, in the statement's other words
SHORT_FORM = 0.8  # share of single-hop and temporal questions that use the detail's short form

Turn = tuple[str, str, tuple[int, ...]]  # (speaker, text, keys of the facts it is evidence for)
Block = list[Turn]


@dataclass
class _Told:
    """One fact value told by one speaker, and later the turn that tells it."""

    owner: str
    topic: Topic
    fact: Fact
    value: tuple[str, str, str]
    slots: dict[str, str]
    form: int = -1  # the index of the statement it was told with, -1 for an answer to the friend
    docs: list[int] = field(default_factory=list)


@dataclass
class _Plan:
    """What one speaker says about one topic across the conversation."""

    owner: str
    topic: Topic
    persona: str
    sessions: list[int]
    core_docs: list[int] = field(default_factory=list)


def conversation_scopes(seed: int, *, half: int, conversations: int = 4) -> list[Scope]:
    """``conversations`` multi-session dialogues (one Scope each), phrasing half ``half`` (0 = A, 1 = B)."""
    rng = random.Random(seed)
    return [_Conversation(rng, half).build(f"convo-s{seed}-h{'AB'[half]}-{c}") for c in range(conversations)]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


_SENTENCE_START = re.compile(r"([.!?] )([a-z])")


def _sentences(text: str) -> str:
    """Capitalise every sentence of a turn (a slot such as {T} or {a} may start one)."""
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), _cap(text))


class _Conversation:
    def __init__(self, rng: random.Random, half: int) -> None:
        self.rng = rng
        self.half = half
        self.speakers = tuple(rng.sample(NAMES, 2))
        self.plans_of: dict[str, list[_Plan]] = {}
        self.decks: dict[tuple[str, ...], list[str]] = {}

    # -- text helpers --------------------------------------------------------------------------------

    def pick(self, options: Halves) -> str:
        return self.rng.choice(options[self.half])

    def fill(self, template: str, slots: dict[str, str]) -> str:
        return _cap(template.format(**slots))

    def slots(self, owner: str, persona: str, value: tuple[str, str, str] = ("", "", "")) -> dict[str, str]:
        rng = self.rng
        m = rng.choice(PEOPLE)
        other = self.other(owner)
        detail, cue, para = (v.replace("{m}", m) for v in value)
        return {
            "N": owner, "O": other, "p": persona, "a": detail, "c": cue, "pa": para, "m": m,
            "k": str(rng.randint(2, 9)), "T": rng.choice(TIMES[self.half]),
        }  # fmt: skip

    def other(self, speaker: str) -> str:
        return self.speakers[1 - self.speakers.index(speaker)]

    def say(self, template: str, slots: dict[str, str], lead: float = 0.25, tail: float = 0.2) -> str:
        """Fill a content template and sometimes wrap it in conversational filler, as people do."""
        text = template.format(**slots)
        if self.rng.random() < lead:
            prefix = self.pick(LEADS).format(**slots)
            first = text.split(" ", 1)[0]
            if prefix.rstrip()[-1] in ".!?":
                text = _cap(text)
            elif not template.startswith("{") and first != "I" and first[:2] != "I'":
                text = text[:1].lower() + text[1:]  # a literal first word; a slot keeps its own case
            text = prefix + text
        if self.rng.random() < tail:
            text = f"{text} {self.pick(TAILS)}"
        return _cap(text)

    def deal(self, key: tuple[str, ...], options: Halves) -> str:
        """Like ``pick``, but a speaker goes through the whole list before repeating a line."""
        deck = self.decks.get(key)
        if not deck:
            deck = self.decks[key] = self.rng.sample(options[self.half], len(options[self.half]))
        return deck.pop()

    # -- planning ------------------------------------------------------------------------------------

    def build(self, name: str) -> Scope:
        rng = self.rng
        n_sessions = rng.randint(15, 30)
        blocks: list[list[Block]] = [[] for _ in range(n_sessions)]
        told: list[_Told] = []
        plans: list[_Plan] = []
        used_values: set[tuple[str, str]] = set()
        for owner in self.speakers:
            for topic in rng.sample(TOPICS, rng.randint(8, 12)):
                span = rng.randint(max(4, n_sessions // 3), n_sessions)
                start = rng.randrange(n_sessions - span + 1)
                sessions = list(range(start, start + span))
                plan = _Plan(owner, topic, rng.choice(topic.persona), sessions)
                plans.append(plan)
                self.plans_of.setdefault(owner, []).append(plan)
                self.plan_topic(plan, len(plans) - 1, blocks, told, used_values)
        for session in blocks:
            for _ in range(rng.randint(*SMALL_TALK_BLOCKS)):
                session.append(self.small_talk())
            for _ in range(rng.choice(RECAP_COUNTS)):
                session.append(self.recap(rng.choice(self.speakers)))
        scope = Scope(name)
        day = datetime.date(2022, 1, 1) + datetime.timedelta(days=rng.randrange(500))
        for number, session_blocks in enumerate(blocks, start=1):
            day += datetime.timedelta(days=rng.randint(4, 18))
            self.emit_session(scope, number, day, session_blocks, told, plans)
        self.ask(scope, told, plans)
        return scope

    def plan_topic(
        self,
        plan: _Plan,
        index: int,
        blocks: list[list[Block]],
        told: list[_Told],
        used_values: set[tuple[str, str]],
    ) -> None:
        rng, topic, owner = self.rng, plan.topic, plan.owner
        # The interest itself, early on.
        for i in range(rng.choice((1, 1, 2))):
            slots = self.slots(owner, plan.persona)
            text = self.say(self.pick(topic.core), slots)
            blocks[plan.sessions[min(i * 2, len(plan.sessions) - 1)]].append(
                self.with_reaction([(owner, text, (-1 - index,))], mood="chat")
            )
        # Facts: each kind of event 1-3 times with different details, in different sessions.
        for fact in topic.facts:
            values = [v for v in fact.values if (fact.key, v[0]) not in used_values]
            count = min(rng.choice((1, 1, 2, 2, 3)), len(values))
            sessions = rng.sample(plan.sessions, min(count, len(plan.sessions)))
            for value, session in zip(rng.sample(values, len(sessions)), sessions, strict=True):
                used_values.add((fact.key, value[0]))
                item = _Told(owner, topic, fact, value, self.slots(owner, plan.persona, value))
                told.append(item)
                blocks[session].append(self.tell(item, len(told) - 1))
                # People come back to what they told: "Biscuit chewed my shoe", "Any news about the scan?"
                later = [s for s in plan.sessions if s > session]
                for _ in range(rng.choice(CALLBACK_COUNTS) if later else 0):
                    blocks[rng.choice(later)].append(self.callback(item))
        # Talk about the topic without a detail worth a question, and the friend asking about it.
        for _ in range(rng.randint(*CHATTER_BLOCKS)):
            slots = self.slots(owner, plan.persona)
            text = self.say(
                self.deal((owner, topic.key, "chatter"), topic.chatter), slots, lead=0.3, tail=0.35
            )
            turns: Block = []
            if rng.random() < PROMPTED:
                prompt = self.deal((owner, topic.key, "prompts"), topic.prompts)
                turns.append((self.other(owner), self.fill(prompt, slots), ()))
            turns.append((owner, text, ()))
            if rng.random() < 0.5:
                turns.append((self.other(owner), self.deal((self.other(owner), "nods"), NODS), ()))
            blocks[rng.choice(plan.sessions)].append(turns)

    def tell(self, item: _Told, key: int) -> Block:
        """The turns that tell one fact: a statement, or the answer to the friend's question."""
        rng, owner, sad = self.rng, item.owner, item.fact.sad
        friend = self.other(owner)
        story, tails = (SAD_TAILS, SAD_TAILS) if sad else (ELABORATIONS, TAILS)
        if item.fact.replies[self.half] and rng.random() < REPLY:
            prompt, answer = rng.choice(item.fact.replies[self.half])
            text = self.say(answer, item.slots, lead=0.0, tail=0.0)
            if rng.random() < ELABORATE:
                text = f"{text} {self.pick(story)}"
            turns: Block = [(friend, self.fill(prompt, item.slots), ()), (owner, text, (key,))]
            if rng.random() < 0.5:
                turns.append((friend, self.pick(SYMPATHY if sad else CHEERS), ()))
            return turns
        item.form = rng.randrange(len(item.fact.statements[self.half]))
        text = self.say(item.fact.statements[self.half][item.form], item.slots, lead=LEAD, tail=0.0)
        if rng.random() < ELABORATE:
            text = f"{text} {self.pick(story)}"
        if rng.random() < TAIL:
            text = f"{text} {self.pick(tails)}"
        if rng.random() < ASIDE:
            text = f"{text} {self.aside(owner)}"
        return self.with_reaction([(owner, text, (key,))], mood="sad" if sad else "news")

    def aside(self, owner: str) -> str:
        """A line about another of the owner's topics, as people mention two things in one message."""
        plan = self.rng.choice(self.plans_of[owner])
        line = self.deal((owner, plan.topic.key, "chatter"), plan.topic.chatter).format(
            **self.slots(owner, plan.persona)
        )
        return _cap(line)

    def callback(self, item: _Told) -> Block:
        """A later mention of a told detail, by its owner or the friend: never evidence."""
        owner, slots, r = item.owner, item.slots, self.rng.random()
        if r < 1 - ASKED_BACK - 0.2 or not item.fact.noun:
            text = self.say(self.deal((owner, item.fact.key, slots["c"]), item.fact.later), slots, tail=0.1)
            return self.with_reaction([(owner, text, ())], mood="chat")
        if r < 1 - ASKED_BACK:
            text = self.say(self.pick(CALLBACKS), slots, tail=0.1)
            return self.with_reaction([(owner, text, ())], mood="chat")
        return [
            (self.other(owner), self.fill(self.pick(FRIEND_CALLBACKS), slots), ()),
            (
                owner,
                self.say(self.deal((owner, item.topic.key, "chatter"), item.topic.chatter), slots, lead=0.3),
                (),
            ),
        ]

    def with_reaction(self, turns: Block, *, mood: str) -> Block:
        """The friend reacts to the last turn (``mood``: "news", "sad" or "chat"), the owner may answer."""
        rng = self.rng
        owner = turns[-1][0]
        friend = self.other(owner)
        r = rng.random()
        if r < 0.45:
            reaction = self.deal((friend, mood), {"news": CHEERS, "sad": SYMPATHY, "chat": NODS}[mood])
            if mood == "news" and rng.random() < 0.6:
                reaction = f"{reaction} {self.pick(FOLLOW_UPS)}"
            elif mood == "chat" and rng.random() < 0.4:
                reaction = f"{reaction} {self.deal((friend, 'small talk'), SMALL_TALK)}"
            turns.append((friend, reaction, ()))
            if rng.random() < 0.5:
                thanks = self.pick(SAD_THANKS if mood == "sad" else THANKS)
                if rng.random() < 0.5:
                    more = {"news": ELABORATIONS, "sad": SAD_TAILS, "chat": SMALL_TALK}[mood]
                    thanks = f"{thanks} {self.deal((owner, 'more', mood), more)}"
                turns.append((owner, thanks, ()))
        elif r < 0.7 and mood == "news":
            turns.append((friend, self.pick(FOLLOW_UPS), ()))
        return turns

    def recap(self, speaker: str) -> Block:
        """A turn naming a few of the speaker's topics at once: close to many questions, evidence for none."""
        plans = self.rng.sample(self.plans_of[speaker], 3)
        gists = {f"g{i}": self.pick(p.topic.gist).format(p=p.persona) for i, p in enumerate(plans, start=1)}
        return self.with_reaction([(speaker, self.fill(self.pick(RECAPS), gists), ())], mood="chat")

    def bridge(self, speaker: str, short: float) -> str:
        """A reply to everyday talk: a short acknowledgement, or a nod and something of one's own."""
        if self.rng.random() < short:
            return self.pick(ACKS)
        return f"{self.deal((speaker, 'nods'), NODS)} {self.deal((speaker, 'small talk'), SMALL_TALK)}"

    def small_talk(self) -> Block:
        rng = self.rng
        who = rng.choice(self.speakers)
        turns: Block = [(who, self.deal((who, "small talk"), SMALL_TALK), ())]
        if rng.random() < 0.6:
            reply = self.bridge(self.other(who), 0.2)
            turns.append((self.other(who), reply, ()))
        return turns

    # -- writing the sessions ------------------------------------------------------------------------

    def emit_session(
        self,
        scope: Scope,
        number: int,
        day: datetime.date,
        session_blocks: list[Block],
        told: list[_Told],
        plans: list[_Plan],
    ) -> None:
        rng = self.rng
        rng.shuffle(session_blocks)
        opener = rng.choice(self.speakers)
        turns: list[Turn] = [
            (opener, self.fill(self.deal(("greetings",), GREETINGS), {"O": self.other(opener)}), ()),
            (
                self.other(opener),
                self.fill(f"{self.deal(('greetings',), GREETINGS)} {self.pick(SMALL_TALK)}", {"O": opener}),
                (),
            ),
        ]
        for block in session_blocks:
            turns.extend(block)
        closer = rng.choice(self.speakers)
        turns.append((closer, self.fill(self.pick(CLOSINGS), {"O": self.other(closer)}), ()))
        # Real dialogue alternates: a speaker's two things in a row become one turn, or the friend chimes in.
        merged: list[Turn] = []
        for speaker, text, keys in turns:
            if merged and merged[-1][0] == speaker:
                last = merged[-1]
                if rng.random() < MERGE and len(last[1]) + len(text) < 300:
                    merged[-1] = (speaker, f"{last[1]} {text}", last[2] + keys)
                    continue
                bridge = self.bridge(self.other(speaker), 0.15)
                merged.append((self.other(speaker), bridge, ()))
            merged.append((speaker, text, keys))
        date = f"{day.day} {MONTHS[day.month - 1]} {day.year}"
        for speaker, text, keys in merged:
            doc = len(scope.records) + 1
            scope.records.append(Record(doc, f"{speaker} · session {number} · {date}", _sentences(text)))
            for key in keys:
                if key >= 0:
                    told[key].docs.append(doc)
                else:
                    plans[-1 - key].core_docs.append(doc)

    # -- questions -----------------------------------------------------------------------------------

    def ask(self, scope: Scope, told: list[_Told], plans: list[_Plan]) -> None:
        rng, half = self.rng, self.half
        for item in told:
            if not item.docs or rng.random() > ASKED:
                continue
            fact, slots = item.fact, item.slots
            r = rng.random()
            if r < 0.28 and fact.whens[half]:
                category, template = "temporal", rng.choice(fact.whens[half])
            elif r < 0.56 and fact.paraphrases[half]:
                category, template = "paraphrase", rng.choice(fact.paraphrases[half])
            elif item.form >= 0 and rng.random() < WHAT:
                category, template = "single-hop", fact.whats[half][item.form]
            else:
                category, template = "single-hop", rng.choice(fact.asks[half])
            if rng.random() < SHORT_FORM:
                template = template.replace("{a}", "{c}")
            scope.questions.append(Question(self.fill(template, slots), tuple(item.docs), category))
        by_fact: dict[tuple[str, str], list[_Told]] = {}
        for item in told:
            if item.docs:
                by_fact.setdefault((item.owner, item.fact.key), []).append(item)
        for items in by_fact.values():
            fact = items[0].fact
            if len(items) >= 2 and fact.multi[half] and rng.random() < 0.45:
                docs = sorted(d for item in items for d in item.docs[:1])[:3]
                text = self.fill(rng.choice(fact.multi[half]), items[0].slots)
                scope.questions.append(Question(text, tuple(docs), "multi-hop"))
        for plan in plans:
            if plan.core_docs and rng.random() < INFERRED:
                text = self.fill(self.pick(plan.topic.inferences), {"N": plan.owner})
                scope.questions.append(Question(text, tuple(sorted(plan.core_docs)), "open-domain"))
