"""A Griffe extension (mkdocs.yml, mkdocstrings ``extensions:``): the Sphinx roles of every
docstring the API reference loads (``:func:`solve```, ``:class:`~toolkit.run.Interrupted```)
become links, resolved in the docstring's own scope as Python would
(``toolkit.docgen.sphinx_roles``), instead of showing as raw text."""
from __future__ import annotations

import griffe

from toolkit.docgen import sphinx_roles


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj, **kwargs) -> None:
        if obj.docstring is None:
            return

        def resolve(name: str):
            try:
                return obj.resolve(name)
            except Exception:           # a name the docstring's scope does not hold
                return None

        obj.docstring.value = sphinx_roles(obj.docstring.value, resolve)
