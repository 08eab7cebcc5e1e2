"""`config.toml` (docs/format.md §9) read and written as a person wrote it: a save keeps comments,
order, quoting and tables we do not know; a misspelt key or a value of the wrong type is a one-line
error; only a regular file under the size cap is read."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from msgspec.structs import replace

from lesson_credit.core.bandit.config import ConfigError, load_config, save_config
from lesson_credit.core.base.safe_read import SETTINGS_MAX_BYTES
from lesson_credit.core.model.settings import CreditSettings
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import CONFIG_REL, LOG_REL, make_workspace, session

WRITTEN = """\
# our settings: keep this comment
strategy = "seed"   # the update rule
"k" = 3

[prior]
alpha = 2.0   # two pseudo-successes

[store]
url = ""
options = ["sslmode=require", "connect_timeout=5"]   # a list: the old writer dropped the whole table

[tools."my tool"]
"a.b" = 1
"""


def test_a_save_changes_only_the_values_that_changed(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(WRITTEN)
    config = load_config(path)
    save_config(path, replace(config, credit=replace(config.credit, strategy="evidence", floor=0.1)))
    # by hand: strategy's value replaced in place, floor (absent, 0.1 is not what absence means) added
    # after the last top-level key, decay (absent, 1.0 is what absence means) not written; nothing else
    # moves. The old writer dropped every comment, the [store] table (so the workspace fell back to the
    # file store) and [tools."my tool"].
    expected = WRITTEN.replace('strategy = "seed"', 'strategy = "evidence"').replace(
        '"k" = 3\n', '"k" = 3\nfloor = 0.1\n'
    )
    assert path.read_text() == expected
    again = load_config(path)
    assert again.credit == CreditSettings("evidence", 0.1, 1.0, 2.0, 1.0) and again.k == 3
    assert again.extra["store"]["options"] == ["sslmode=require", "connect_timeout=5"]
    assert again.extra["tools"] == {"my tool": {"a.b": 1}}


def test_a_save_into_no_file_writes_the_settings(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    save_config(path, replace(load_config(path), credit=CreditSettings("uniform", 0.2, 0.5)))
    data = tomllib.loads(path.read_text())
    assert data == {"strategy": "uniform", "floor": 0.2, "decay": 0.5}  # defaults (k, prior) left out
    assert load_config(path).credit == CreditSettings("uniform", 0.2, 0.5)


def test_replay_write_keeps_the_file_as_written(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})], config=WRITTEN)
    code, _out, err = run_cli("replay", "--workspace", str(root), "--strategy", "uniform", "--write")
    assert code == 0, err
    text = (root / CONFIG_REL).read_text()
    assert "# our settings: keep this comment" in text and '"k" = 3' in text and 'options = ["sslmode' in text
    assert 'strategy = "uniform"   # the update rule' in text
    code, _out, err = run_cli("status", "--workspace", str(root))  # the file still reads (quoting kept)
    assert code == 0, err


COMMENTED = """\
# settings of the team's workspace
strategy = "seed"   # the update rule

# two pseudo-successes: new lessons start hopeful
[prior]
alpha = 2.0
"""


def test_replay_write_keeps_each_comment_next_to_what_it_is_about(tmp_path: Path) -> None:
    """tomlkit puts a new top-level key just before the first table, below the comment about that table;
    and decay = 1.0 was written though nobody set it (1.0 is what its absence means)."""
    root = make_workspace(
        tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})], config=COMMENTED
    )
    code, _out, err = run_cli("replay", "--workspace", str(root), "--strategy", "uniform", "--floor", "0.1", "--write")
    assert code == 0, err
    # by hand: strategy changed in place, floor added after it (the last top-level key), the table's comment
    # still right above [prior], and no decay
    expected = """\
# settings of the team's workspace
strategy = "uniform"   # the update rule
floor = 0.1

# two pseudo-successes: new lessons start hopeful
[prior]
alpha = 2.0
"""
    assert (root / CONFIG_REL).read_text() == expected
    assert load_config(root / CONFIG_REL).credit == CreditSettings("uniform", 0.1, 1.0, 2.0, 1.0)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (  # a header, a blank line, then the table's own comment: the key goes under the header
            "# our settings\n\n# the prior\n[prior]\nalpha = 2.0\n",
            '# our settings\nstrategy = "uniform"\n\n# the prior\n[prior]\nalpha = 2.0\n',
        ),
        (  # only the table's comment: the key goes above it, a blank line between
            "# the prior\n[prior]\nalpha = 2.0\n",
            'strategy = "uniform"\n\n# the prior\n[prior]\nalpha = 2.0\n',
        ),
        (  # a comment under the last key, a blank line, then a table: the key goes below that comment
            "k = 3\n# three a session\n\n[prior]\nalpha = 2.0\n",
            'k = 3\n# three a session\nstrategy = "uniform"\n\n[prior]\nalpha = 2.0\n',
        ),
    ],
    ids=["header-then-table-comment", "table-comment-only", "comment-under-a-key"],
)
def test_a_new_key_never_lands_between_a_table_and_its_comment(tmp_path: Path, before: str, after: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(before)
    config = load_config(path)
    save_config(path, replace(config, credit=replace(config.credit, strategy="uniform")))
    assert path.read_text() == after
    assert load_config(path).credit.strategy == "uniform"


def test_a_save_of_the_values_absence_means_adds_no_key(tmp_path: Path) -> None:
    """seed, 0.3 and 1.0 are what no strategy, floor and decay mean: a save of them into a file without
    those keys leaves it as it was; a key the file has keeps being written, default or not."""
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    config = load_config(path)
    save_config(path, replace(config, credit=replace(config.credit, strategy="seed", floor=0.3, decay=1.0)))
    assert path.read_text() == COMMENTED
    path.write_text('strategy = "uniform"\nfloor = 0.1\n')
    config = load_config(path)
    save_config(path, replace(config, credit=CreditSettings("seed", 0.3, 1.0)))
    assert path.read_text() == 'strategy = "seed"\nfloor = 0.3\n'


def test_saving_a_policy_writes_through_a_link_inside_the_workspace(tmp_path: Path) -> None:
    """config.toml linked to a file inside the workspace (a shared settings file): saving a policy (the
    dashboard's what-if) writes the file it points to, as `replay --write` does (docs/trust.md). Before,
    this path wrote without the workspace's guard and refused any link."""
    from lesson_credit.core.workspace import Workspace

    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})])
    shared = root / "settings.toml"
    shared.write_text('strategy = "seed"\n')
    (root / CONFIG_REL).symlink_to(os.path.relpath(shared, (root / CONFIG_REL).parent))
    ws = Workspace(root)
    ws.save_settings(CreditSettings(strategy="evidence"), policy="seed")
    assert (root / CONFIG_REL).is_symlink()
    assert load_config(shared).policy == "seed" and load_config(shared).credit.strategy == "evidence"


UNKNOWN_KEYS = [
    ('stratgy = "evidence"\n', "unknown key 'stratgy' (did you mean 'strategy'?)"),
    ("flor = 0.2\n", "unknown key 'flor' (did you mean 'floor'?)"),
    ("[prior]\nalpah = 2.0\n", "[prior] unknown key 'alpah' (did you mean 'alpha'?)"),
    ('[select]\npolcy = "joint"\n', "[select] unknown key 'polcy' (did you mean 'policy'?)"),
    ("[recrods]\nwindow = 60\n", "unknown key 'recrods' (did you mean 'records'?)"),
    ("colour = 3\n", "unknown key 'colour' (known: strategy, floor, decay, k, prior,"),
]
# docs/format.md §9: a wrong type is an error (a string floor was converted and used)
WRONG_TYPES = [
    ('floor = "0.3"\n', "floor must be a number, got '0.3'"),
    ('decay = "1"\n', "decay must be a number, got '1'"),
    ("floor = true\n", "floor must be a number, got True"),
    ("strategy = 1\n", "strategy must be a string, got 1"),
    ('[prior]\nalpha = "2"\n', "[prior] alpha must be a number, got '2'"),
]


@pytest.mark.parametrize(("text", "message"), UNKNOWN_KEYS + WRONG_TYPES)
def test_an_unknown_key_or_a_wrong_type_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    """An unknown key names the nearest known one; a value of the wrong type names its type."""
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value) and "\n" not in str(info.value)


# a setting written below a [table] line is that table's key in TOML: before, in [outcomes] it became an outcome
# word ('decay' worth 0.97), in [store] or another tool's table it was ignored, the default in force without a word
SWALLOWED = [
    ("[outcomes]\nnoop = 0.5\ndecay = 0.97\n", "decay is inside [outcomes]"),
    ('[store]\nurl = ""\nfloor = 0.5\n', "floor is inside [store]"),
    ("[team]\nk = 3\n", "k is inside [team]"),
    ('[select]\npolicy = "seed"\nstrategy = "evidence"\n', "strategy is inside [select]"),
    # nested tables too, named as their line names them (before: only top-level tables were looked in, decay 1.0)
    ("[store.options]\nssl = true\ndecay = 0.97\n", "decay is inside [store.options]"),
    ("[mytool.sub]\ndecay = 0.97\n", "decay is inside [mytool.sub]"),
    ("[mytool]\nname = 1\n[mytool.sub]\nk = 3\n", "k is inside [mytool.sub]"),
    ('[[mytool.runs]]\nname = "a"\nfloor = 0.5\n', "floor is inside [[mytool.runs]]"),
]


@pytest.mark.parametrize(("text", "message"), SWALLOWED)
def test_a_setting_below_a_table_line_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_same_settings_above_the_first_table_line_are_read(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('decay = 0.97\nfloor = 0.5\nk = 3\n[outcomes]\nnoop = 0.5\n[store]\nurl = ""\n[team]\nname = "b"\n')
    config = load_config(path)
    assert (config.credit.decay, config.credit.floor, config.k) == (0.97, 0.5, 3)
    assert config.outcome_overrides == {"noop": 0.5}
    # a category may have any name, a setting's among them (its value must be keywords)
    path.write_text('[categories]\ndecay = ["slow"]\n')
    assert load_config(path).categories == {"decay": ("slow",)}


def test_a_setting_named_inside_another_tools_table_on_its_own_line_is_that_tools(tmp_path: Path) -> None:
    """An inline table or a dotted key names its table on the setting's own line: no [table] line took it there, so it
    is the other tool's setting (before: refused, saying "TOML reads every key below a [table] line")."""
    path = tmp_path / "config.toml"
    path.write_text("decay = 0.9\nmytool = {decay = 0.97}\nother.k = 3\n[third]\nsub = {floor = 0.5}\n")
    config = load_config(path)
    assert (config.credit.decay, config.k) == (0.9, 10)  # (k: the default, 10)
    assert config.extra == {"mytool": {"decay": 0.97}, "other": {"k": 3}, "third": {"sub": {"floor": 0.5}}}


def test_a_table_we_do_not_know_is_kept_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[team]\nname = "blue"\n')
    assert load_config(path).extra == {"team": {"name": "blue"}}


# ---------------------------------------------------------------- what is read


def _status(root: Path) -> tuple[int, str, str]:
    return run_cli("status", "--workspace", str(root))


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_a_config_that_is_not_a_regular_file_is_a_one_line_error(tmp_path: Path, kind: str) -> None:
    """A directory in config.toml's place was ignored and the defaults used."""
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})])
    before = (root / LOG_REL).read_bytes()
    if kind == "directory":
        (root / CONFIG_REL).mkdir()
    else:
        os.mkfifo(root / CONFIG_REL)
    code, out, err = _status(root)
    assert code == 1 and out == "", err
    assert err.count("\n") == 1 and "config.toml" in err
    assert ("a directory" if kind == "directory" else "a FIFO") in err
    assert (root / LOG_REL).read_bytes() == before


def test_a_config_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    """A 2 GB sparse file was read whole (4 GB of memory); one byte over the cap is refused by its
    size alone: a TOML comment, valid to the end, that the old reader accepted."""
    path = tmp_path / "config.toml"
    path.write_bytes(b"#" * SETTINGS_MAX_BYTES + b"\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "larger than 1 MB" in str(info.value) and "\n" not in str(info.value)
    path.write_bytes(b"#" * (SETTINGS_MAX_BYTES - 1) + b"\n")  # at the cap: read
    assert load_config(path).k == 10


SHAPES = {
    "dotted-keys": "prior.alpha = 2.0\nk = 3\n",
    "split-table": '[store]\nurl = ""\n[prior]\nalpha = 2.0\n[store.options]\nssl = "require"\n',
    "crlf": "k = 3\r\n[prior]\r\nalpha = 2.0\r\n",
    "comment-only": "# nothing set yet\n",
    "sub-table-first": "k = 3  # c\n[team.a]\nx = 1\n[team]\ny = 2\n",
    "after-tables": "[prior]\nalpha = 2.0\n\n[outcomes]\nnoop = 0.5\n",
}


@pytest.mark.smoke
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_save_reads_back_whatever_the_file_shape(tmp_path: Path, shape: str) -> None:
    """The TOML library edits each shape a person may write: pyproject.toml's lower bound for tomlkit
    is the lowest release that passes this."""
    path = tmp_path / "config.toml"
    path.write_bytes(SHAPES[shape].encode())
    config = load_config(path)
    wanted = replace(config.credit, strategy="uniform", floor=0.25, prior_beta=3.0)
    save_config(path, replace(config, credit=wanted))
    again = load_config(path)
    assert again.credit == wanted and again.k == config.k and again.outcomes == config.outcomes
    text = path.read_bytes().decode()
    assert all(line in text for line in SHAPES[shape].splitlines())  # every line the person wrote is kept


@pytest.mark.parametrize("kind", ["directory", "fifo", "too-big"])
def test_a_gptme_toml_that_cannot_be_read_is_named_once_with_why(tmp_path: Path, kind: str) -> None:
    """gptme.toml was already read capped; its message named the file twice ("x: cannot read: x: ...")."""
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")})
    toml = root / "gptme.toml"
    if kind == "directory":
        toml.mkdir()
    elif kind == "fifo":
        os.mkfifo(toml)
    else:
        toml.write_bytes(b"#" * SETTINGS_MAX_BYTES + b"\n")
    (root / "ctx.txt").write_text("git")
    code, out, err = run_cli("select", "-w", str(root), "--context", str(root / "ctx.txt"))
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.count("gptme.toml") == 2, err  # the file, then "fix gptme.toml"
    assert {"directory": "a directory", "fifo": "a FIFO", "too-big": "larger than 1 MB"}[kind] in err
    assert not (root / LOG_REL).exists()


def test_a_save_keeps_an_operator_s_edit_made_since_the_workspace_read_the_file(tmp_path: Path) -> None:
    """The dashboard read config.toml when it opened; the operator then set k and [prior] alpha by hand.
    Saving a floor (what-if ctrl+s, `replay --write`) wrote every setting the workspace held: k back to
    3 and alpha back to 2.0, the hand edit lost. A save now changes only what it was asked to change,
    in the file as it is."""
    from lesson_credit.core.workspace import Workspace

    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})], config=WRITTEN)
    ws = Workspace(root)
    edited = WRITTEN.replace('"k" = 3', '"k" = 7   # set by hand').replace("alpha = 2.0", "alpha = 4.0")
    (root / CONFIG_REL).write_text(edited)
    ws.replay(floor=0.1, write=True)
    # by hand: as test_a_save_changes_only_the_values_that_changed, floor (absent, not its default) added
    # after the last top-level key, decay (its default) not; the hand-set k and alpha, and their comment,
    # as the operator wrote them
    assert (root / CONFIG_REL).read_text() == edited.replace(
        '"k" = 7   # set by hand\n', '"k" = 7   # set by hand\nfloor = 0.1\n'
    )
    saved = load_config(root / CONFIG_REL)
    assert (saved.k, saved.credit.prior_alpha, saved.credit.floor) == (7, 4.0, 0.1)


def test_a_save_starts_over_from_an_edit_saved_while_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor saved config.toml between the save's read of it and its replacement: the save starts
    over from the edited file instead of replacing it."""
    import tomlkit

    from lesson_credit.core.workspace import Workspace

    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})], config=WRITTEN)
    ws = Workspace(root)
    dumps = tomlkit.dumps
    edited = WRITTEN.replace('"k" = 3', '"k" = 5')

    def editor_saves_meanwhile(doc: object) -> str:
        if 'k" = 5' not in (root / CONFIG_REL).read_text():
            (root / CONFIG_REL).write_text(edited)
        return dumps(doc)  # type: ignore[arg-type]

    monkeypatch.setattr(tomlkit, "dumps", editor_saves_meanwhile)
    ws.replay(strategy="uniform", write=True)
    text = (root / CONFIG_REL).read_text()
    # the edited k kept; strategy changed in place; floor and decay (absent, at their defaults) not written
    assert text == edited.replace('strategy = "seed"', 'strategy = "uniform"')


def test_a_save_an_editor_keeps_changing_is_refused_for_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor saving config.toml during each of the save's attempts: nothing written by us (the last
    edit stays), a temporary failure (exit 75) that says why."""
    import tomlkit

    from lesson_credit.core.bandit.config import ConfigChanged
    from lesson_credit.core.base.errors import TemporaryFailure
    from lesson_credit.core.workspace import Workspace

    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 1.0, {"a.md": 1.0})], config=WRITTEN)
    ws = Workspace(root)
    dumps = tomlkit.dumps
    edits = iter(range(4, 100))

    def editor_saves_every_time(doc: object) -> str:
        (root / CONFIG_REL).write_text(WRITTEN.replace('"k" = 3', f'"k" = {next(edits)}'))
        return dumps(doc)  # type: ignore[arg-type]

    monkeypatch.setattr(tomlkit, "dumps", editor_saves_every_time)
    with pytest.raises(ConfigChanged, match="changed while it was being saved; nothing written") as raised:
        ws.replay(strategy="uniform", write=True)
    assert isinstance(raised.value, TemporaryFailure)
    assert (root / CONFIG_REL).read_text() == WRITTEN.replace('"k" = 3', '"k" = 6')  # the third edit, as saved
    assert ws.config.credit.strategy == "seed"


def test_an_empty_config_edited_while_it_is_saved_is_not_replaced(tmp_path: Path) -> None:
    """config.toml empty when read (its text is ""): an edit saved before the replacement is seen, as for
    any other text. The save took "" for "no text given" and wrote over the edit."""
    from lesson_credit.core.bandit.config import ConfigChanged, read_config

    path = tmp_path / "config.toml"
    path.write_text("")
    config, text = read_config(path)
    assert text == ""
    path.write_text("k = 9   # set by hand\n")  # an editor's save after our read
    with pytest.raises(ConfigChanged):
        save_config(path, replace(config, credit=replace(config.credit, strategy="uniform")), base=text)
    assert path.read_text() == "k = 9   # set by hand\n"
