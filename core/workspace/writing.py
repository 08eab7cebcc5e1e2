"""Writing: the events a command appends under the log's lock (core.commands, core.grading),
checked against the log as it is then, and the settings in config.toml.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from lesson_credit.core import commands, grading
from lesson_credit.core.bandit.config import Config, ConfigChanged, read_config, save_config
from lesson_credit.core.base.clock import iso
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.base.files import StoredUnread, StoreError, reading_back, set_aside_notices
from lesson_credit.core.base.ids import one_form, unicode_form_name, unicode_forms
from lesson_credit.core.base.numbers import listed
from lesson_credit.core.grading import GradeAppended
from lesson_credit.core.log.stores import record_lock
from lesson_credit.core.model.kinds import kind_of
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import check_priority
from lesson_credit.core.views import (
    Explanation,
    GradeRecord,
    PosteriorTable,
)
from lesson_credit.core.workspace.gptme_files import GptmeFiles

CONFIG_ATTEMPTS = 3  # saves of config.toml tried while an editor keeps saving it meanwhile

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    from lesson_credit.core.bandit.select import Selection
    from lesson_credit.core.log.events import SelectionEvent


class Writing(GptmeFiles):
    """Every write: a selection, a session, a grade or an undo, a prior, the settings."""

    def select(
        self,
        context: str,
        *,
        k: int | None = None,
        seed: int | None = None,
        session_id: str | None = None,
        log: bool = True,
        draws: int = 4000,
        dropout: float = 0.0,
        policy: str | None = None,
        category: str | None = None,
    ) -> Selection:
        """Thompson top-k among matching lessons; logs a selection event with propensities.

        `policy` (default: the one in force, `self.policy`): seed, evidence or uniform draw from the
        Beta posteriors folded under that credit strategy, joint from the joint estimate's posterior.
        `dropout` epsilon: each chosen lesson is then withheld with that probability and the draw
        is logged to state/lesson-dropout/<session_id>.jsonl in gptme's format (a randomized trial).
        `category`: the session's kind of work (default: the one config.toml's [categories] finds in the
        context, else none); the joint policy draws each lesson's effect in it; it is logged either way, in the
        spelling the log already uses for its kind (`KindNames.spelling`: CODE as code), so the log gains no new
        spelling of a kind it has; a kind the log has not as given, and so is one whose spelling could not be
        given (another tool's `code<TAB>`: no category a record or select would take)."""
        from lesson_credit.core import attribution, commands, selection_draw
        from lesson_credit.core.bandit.select import category_of

        if (problem := self.library().config_problem()) is not None:  # nothing drawn from half a library
            raise WorkspaceError(f"{problem}; not selecting from an incomplete library (fix gptme.toml)")
        category = category or None  # an empty one (a hook's unset variable) is none, as `select --category ""`
        commands.check_category(category)  # (as given: one line)
        if category is None and self.config.categories:
            category = category_of(context, self.config.categories)
        if category is not None:  # the same lessons and cells either way: they compare kinds (`kind_of`)
            spelt = self.kind_names().spelling(category)  # (as given when the log's could not be given: a tab)
            category = spelt if commands.is_category(spelt) else category
        k = self.config.k if k is None else k
        if log:  # a write: gptme's updates of the state file are logged first, as every write logs them
            self.warnings.extend(self.log_other_update())
        drawn = selection_draw.draw(
            context,
            lambda: self.library().lessons,
            self.posterior,
            self.settings,
            k=k,
            seed=seed,
            session_id=session_id,
            clock=self.clock,
            draws=draws,
            dropout=dropout,
            policy=self.policy if policy is None else policy,
            joint=self.joint_posterior,
            category=category,
            categories=self.config.categories,
            coins=lambda sid: attribution.session_coins(self.root, self.library(), sid),
        )
        selection = drawn.selection
        self.warnings.extend(selection.notes)
        if log:
            earlier = self._reader.index.latest_selection(selection.session_id)
            # (its coins as the dropout log held them under the lock: another select's trial may be logged since)
            selection = selection_draw.log_draw(self.log, drawn, self.root, self.clock, self._check_new, self.guard)
            self._say_torn()
            try:
                self.refresh()
            except StoreError as exc:  # logged: the selection is what was drawn, whatever the read back
                self.warnings.append(f"the selection is logged, but the log cannot be read back now: {exc}")
            except MemoryError:
                self.warnings.append("the selection is logged, but there is not enough memory to read the log back now")
            if earlier is not None:  # (a hook run twice): the record takes the latest selection's lessons
                what = f"category {earlier.category}" if earlier.category is not None else "no category"
                self.warnings.append(
                    f"session {drawn.selection.session_id!r} already had a selection ({what}); this one replaces "
                    "it for the session's record (its lessons, propensities and category)"
                )
        return selection

    def _check_new(self, session_id: str) -> None:
        """Refuse an id already recorded, also in another Unicode form (the two print alike, and `grade`,
        `show` and `undo` take either: a second session under it could not be told from the first)."""
        self.refresh()
        for form in unicode_forms(session_id):
            if self._reader.row_of(form) is not None:
                alike = "" if form == session_id else f" as {form!r} ({unicode_form_name(form)}), another Unicode form"
                raise WorkspaceError(f"session {session_id!r} is already recorded{alike}")

    def record(
        self,
        session_id: str,
        journal: Path | str,
        lessons: Sequence[str],
        *,
        reward: float | None = None,
        category: str | None = None,
        grader: str = "heuristic",
        timestamp: str | None = None,
        outcome: str | None = None,
        during: Sequence[str] = (),
    ) -> Explanation:
        """Log a session: salience from the journal, credit under the current settings. With `outcome`,
        a gptme outcome word (see `outcome_reward`), the event logs the word as gptme does and its
        reward follows the [outcomes] mapping. `during`: lessons included during the session (not
        chosen before it), logged with `"included": "during"`; the lessons the session's logged
        selection chose get `"included": "before"`."""
        if outcome is not None:
            reward = self.outcome_reward(outcome, pending_ok=True)
        category = category or None  # an empty one is none, as `record --category ""` takes it
        grading.check_grader(grader)
        new = commands.recording(
            session_id,
            Path(journal),
            lessons,
            self.library,
            self.root,
            reward=reward,
            category=category,
            grader=grader,
            allow_outside=self.allow_outside_journals,
            outcome=outcome,
            during=during,
        )
        self.warnings.extend(new.notes)
        settings = self.settings
        with record_lock(self.log) as held:  # none on a database: its unique index refuses a second record
            self._check_new(session_id)
            self._refuse_past_lessons(breakdown.lesson_id for breakdown in new.breakdowns)
            session_id, selection = self._selection_of(session_id)
            new = replace(new, session_id=session_id)
            propensity, selected = ({}, ()) if selection is None else (dict(selection.propensity), selection.selected)
            if new.category is None and selection is not None and selection.category is not None:
                new = replace(new, category=selection.category)  # the kind of work it was selected for
            elif selection is not None and not _same_kind(selection.category, new.category):
                self.warnings.append(
                    f"session {session_id!r} was selected for category {selection.category!r} and is recorded as "
                    f"{new.category!r} (--category): its lessons were chosen for {selection.category}"
                )
            if gone := self._gone(new.left_out(selected)):
                self.warnings.append(_gone_warning(session_id, gone))
            if passed := new.passed_over(selection):
                self.warnings.append(_passed_over_warning(session_id, passed))
            event = new.event(settings, propensity, timestamp or iso(self.clock()), selected)
            self.warnings.extend(self._append(event, locked=held))
        if not new.journal.strip():  # logged as given; most likely the wrong file, or one not yet written
            self.warnings.append(f"journal {journal} is empty: every lesson's salience is 0 (its weight the floor)")
        try:
            with reading_back():
                return self.explain(session_id)
        except StoredUnread:
            raise
        except StoreError as exc:  # (the log not read back under the lock: it could not be taken)
            raise StoredUnread.after(exc) from None

    def _gone(self, lesson_ids: Sequence[str]) -> list[str]:
        """Those of `lesson_ids` (a selection's) that the library no longer has, in any Unicode form."""
        if not lesson_ids:
            return []
        library = {one_form(lesson_id) for lesson_id in self.library().by_id()}
        return [lesson_id for lesson_id in lesson_ids if one_form(lesson_id) not in library]

    def _selection_of(self, session_id: str) -> tuple[str, SelectionEvent | None]:
        """The id a session is recorded under and its latest selection: its own, else one logged under another
        Unicode form of the id (`café` with é as one code point, or as `e` and a combining accent: they look
        the same, and `grade` and `show` take either) for which no session is logged (the record is then
        logged under the selection's id: its lessons, propensities, kind of work and dropout trial join it)."""
        selection = self._reader.index.latest_selection(session_id)
        for form in unicode_forms(session_id)[1:] if selection is None else ():
            found = self._reader.index.latest_selection(form)
            if found is not None:  # (no session is recorded under it: `_check_new` refused that)
                self.warnings.append(
                    f"session {session_id!r} ({unicode_form_name(session_id)}) was selected as {form!r} "
                    f"({unicode_form_name(form)}), the same text in another Unicode form: recorded under the "
                    "selection's id"
                )
                return form, found
        return session_id, selection

    def append_grade(
        self,
        session_id: str,
        reward: float | None,
        *,
        grader: str = "manual",
        note: str | None = None,
        expect_line: int | None = None,
        outcome: str | None = None,
        seen_line: int | None = None,
    ) -> GradeAppended:
        """The one writer of a grade event (`reward` None: a retraction), for the CLI and the dashboard.

        With `expect_line`, refuse (GradeConflict, nothing written) unless the session's latest
        grade event is the one at that line. With `seen_line` (the latest grade event the grader was
        shown; 0: none), refuse unless no grade event after it comes from the grader's source or one
        ranked before it (`grading.check_unseen`: a person's grade, the grader's own from another process too; not a
        judge's score under a person's). The event is logged once this returns; what could not
        be done besides (rewriting bandit-state.json) is in the result's `warnings`. With `outcome`, a
        gptme outcome word, the reward is what [outcomes] maps it to, and the event keeps the word."""
        if outcome is not None:
            reward = self.outcome_reward(outcome)
        reward = grading.check_reward(reward)
        grading.check_grader(grader)
        grader = one_form(grader)  # one person however their name is typed, as the log's graders are read
        decide = lambda history, line: (reward, note, grader)  # noqa: E731
        return self._append_grade(session_id, decide, grader, expect_line, outcome, seen_line)

    def grade(
        self,
        session_id: str,
        reward: float | None,
        *,
        grader: str = "manual",
        note: str | None = None,
        outcome: str | None = None,
    ) -> GradeRecord:
        """Append a grade (a number, or a gptme `outcome` word); the latest grade of a session counts."""
        return self.append_grade(session_id, reward, grader=grader, note=note, outcome=outcome).record

    def undo_grade(self, session_id: str, *, grader: str = "manual", note: str | None = None) -> GradeRecord:
        """`grader` undoes their latest grade on the session not undone yet (`append_undo`); the event appended."""
        return self.append_undo(session_id, grader=grader, note=note).record

    def append_undo(
        self,
        session_id: str,
        *,
        grader: str = "manual",
        note: str | None = None,
        expect_line: int | None = None,
        line: int | None = None,
    ) -> GradeAppended:
        """The one undo, for the CLI and the dashboard (grading.undo_of): `grader` takes back their own
        latest grade on the session not undone yet, so their source's score is again what it was before
        it (the result's `undo` says what it undid); never another grader's (NothingToUndo, nothing written).
        Checked under the log lock, so a grade of theirs appended meanwhile is what gets undone, unless
        `expect_line` (the latest grade event's line) or `line` (the event to undo) says otherwise: then
        GradeConflict, nothing written. A refusal's error carries its `UndoRefusal`."""
        grading.check_grader(grader)
        grader = one_form(grader)  # their grades as the log is read: one form of each name
        priority = self.config.reward_priority

        undone: list[grading.Undone] = []  # what `decide` found under the lock

        def decide(history: list[GradeRecord], record_line: int) -> tuple[float | None, str | None, str]:
            sources, recorded = self.reward_sources(session_id), self.record_scores(session_id)
            undone.append(
                grading.undo_of(session_id, history, record_line, grader, note, sources, priority, line, recorded)
            )
            return undone[-1].logged, grading.undo_words(undone[-1]), undone[-1].whose

        return replace(self._append_grade(session_id, decide, grader, expect_line), undo=undone[-1])

    def _append_grade(
        self,
        session_id: str,
        decide: Callable[[list[GradeRecord], int], tuple[float | None, str | None, str]],
        grader: str,
        expect_line: int | None,
        outcome: str | None = None,
        seen_line: int | None = None,
    ) -> GradeAppended:
        """Under the lock: the session's grade history as it is now, checked against `expect_line` and
        `seen_line`, `decide`'s (reward, note, grader) from it and the session's record line, the event
        appended and read back."""
        with self.log.locked():
            self.refresh()
            row = self._row(session_id)
            history = self.grade_history(session_id)
            sources = self.reward_sources(session_id)
            grading.check_expected(session_id, history, expect_line)
            grading.check_unseen(session_id, history, seen_line, grader, self.config.reward_priority)
            reward, note, logged_as = decide(history, self._reader.session_line(row))
            said = self._append(grading.grade_event(session_id, reward, logged_as, self.now_iso(), note, outcome))
            with reading_back():
                after = self.grade_history(session_id)[-1]
                in_force = grading.grade_in_force(self.reward_sources(session_id))
        before, own = grading.grade_in_force(sources), grading.own_source_score(sources, logged_as)
        set_aside = set_aside_notices(self.state_dir)  # caches set aside meanwhile (as `warnings` takes them)
        return GradeAppended(before, after, (*said, *set_aside), own, in_force)

    def add_prior(self, arms: dict[str, tuple[float, float, int]], rewards: dict[str, int] | None = None) -> None:
        """Log starting alpha/beta/n (and gptme's reward counts) for arms, e.g. imported evidence."""
        with self.log.locked():
            self.warnings.extend(self._append(commands.prior_event(arms, rewards, iso(self.clock()))))

    def replay(
        self,
        strategy: str | None = None,
        floor: float | None = None,
        *,
        decay: float | None = None,
        priority: Sequence[str] | None = None,
        write: bool = False,
    ) -> PosteriorTable:
        """Re-fold under other settings or another reward priority (docs/records.md); with `write` they
        become the workspace's settings."""
        settings = commands.settings_with(self.settings, strategy, floor, decay)
        chosen = self.config.reward_priority if priority is None else check_priority(priority)
        if write:
            with self.log.locked():

                def change(c: Config) -> Config:  # what was given, in the file as it is (its priority unless one is)
                    credit = commands.settings_with(c.credit, strategy, floor, decay)
                    return replace(c, credit=credit, reward_priority=c.reward_priority if priority is None else chosen)

                self._save_config(change)
                self._adopt_config(replace(self.config, credit=settings, reward_priority=chosen))
                self.warnings.extend(self._after_write(done="the settings are saved"))
        base = None if chosen == self.data().scores().priority else self.priority_base(chosen)
        return self.lesson_table(settings, base, details=False)

    def save_settings(self, settings: CreditSettings, policy: str | None = None) -> None:
        """Make `settings` (and `policy`, the [select] policy, when given) the workspace's."""
        if policy is None or policy == self.config.policy:
            self.replay(settings.strategy, settings.floor, decay=settings.decay, write=True)
            return
        from lesson_credit.core.bandit.policy import check_policy

        try:
            policy = check_policy(policy)
        except ValueError as exc:
            raise WorkspaceError(str(exc)) from None
        settings = commands.settings_with(self.settings, settings.strategy, settings.floor, settings.decay)

        def change(c: Config) -> Config:  # the rule and the policy, in the file as it is
            credit = commands.settings_with(c.credit, settings.strategy, settings.floor, settings.decay)
            return replace(c, credit=credit, policy=policy)

        with self.log.locked():
            self._save_config(change)
            self._adopt_config(replace(self.config, credit=settings, policy=policy))
            self.warnings.extend(self._after_write(done="the settings are saved"))

    def _adopt_config(self, config: Config) -> None:
        """Hold `config`, which this workspace just saved: when it changes what the workspace reads (the floor weighs
        the analysis' fits, the priority the rewards), the version moves on, as a config.toml changed by another
        process moves it (`_reread_config`): what was kept per version (the dashboard's views) is computed again."""
        self.version += config != self.config
        self.config = config

    def _save_config(self, change: Callable[[Config], Config]) -> None:
        """Write `change` of config.toml as it is now (under the writers' lock): what an operator set
        there since this workspace read it is kept, not written back to what the workspace holds. An
        edit saved while this writes makes it start over from that edit (a few times, then a one-line
        ConfigError, nothing written)."""
        for attempt in range(CONFIG_ATTEMPTS):
            config, text = read_config(self.config_path)
            try:
                save_config(self.config_path, change(config), self.guard, base=text)
                return
            except ConfigChanged:
                if attempt == CONFIG_ATTEMPTS - 1:
                    raise


def _same_kind(selected: str | None, recorded: str | None) -> bool:
    """Whether a record's category is the kind of work its selection was made for (or the selection had
    none), compared as the estimates compare kinds (`kind_of`: stripped, str.lower'd; `Code` is `code`)."""
    return selected is None or kind_of(recorded) == kind_of(selected)


def _gone_warning(session_id: str, gone: Sequence[str]) -> str:
    """What `record` says of lessons its session's selection chose that the library no longer has and it does not
    name (core/analysis/candidacy.py)."""
    them = "it" if len(gone) == 1 else "them"
    return (
        f"session {session_id!r} was selected with {listed([repr(i) for i in gone], 3)}, which the library no longer "
        f"has and this record does not name (renamed since `select`?): the effect estimates weigh {them} in this "
        "session neither as injected nor as not, and a lesson renamed is another lesson (its new name gets no "
        "propensity)"
    )


def _passed_over_warning(session_id: str, passed: Sequence[str]) -> str:
    """What `record` says of lessons it names that its session's selection had as candidates and did not choose, not
    given with --during (core/log/unchosen.py): logged as given, read as included during the session."""
    them = "it" if len(passed) == 1 else "them"
    return (
        f"session {session_id!r}: its selection passed over {listed([repr(i) for i in passed], 3)}; logged, and read "
        f"as included during the session, as --during marks it (the effect estimates do not count {them} as "
        "injected): pass a lesson pulled in mid-session with --during"
    )
