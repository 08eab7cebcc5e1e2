"""The name one session's kind of work is shown by (`Workspace.kind_names`): the spelling most of ALL the kind's
sessions use, as `kind_codes` names a kind where sessions are grouped; kept up to date as the log grows (a
dashboard open for hours), and counted again when the log is read again from its start."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.analysis.joint import kind_codes
from lesson_credit.core.log.columns import StoredChunk
from lesson_credit.core.log.parts import PART_SECTIONS, Part
from lesson_credit.core.model.kinds import KindNames, kind_spellings
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, event_line, fixed_clock, make_workspace, session

DECOMPOSED, COMPOSED = "cafe\u0301", "caf\u00e9"


def shown(ws: Workspace) -> dict[str, str | None]:
    table = ws.session_table()
    return dict(zip(table.session_ids, table.categories, strict=True))


def test_a_kind_is_named_by_its_most_used_spelling_a_tie_by_the_first_in_order() -> None:
    # by hand: bugfix 2 of 4 (" bugfix" 1, "Bugfix" 1); Code 1 and code 1 tie: "Code" sorts first ("C" < "c");
    # café twice decomposed, once composed: the decomposed spelling, named in the composed form; "  " and None
    # have no kind
    categories = [" bugfix", "Bugfix", "bugfix", "bugfix", "Code", "code", DECOMPOSED, DECOMPOSED, COMPOSED, "  ", None]
    names = KindNames()
    names.update(0, len(categories), lambda start, stop: Counter(categories[start:stop]))
    assert names.spellings() == {"bugfix": "bugfix", "code": "Code", COMPOSED: DECOMPOSED}
    assert [names.name(c) for c in categories] == [
        *["bugfix"] * 4,
        *["Code"] * 2,
        *[COMPOSED] * 3,
        None,
        None,
    ]
    assert (names.spelling("BUGFIX"), names.spelling(" CAFE\u0301"), names.spelling("Docs")) == (
        "bugfix",
        DECOMPOSED,  # what the log has: no new spelling of it
        "Docs",  # a kind the log has not: as given
    )
    # the names where sessions are grouped are the same (one rule)
    grouped = kind_codes(categories, np.arange(len(categories), dtype=np.int64))[1]
    assert grouped == ("", "bugfix", COMPOSED, "Code")
    assert kind_spellings({"b": 1, "B": 1, " b": 2}) == {"b": " b"}


def test_the_names_follow_the_log_as_it_grows_and_when_it_is_read_again(tmp_path: Path) -> None:
    events = [session("s1", 0.5, {}, category="Code"), session("s2", 0.6, {}, category="Code")]
    events.append(session("s3", None, {}, category="code"))
    root = make_workspace(tmp_path, {}, events)
    ws = Workspace(root, clock=fixed_clock)
    assert shown(ws) == {"s1": "Code", "s2": "Code", "s3": "Code"}  # 2 of 3
    assert ws.explain("s3").session.category == "Code"
    assert ws.explain("s3").session.recorded_category == "code"
    log = root / LOG_REL
    with log.open("ab") as out:  # another process appends; this one reads it
        for sid, category in (("s4", "code"), ("s5", ""), ("s6", "code"), ("s7", " code ")):
            out.write(event_line(session(sid, None, {}, category=category)))
    ws.refresh()
    # by hand: code 3 (s3, s4, s6), Code 2, " code " 1; s5 has no kind
    assert shown(ws) == {"s1": "code", "s2": "code", "s3": "code", "s4": "code", "s5": None, "s6": "code", "s7": "code"}
    assert ws.session("s1").category == "code"
    assert ws.session("s1").recorded_category == "Code"
    # the log rewritten shorter (read again from its start): counted again, s4-s7 gone
    log.write_bytes(b"".join(event_line(e) for e in events))
    ws.refresh()
    assert shown(ws) == {"s1": "Code", "s2": "Code", "s3": "Code"}
    assert ws.explain("s3").session.category == "Code"


def test_a_cached_log_names_the_kinds_from_its_blocks_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parsed-log cache keeps how many of each block's sessions have each category: `show` or `record` at a
    million sessions names a session's kind from them (it decoded the whole column: 30 -> 220 ms)."""
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 4)  # 10 sessions: blocks of 4, 4, 2
    spellings = ["Code", "code", "code", None, "ops", "Code", "code", " Code", "ops", "Ops"]
    events = [session(f"s{i}", 0.5, {}, category=c) for i, c in enumerate(spellings)]
    root = make_workspace(tmp_path, {}, events)
    Workspace(root, clock=fixed_clock, cache_threshold=0).data()  # writes the cache
    ws = Workspace(root, clock=fixed_clock, cache_threshold=0)
    ws.data()
    column = ws._reader.index.session_categories
    chunks = [chunk for chunk in column._chunks if isinstance(chunk, StoredChunk)]
    assert len(chunks) == len(column._chunks)
    assert [chunk.counts for chunk in chunks] == [  # by hand, four sessions a block
        {"Code": 1, "code": 2, None: 1},
        {"ops": 1, "Code": 1, "code": 1, " Code": 1},
        {"ops": 1, "Ops": 1},
    ]
    # code 3 (s1, s2, s6) of the kind's 6 (Code 2, " Code" 1); ops 2 of 3 (Ops 1)
    assert ws.explain("s7").session.category == "code"
    assert ws.kind_names().spellings() == {"code": "code", "ops": "ops"}
    assert all(chunk._items is None for chunk in chunks)  # named without decoding a block's categories
    assert ws.session("s9").category == "ops"
    assert column.counted(2, 9) == Counter({"code": 2, None: 1, "ops": 2, "Code": 1, " Code": 1})  # parts of blocks


def test_a_blocks_counts_that_do_not_add_up_to_its_sessions_are_refused() -> None:
    part = {"file": "p", "rows": 2, "entries": 0, "grades": 0, "selections": 0, "maps": {}}
    sections = {name: [0, 0, 0] for name in PART_SECTIONS}
    assert Part.of({**part, "sections": sections, "categories": [["a", 2]]}).categories == [("a", 2)]
    assert Part.of({**part, "sections": sections}).categories is None  # a block written before: decoded instead
    for wrong in ([["a", 1]], [["a", 3], ["b", -1]], [["a", 2], ["b", 0]]):
        with pytest.raises(ValueError, match="categories do not count its sessions"):
            Part.of({**part, "sections": sections, "categories": wrong})
