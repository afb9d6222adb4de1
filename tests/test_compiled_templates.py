"""Templates compiled once per machine (`chatparity.compiled`): a second process reads the compiled code, a
damaged or unwritable cache costs a compile and never a wrong render, and a changed setup compiles afresh."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from chatparity.compiled import cache_directory, from_source
from corpora.jinja_env import environment
from reply import rendering

SOURCE = "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}{% endfor %}"
CONTEXT = {"messages": [{"role": "user", "content": " Hi "}, {"role": "assistant", "content": "Yo"}]}
RENDERED = "<user>Hi<assistant>Yo"


class Counted:
    """A new environment of the corpora's setup that counts its compiles."""

    def __init__(self) -> None:
        self.env = environment.__wrapped__()
        self.compiles = 0
        compile_source = self.env.compile

        def counted(source: str, *args: object, **kwargs: object) -> object:
            self.compiles += 1
            return compile_source(source, *args, **kwargs)

        self.env.compile = counted  # type: ignore[method-assign]

    def render(self, setup: Path) -> str:
        """The source, compiled through the cache, rendered."""
        return from_source(self.env, SOURCE, setup).render(**CONTEXT)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module text that made the environment, with the cache under a scratch XDG_CACHE_HOME."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    module = tmp_path / "setup.py"
    module.write_text("env = 'one'\n", encoding="utf-8")
    return module


def test_a_second_environment_reads_the_compiled_code(setup: Path) -> None:
    first, second = Counted(), Counted()
    assert first.render(setup) == RENDERED and first.compiles == 1
    assert second.render(setup) == RENDERED and second.compiles == 0


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_a_damaged_cache_file_is_compiled_over(setup: Path, damage: bytes | None) -> None:
    Counted().render(setup)
    (file,) = cache_directory(setup).iterdir()
    written = file.read_bytes()
    file.write_bytes(written[: len(written) // 2] if damage is None else damage)
    again = Counted()
    assert again.render(setup) == RENDERED and again.compiles == 1
    assert file.read_bytes() == written
    assert Counted().render(setup) == RENDERED


def test_a_cache_that_cannot_be_written_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    module = tmp_path / "setup.py"
    module.write_text("env = 'one'\n", encoding="utf-8")
    counted = Counted()
    assert counted.render(module) == RENDERED and counted.compiles == 1


def test_a_changed_setup_compiles_afresh(setup: Path) -> None:
    Counted().render(setup)
    before = cache_directory(setup)
    setup.write_text("env = 'two'\n", encoding="utf-8")
    assert cache_directory(setup) != before
    again = Counted()
    assert again.render(setup) == RENDERED and again.compiles == 1


def test_a_syntax_error_is_raised_as_jinja2_raises_it(setup: Path) -> None:
    with pytest.raises(jinja2.TemplateSyntaxError) as cached:
        from_source(environment(), "{% if %}", setup)
    with pytest.raises(jinja2.TemplateSyntaxError) as plain:
        environment().from_string("{% if %}")
    assert str(cached.value) == str(plain.value)


def test_the_reply_parser_reads_the_code_an_earlier_process_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    env = rendering._environment()
    compiles: list[str] = []
    compile_source = env.compile

    def counted(source: str, *args: object, **kwargs: object) -> object:
        compiles.append(source)
        return compile_source(source, *args, **kwargs)

    monkeypatch.setattr(env, "compile", counted)
    rendering._compile.cache_clear()
    first = rendering._compile(SOURCE).render(**CONTEXT)
    rendering._compile.cache_clear()
    second = rendering._compile(SOURCE).render(**CONTEXT)
    rendering._compile.cache_clear()
    assert first == second == RENDERED and compiles == [SOURCE]
    assert len(list(cache_directory(Path(rendering.__file__)).iterdir())) == 1
