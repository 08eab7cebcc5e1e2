"""What `lint` and the warnings of `status` call each kind of problem found loading the library."""

from __future__ import annotations

from dataclasses import dataclass

from lesson_credit.core.library.lessons import ALIASED, BROKEN, GPTME, IGNORED, OVERRIDDEN, SKIPPED


@dataclass(frozen=True)
class ProblemKind:
    kind: str  # LessonProblem.kind
    code: str  # lint's finding
    severity: str  # lint's: "error" or "warning" (core.health's ERROR, WARNING)
    what: tuple[str, str]  # lint's message, "N {what}: the first few": for one, and for more than one
    advice: str
    label: str  # what a table form's warning line says before the path: "warning: {label}{path}: {reason}"

    def counted(self, n: int) -> str:
        """`1 lesson file could not be loaded`, `2 lesson files could not be loaded`."""
        return f"{n} {self.what[0] if n == 1 else self.what[1]}"


KINDS = (  # a finding per kind; gptme.toml's own problems (CONFIG) are core.health.library_config's
    ProblemKind(
        BROKEN,
        "broken-lessons",
        "error",
        ("lesson file could not be loaded", "lesson files could not be loaded"),
        "Fix what each reason names (their frontmatter, line endings, encoding, a link to nothing); until then "
        "they are never selected, and none of their settings (status, keywords) is used.",
        "skipped lesson ",
    ),
    ProblemKind(
        IGNORED,
        "lesson-parts-ignored",
        "error",
        ("pattern or keyword of loaded lessons is not used", "patterns or keywords of loaded lessons are not used"),
        "Fix or simplify what each reason names (an invalid regex, counted repeats that expand too far, a "
        "wildcard of too many parts, a keyword too long, a list entry that is not text: quote it); the rest of each "
        "lesson is used meanwhile.",
        "",
    ),
    ProblemKind(
        GPTME,
        "lesson-gptme-differs",
        "warning",
        (
            "lesson file that gptme reads otherwise (its keyword matching disagrees with these numbers)",
            "lesson files that gptme reads otherwise (its keyword matching disagrees with these numbers)",
        ),
        "Fix what each reason names (what comes before the opening `---`, an empty setting, a `---` inside the "
        "frontmatter) so that gptme reads the file as lesson-credit does; lesson-credit uses all of it meanwhile.",
        "",
    ),
    ProblemKind(
        OVERRIDDEN,
        "lesson-overridden",
        "warning",
        (
            "lesson file shares an id with one in an earlier [lessons] dir, which wins (gptme's rule)",
            "lesson files share an id with one in an earlier [lessons] dir, which wins (gptme's rule)",
        ),
        "Nothing to do for a deliberate override; rename one of the files if both should load.",
        "overridden lesson ",
    ),
    ProblemKind(
        SKIPPED,
        "lesson-paths-skipped",
        "warning",
        ("path in the library is not read as a lesson", "paths in the library are not read as lessons"),
        "A folder named like a lesson file: rename it (its lessons are read meanwhile). A linked folder: name "
        "it in gptme.toml [lessons] dirs (one outside the workspace also needs LESSON_CREDIT_ALLOW_OUTSIDE=1); "
        "linked lesson files are read. A link to nothing: fetch what it points to (a submodule not checked out?).",
        "skipped ",
    ),
    ProblemKind(
        ALIASED,
        "lesson-aliased",
        "warning",
        (
            "lesson file reached by a second path, each path its own arm (one lesson counted twice)",
            "lesson files reached by a second path, each path its own arm (one lesson counted twice)",
        ),
        "Remove the extra path (a link, most often) unless both ids are meant; gptme reads such a file once. "
        "Evidence logged under the removed id stays in the log: retire it with `lesson-credit prune`.",
        "aliased lesson ",
    ),
)
