"""MkDocs hooks (mkdocs.yml ``hooks:``): the generated parts of the site, from the code.

A line ``<!-- gen: KIND ARG... -->`` in a page becomes ``toolkit.docgen.part(KIND, ARG...)``
(methods, options, instance formats, CLI reference, reproduce targets, results summaries);
``schemas/<problem>.schema.json`` are added to the site (``toolkit.schema``).
"""
from __future__ import annotations

import json
import re

from mkdocs.structure.files import File

MARKER = re.compile(r"^<!-- gen: ([\w-]+)((?: [^ >]+)*) -->$", re.M)


def on_files(files, config):
    import instances
    from toolkit.docgen import derived_schema

    from toolkit.docgen import site_files

    for p in instances.INSTANCE_TYPES:
        files.append(File.generated(config, f"schemas/{p}.schema.json",
                                    content=json.dumps(derived_schema(p), indent=2) + "\n"))
    for uri, path in site_files().items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    from toolkit.docgen import part

    return MARKER.sub(lambda m: part(m.group(1), *m.group(2).split()), markdown)
