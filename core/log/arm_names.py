"""Arms by lesson, whatever Unicode form a tool logged the lesson's id in.

`café.md` with é as one code point (NFC) and with an `e` and a combining accent (NFD) look the same and name
the same file: a Mac's file system hands out NFD names, so a log written there and read where the library is
checked out in NFC (or written by another tool) holds a lesson's id in both forms. The log index interns an
arm by its id's NFC form (`one_form`), so both are one arm; an ASCII id is its own form (nothing to normalise).

Each arm is shown (`arm_ids`: the fold, the state file, the exports, every table) as the library spells that
lesson when it holds it in another form than the log's (`use_spellings`: gptme opens the file by that name),
else as the log first spelled it. What the parsed-log cache keeps is the log's spelling (`logged_ids`): a
function of the log alone, the library's spelling applied to it when read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lesson_credit.core.base.ids import one_form
from lesson_credit.core.base.numbers import counted

# The distinct lessons a log may name (its arms). Each costs every command memory and time (1,000,000 of them, a
# 43 MB log of 1,000 sessions naming 1,000 new lessons each: `status` 28 s and 3 GB; 100,000: 3 s and 360 MB); a
# gptme library holds hundreds. An event that would make more is a bad line, skipped (`room_for`).
MAX_LOG_LESSONS = 100_000


class ArmNames:
    """The arm part of the log index (core/log/index.py `LogIndex` is one)."""

    def __init__(self) -> None:
        self.arm_ids: list[str] = []  # each arm's id as shown
        self.arm_index: dict[str, int] = {}  # every spelling met (the log's, the NFC forms, the library's) -> arm
        self.unicode_arms = False  # whether any arm's id is not ASCII (only then can a spelling differ)
        self._logged: dict[int, str] = {}  # arm -> the log's spelling, where the shown one differs
        self._spelled: Mapping[str, str] = {}  # NFC form -> the library's spelling (`use_spellings`)

    def arm(self, lesson_id: str) -> int:
        """The arm of a lesson id as logged, made when it is the first of its lesson (in any form)."""
        index = self.arm_index.get(lesson_id)
        if index is None:
            key = one_form(lesson_id)
            index = self.arm_index.get(key)
            if index is None:
                index = len(self.arm_ids)
                shown = self._spelled.get(key, lesson_id)  # (an ASCII id is in none)
                self.arm_ids.append(shown)
                self.arm_index[key] = index
                if shown != lesson_id:
                    self._logged[index] = lesson_id
                    self.arm_index[shown] = index
                self.unicode_arms = self.unicode_arms or not lesson_id.isascii()
            self.arm_index[lesson_id] = index
        return index

    def new_lessons(self, lesson_ids: Iterable[str]) -> int:
        """How many lessons `lesson_ids` names that have no arm yet (in any form)."""
        return len({one_form(lesson_id) for lesson_id in lesson_ids if self.find_arm(lesson_id) is None})

    def room_for(self, lesson_ids: Iterable[str]) -> str | None:
        """None when the lessons `lesson_ids` names fit in the log's MAX_LOG_LESSONS, else why not (one line)."""
        new = self.new_lessons(lesson_ids)
        if len(self.arm_ids) + new <= MAX_LOG_LESSONS:
            return None
        many = f"{new:,} new lesson{'s' * (new != 1)} beyond the {len(self.arm_ids):,} the log has"
        return f"{many} (a log names at most {MAX_LOG_LESSONS:,} lessons)"

    def past_cap(self, lesson_ids: Iterable[str]) -> list[str]:
        """The lessons `lesson_ids` names past the log's MAX_LOG_LESSONS, one id each, in their order: the new ones
        (no arm yet, in any form) after the first that fit. Empty when all fit (`room_for` is None)."""
        new: dict[str, str] = {}
        for lesson_id in lesson_ids:
            if self.find_arm(lesson_id) is None:
                new.setdefault(one_form(lesson_id), lesson_id)
        return list(new.values())[max(MAX_LOG_LESSONS - len(self.arm_ids), 0) :]

    def find_arm(self, lesson_id: str) -> int | None:
        """The arm a lesson id names in any form, None when the log has none (nothing is made)."""
        index = self.arm_index.get(lesson_id)
        return self.arm_index.get(one_form(lesson_id)) if index is None else index

    def shown(self, lesson_id: str) -> str:
        """How the arm `lesson_id` names is shown; the id itself when the log has no such arm."""
        index = self.find_arm(lesson_id)
        return lesson_id if index is None else self.arm_ids[index]

    def logged_ids(self) -> list[str]:
        """Each arm's id as the log first spelled it (what the parsed-log cache keeps)."""
        logged = self._logged
        return [logged.get(i, shown) for i, shown in enumerate(self.arm_ids)] if logged else self.arm_ids

    def load_arms(self, logged: list[str]) -> None:
        """Start with these arms, each as the log first spelled it; ValueError when two are one lesson."""
        self.arm_ids, self.arm_index, self._logged, self._spelled = [], {}, {}, {}
        if all(lesson_id.isascii() for lesson_id in logged):  # each its own form: nothing to normalise
            self.arm_ids, self.arm_index = list(logged), {lesson_id: i for i, lesson_id in enumerate(logged)}
            if len(self.arm_index) != len(logged):
                raise ValueError("an arm twice")
            return
        for lesson_id in logged:
            if lesson_id in self.arm_index or one_form(lesson_id) in self.arm_index:
                raise ValueError("an arm twice")
            self.arm(lesson_id)

    def use_spellings(self, spellings: Mapping[str, str]) -> bool:
        """Show each arm as `spellings` (`library_spellings`) spells its lesson, the others as the log first
        spelled them; True when a shown id changed."""
        if spellings is self._spelled:
            return False
        before, self._spelled = self._spelled, spellings
        if not self.unicode_arms:
            return False
        changed = False
        for key in {*before, *spellings}:
            index = self.arm_index.get(key)
            if index is None:
                continue
            logged = self._logged.get(index, self.arm_ids[index])
            shown = spellings.get(key, logged)
            if shown != self.arm_ids[index]:
                changed = True
                self.arm_ids[index] = shown
                self.arm_index[shown] = index
            if shown == logged:
                self._logged.pop(index, None)
            else:
                self._logged[index] = logged
        return changed


def past_cap_said(past: list[str]) -> str:
    """`tools/d.md (and 2 more lessons) past the 100,000 lessons a log names`: the lessons `past_cap` found, named
    by the first."""
    more = f" (and {counted(len(past) - 1, 'more lesson')})" if len(past) > 1 else ""
    return f"{past[0]}{more} past the {MAX_LOG_LESSONS:,} lessons a log names"
