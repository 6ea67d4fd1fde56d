"""YAML from someone else (``skillbridge.yaml``, ``train -c FILE``, suite files), loaded safely.

``yaml.safe_load`` builds no Python objects beyond plain data, but it still honours anchors
and aliases: nine lines of a "billion laughs" file name 10^9 strings through shared
references, and whatever walks the result afterwards (pydantic validation, an error message,
``json.dumps``) expands it, for minutes and gigabytes. None of our files needs an anchor, so
the loader refuses any anchor or alias as it composes the document, before anything is
expanded, with one line naming where it stands. Nesting deep enough to exhaust the
composer's recursion is refused the same way.
"""

from __future__ import annotations

from typing import Any

import yaml


class YamlError(ValueError):
    """Text that is not YAML we accept: one line, with the line and column where known."""


class YamlTooDeep(YamlError):
    """Nesting deeper than the composer's recursion allows (no config is nearly that deep)."""


def _where(mark: Any) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


class _NoAliasLoader(yaml.SafeLoader):
    """A safe loader that stops at the first anchor or alias, before composing it (the pure
    Python one: libyaml's C loader composes in C, out of reach of this check)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise YamlError(
                "anchors and aliases (&name, *name) are not accepted"
                + _where(getattr(event, "start_mark", None))
            )
        return super().compose_node(parent, index)


def load(text: str) -> Any:
    """The data of one YAML document, or :class:`YamlError` (no anchors, no aliases)."""
    loader = _NoAliasLoader(text)
    try:
        return loader.get_single_data()
    except RecursionError:
        raise YamlTooDeep("nested too deeply") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or (str(e).splitlines() or [type(e).__name__])[0]
        raise YamlError(f"{problem}{_where(mark)}") from None
    finally:
        loader.dispose()
