"""When a search answers, decision by decision: event sequences on a fake clock through `tiers.step`.

Each case starts a search (first-tier engines running, second-tier ones waiting) at loop time 0 and
feeds events; after each one the table names the action expected: `Wait(until)` on the search's clock,
`StartFallback(names)` or `Answer(why)`. Boundaries are exact: the fake clock has no jitter.
"""

from __future__ import annotations

import pytest

from plugin.pipeline.tiers import (
    ALL_BACK, ANSWERED, BENCHED, DEADLINE, ENOUGH, NOT_ASKED, SOFT_ENOUGH, SOFT_SHORT, Answer, Came, OnStore, Rules,
    StartFallback, Tick, TierState, Wait, phase_of, step,
)
from plugin.settings import Settings

RULES = Rules(limit=8, quorum=0.5, grace=0.5, soft=2.5, hard=4.75)  # times that floats hold exactly
LARGE_LIMIT = Rules(limit=20, quorum=0.5, grace=0.5, soft=2.5, hard=4.75)


def back(at: float, kept: int, *names: str, phase: str = ANSWERED) -> Came:
    """`names` came back at `at` with `phase`; `kept` distinct rows kept so far, all engines together."""
    return Came(at, tuple((name, phase) for name in names), kept)


def benched(at: float, kept: int, *names: str) -> Came:
    return back(at, kept, *names, phase=BENCHED)


def not_asked(at: float, kept: int, *names: str) -> Came:
    return back(at, kept, *names, phase=NOT_ASKED)


def on_store(at: float, *names: str) -> OnStore:
    return OnStore(at, frozenset(names))


JUST_BEFORE = 1 / 1024

# (case, first tier, second tier, rules, [(event, action expected after it), ...])
CASES = [
    ("a quorum with limit rows answers after the grace",
     "a b c d", "", RULES,
     [(Tick(0.0), Wait(2.5)),
      (back(0.25, 8, "a"), Wait(2.5)),  # 1 of 4 answered: no quorum yet, whatever the rows
      (back(0.5, 10, "b"), Wait(1.0)),  # exactly the quorum (2 of 4), limit rows: the grace runs
      (Tick(1.0 - JUST_BEFORE), Wait(1.0)),
      (Tick(1.0), Answer(ENOUGH))]),
    ("limit rows before a quorum answered is not enough in hand",
     "a b c d", "", RULES,
     [(back(0.125, 8, "a"), Wait(2.5)),
      (Tick(0.625), Wait(2.5)),  # the grace after the rows alone would have answered here
      (back(1.0, 8, "b"), Wait(1.5)),  # the quorum now: the grace runs from it
      (Tick(1.5), Answer(ENOUGH))]),
    ("exactly limit rows at exactly the soft deadline answers, quorum or not",
     "a b c d", "", RULES,
     [(back(0.125, 8, "a"), Wait(2.5)),
      (Tick(2.5 - JUST_BEFORE), Wait(2.5)),
      (Tick(2.5), Answer(SOFT_ENOUGH))]),
    ("one row short at the soft deadline and no quorum: the overall deadline",
     "a b c d", "", RULES,
     [(back(0.125, 7, "a"), Wait(2.5)),
      (Tick(2.5), Wait(4.75)),
      (Tick(4.75 - JUST_BEFORE), Wait(4.75)),
      (Tick(4.75), Answer(DEADLINE))]),
    ("past the soft deadline a quorum answers with fewer rows than asked (issue 21, 7b)",
     "a b c hung", "", LARGE_LIMIT,
     [(back(0.25, 17, "a", "b", "c"), Wait(2.5)),
      (Tick(2.5 - JUST_BEFORE), Wait(2.5)),
      (Tick(2.5), Answer(SOFT_SHORT))]),
    ("a quorum just before the soft deadline: the answer with fewer rows waits for its grace",
     "a b c d", "", RULES,
     [(back(2.25, 3, "a", "b"), Wait(2.5)),
      (Tick(2.5), Wait(2.75)),
      (Tick(2.75 - JUST_BEFORE), Wait(2.75)),
      (Tick(2.75), Answer(SOFT_SHORT))]),
    ("a quorum reached after the soft deadline still gets its grace",
     "a b c d", "", RULES,
     [(Tick(2.5), Wait(4.75)),
      (back(2.625, 3, "a"), Wait(4.75)),
      (back(2.75, 5, "b"), Wait(3.25)),
      (Tick(3.25 - JUST_BEFORE), Wait(3.25)),
      (Tick(3.25), Answer(SOFT_SHORT))]),
    ("every engine back answers at once, rows or not",
     "a b", "", RULES,
     [(back(0.25, 1, "a"), Wait(2.5)),
      (back(0.375, 2, "b"), Answer(ALL_BACK))]),
    ("a benched engine counts towards the quorum's size but never answers it (issue 21, 7)",
     "a b c d e", "", RULES,
     [(benched(0.0, 0, "d", "e"), Wait(2.5)),
      (back(0.125, 9, "a"), Wait(2.5)),  # 1 of 3 asked; counted as answers, d and e would make 3 of 5
      (back(0.25, 9, "b"), Wait(2.5)),  # 2 of 3: had d and e hung instead, it would wait for 3 too
      (back(0.375, 12, "c"), Answer(ALL_BACK))]),
    ("the same engines with two hung instead of benched wait for the same three answers",
     "a b c d e", "", RULES,
     [(back(0.125, 9, "a"), Wait(2.5)),
      (back(0.25, 9, "b"), Wait(2.5)),
      (back(0.375, 12, "c"), Wait(0.875)),
      (Tick(0.875), Answer(ENOUGH))]),
    ("benched engines never push the quorum beyond the engines asked",
     "a b c d e", "", RULES,
     [(benched(0.0, 0, "b", "c", "d", "e"), Wait(2.5)),
      (back(0.125, 8, "a"), Answer(ALL_BACK))]),
    ("benched engines and a quorum of the rest",
     "a b c d e f", "", RULES,
     [(benched(0.0, 0, "e", "f"), Wait(2.5)),  # 3 of 6 make the quorum, of the 4 asked
      (back(0.125, 8, "a", "b"), Wait(2.5)),
      (back(0.25, 8, "c"), Wait(0.75)),
      (Tick(0.75), Answer(ENOUGH))]),
    ("an engine not asked (disabled, over budget) counts neither way",
     "a b c", "", RULES,
     [(not_asked(0.0, 0, "c"), Wait(2.5)),
      (back(0.125, 8, "a"), Wait(0.625)),  # 1 of the 2 asked is the quorum
      (Tick(0.625), Answer(ENOUGH))]),
    ("0.6 of 5 engines is 3 answers, not 4",
     "a b c d e", "", Rules(limit=8, quorum=0.6, grace=0.5, soft=2.5, hard=4.75),
     [(back(0.125, 8, "a", "b"), Wait(2.5)),
      (back(0.25, 8, "c"), Wait(0.75)),
      (Tick(0.75), Answer(ENOUGH))]),
    ("an engine reading the state store stops the search's clock until it is done",
     "a b", "", RULES,
     [(on_store(0.125, "b"), Wait(None)),
      (back(5.0, 8, "a"), Wait(None)),  # the clock stood at 0.125 and stands still: b is still on the store
      (on_store(6.0), Wait(0.625)),  # read: the clock runs again; a answered at 0.125 with the quorum
      (Tick(6.5 - JUST_BEFORE), Wait(0.625)),
      (Tick(6.5), Answer(ENOUGH))]),
    ("the overall deadline is not reached while the store's time passes",
     "a b", "", RULES,
     [(on_store(0.0, "a", "b"), Wait(None)),
      (Tick(100.0), Wait(None)),
      (on_store(100.0, "b"), Wait(None)),
      (on_store(100.0), Wait(2.5)),
      (Tick(104.75), Answer(DEADLINE))]),
    ("an engine queued for admission is out like any other: the clock runs on to the deadline",
     "a b", "", RULES,
     [(Tick(0.125), Wait(2.5)),
      (Tick(100.0), Answer(DEADLINE))]),
    ("the fallback starts at a quorum + grace with fewer than limit rows, primaries still running",
     "a b c d", "x y", RULES,
     [(back(0.25, 2, "a", "b"), Wait(0.75)),
      (Tick(0.75 - JUST_BEFORE), Wait(0.75)),
      (Tick(0.75), StartFallback(("x", "y")))]),
    ("the fallback starts at the soft deadline without a quorum",
     "a b c d", "x y", RULES,
     [(back(0.25, 2, "a"), Wait(2.5)),
      (Tick(2.5 - JUST_BEFORE), Wait(2.5)),
      (Tick(2.5), StartFallback(("x", "y")))]),
    ("the fallback starts at once when every primary is done with fewer than limit rows (issue 21, 6)",
     "a b c", "x", RULES,
     [(back(0.125, 1, "a"), Wait(2.5)),
      (back(0.25, 1, "b"), Wait(0.75)),
      (back(0.375, 1, "c"), StartFallback(("x",))),  # not at the grace after the quorum: now
      (Tick(0.375), Wait(2.5)),
      (back(1.0, 3, "x"), Answer(ALL_BACK))]),
    ("every primary benched or not asked: the fallback at once",
     "a b", "x", RULES,
     [(benched(0.0, 0, "a"), Wait(2.5)),
      (not_asked(0.0, 0, "b"), StartFallback(("x",)))]),
    ("exactly limit rows from the primaries do not start the fallback",
     "a b", "x", RULES,
     [(back(0.125, 8, "a", "b"), Answer(ALL_BACK))]),
    ("limit rows at the soft deadline answer instead of starting the fallback",
     "a b c d", "x", RULES,
     [(back(0.125, 8, "a"), Wait(2.5)),
      (Tick(2.5), Answer(SOFT_ENOUGH))]),
    ("a fallback started at the soft deadline raises the quorum: the fallback engines get their turn",
     "a b c d", "x y", RULES,
     [(Tick(2.5), StartFallback(("x", "y"))),
      (back(2.625, 3, "a", "b"), Wait(4.75)),  # 2 of 6 asked: no quorum
      (back(2.75, 5, "x"), Wait(3.25)),  # 3 of 6: the quorum, then the grace
      (Tick(3.25), Answer(SOFT_SHORT))]),
    ("after the fallback starts, the quorum counts the fallback engines (issue 29, item 12)",
     "a b c d", "x y", RULES,
     [(back(0.25, 2, "a", "b"), Wait(0.75)),  # 2 of 4: the quorum, and its grace
      (Tick(0.75), StartFallback(("x", "y"))),
      (Tick(0.75), Wait(2.5)),  # 2 of 6 now: the quorum held by the primaries alone is gone
      (Tick(2.5), Wait(4.75)),  # so the soft deadline does not answer with fewer rows
      (back(3.0, 4, "x"), Wait(3.5)),  # 3 of 6, a fallback engine among them: the quorum, and its grace
      (Tick(3.5 - JUST_BEFORE), Wait(3.5)),
      (Tick(3.5), Answer(SOFT_SHORT))]),
    ("a fallback engine reading the store is still one the quorum waits for",
     "a b", "x", RULES,
     [(back(0.25, 1, "a"), Wait(0.75)),  # 1 of 2
      (Tick(0.75), StartFallback(("x",))),
      (on_store(0.75, "x"), Wait(None)),
      (on_store(1.0), Wait(2.5)),  # 1 of 3: no quorum (the search's clock stood still at 0.75 meanwhile)
      (back(1.25, 2, "x"), Wait(2.5)),  # 2 of 3 at 1.0 on the search's clock: the quorum, and its grace
      (Tick(2.75 - JUST_BEFORE), Wait(2.5)),
      (Tick(2.75), Answer(SOFT_SHORT))]),
    ("an engine reading the store is one the quorum waits for, even without a grace",
     "a b c", "", Rules(limit=2, quorum=0.5, grace=0.0, soft=2.5, hard=4.75),
     [(on_store(0.125, "b"), Wait(None)),
      (back(0.25, 2, "a"), Wait(None)),  # 1 of 3 (b on the store counts): no quorum, limit rows or not
      (on_store(0.5), Wait(2.5)),
      (back(0.75, 2, "c"), Answer(ENOUGH))]),  # 2 of 3, limit rows, no grace to wait
    ("an answer is final",
     "a b", "x", RULES,
     [(back(0.125, 8, "a", "b"), Answer(ALL_BACK)),
      (Tick(9.0), Answer(ALL_BACK)),
      (back(9.0, 0, "x"), Answer(ALL_BACK))]),
]


@pytest.mark.parametrize("case, first, second, rules, sequence", CASES, ids=[case[0] for case in CASES])
def test_each_decision(case, first, second, rules, sequence):
    state = TierState.begin(rules, first.split(), second.split(), at=0.0)
    for number, (event, expected) in enumerate(sequence):
        state, action = step(state, event)
        assert action == expected, (number, event)
        # The state handed back agrees with itself: it holds a quorum exactly when it says since when.
        assert (state.quorum_at is not None) == state.has_quorum, (number, event)


def test_the_rules_read_the_settings_and_keep_back_the_answer_reserve():
    rules = Rules.of(Settings(deadline_ms=5000, soft_deadline_ms=2000, grace_ms=300, quorum=0.6), limit=12)
    assert rules == Rules(limit=12, quorum=0.6, grace=0.3, soft=2.0, hard=pytest.approx(4.95))
    assert Rules.of(Settings(deadline_ms=100), limit=8).hard == pytest.approx(0.05)


@pytest.mark.parametrize("status, phase", [
    ("ok", ANSWERED), ("empty", ANSWERED), ("irrelevant", ANSWERED), ("timeout", ANSWERED), ("error", ANSWERED),
    ("blocked", ANSWERED), ("ratelimited", ANSWERED), ("cooldown", BENCHED), ("disabled", NOT_ASKED),
    ("skipped", NOT_ASKED), ("queued", NOT_ASKED)])
def test_how_each_outcome_counts(status, phase):
    assert phase_of(status) == phase


async def test_an_engine_still_queued_when_the_search_answers_is_queued_unless_it_was_asked_already():
    """Never admitted: `queued` (never asked). Admitted, then queued again for a follow-up request (a consent
    page's second step): it was asked, so it is `late` like any engine whose answer had not come."""
    import asyncio

    from engines import ENGINES
    from plugin.infra.admission import EngineClock
    from plugin.pipeline.tiers import Flight, Tiers, _Slot

    tiers = Tiers(Settings(), runner=None, flights=None)  # _outcome of a started run needs neither
    idle = asyncio.create_task(asyncio.sleep(60))
    try:
        for asked, expected in ((False, "queued"), (True, "late")):
            clock = EngineClock(timeout_s=10, wait_s=60)
            if asked:
                clock.admit()
            slot = _Slot(ENGINES["bing"], "primary", Flight("key", idle, clock, "bing"))
            async with clock.waiting():
                run = tiers._outcome(slot, plan=None)
            assert run.status == expected, (asked, run.status, run.detail)
            assert run.detail.startswith("not asked" if expected == "queued" else "no answer after"), run.detail
    finally:
        idle.cancel()
