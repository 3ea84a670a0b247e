"""A Sphinx extension: the website works offline, on a phone, and numbers its lessons.

What the theme and the notebook renderer do on their own, and what this changes:

- **Navigation on a phone.** pydata-sphinx-theme 0.17 binds its sidebar buttons to the first
  ``.primary-toggle`` / ``.secondary-toggle`` of the page, a hidden one of its own header;
  the buttons sphinx-book-theme shows do nothing (the lesson list cannot be opened on a phone,
  the sidebar not collapsed on a desktop). ``_static/ratelab-navigation.js`` forwards a click on
  every other toggle to that first one, whose handlers open the dialog on a narrow screen and
  collapse the sidebar on a wide one (a browser test taps the phone's menu and opens a lesson).
- **Nothing from the network.** sphinx-thebe writes its inline configuration once per build
  pass, and Jupyter Book registers it twice: every page declared ``THEBE_JS_URL`` twice and
  logged a console error. Identical inline scripts are kept once (:func:`one_of_each`). A page
  with saved widget state loaded require.js and the widget manager from two CDNs; ``configure``
  sets myst-nb's ``nb_ipywidgets_js`` to nothing, so the saved pictures of the widgets show and
  no script is fetched. The theme's colour mode starts at ``auto`` (unset, a first visit
  logged "invalid theme mode"). A stored animation (matplotlib's JavaScript player, 04)
  links Font Awesome's stylesheet from a CDN for its buttons' icons; the link is taken out of
  the page (:func:`without_outside_links`), whose theme ships Font Awesome itself. The site
  has its icon (``_static/favicon.svg``), so a browser does not ask the server for a
  ``/favicon.ico`` it does not have.
- **Readable figures on a phone.** ``_static/ratelab.css`` keeps a figure at its drawn size
  on a narrow screen, in an output that scrolls sideways, rather than shrinking its labels to
  a few pixels (and lays out the tiles of a wide figure, :mod:`figures`).
- **Numbered lessons.** A lesson's title gets its number (``04 · The live limiter…``) in the
  sidebar and on its page, from the file name, so the order is visible wherever it is listed.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes

STATIC = Path(__file__).resolve().parent / "_static"
LESSON = re.compile(r"^notebooks/(?P<number>\d\d)-[a-z0-9-]+$")


def one_of_each(scripts: list) -> list:
    """`scripts` (a page's ``script_files``) with each repeated script kept once, in order.

    A script is a file name with attributes (an inline one has no name, written ``None`` or
    ``""``, and its ``body``); two entries with the same name, body and attributes load or run
    the same code twice."""
    seen, kept = set(), []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        name = getattr(script, "filename", script) or ""
        key = (str(name), tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


OUTSIDE_LINK = re.compile(r'<link\b[^>]*\bhref="https?://[^"]*"[^>]*>\s*', re.I)
"""A stylesheet or other resource a notebook's output links from the network."""


def without_outside_links(body: str) -> str:
    """A page's body without the ``<link>`` elements that load something from outside the
    site (a page links to other sites with ``<a>``, which stay)."""
    return OUTSIDE_LINK.sub("", body)


def page_context(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = one_of_each(context["script_files"])
    if "body" in context:
        context["body"] = without_outside_links(context["body"])


def number_the_lesson(app, doctree) -> None:
    """The first heading of a lesson notebook gets the number of its file name (it runs before
    Sphinx reads the page's title, so the sidebar and the page agree)."""
    match = LESSON.match(app.env.docname)
    if not match:
        return
    for section in doctree.findall(nodes.section):
        title = section[0]
        if isinstance(title, nodes.title):
            if not title.astext().startswith(match["number"]):
                title.insert(0, nodes.Text(f"{match['number']} · "))
        return


def configure(app, config) -> None:
    config.html_static_path = [*config.html_static_path, str(STATIC)]
    config.html_favicon = str(STATIC / "favicon.svg")
    config.nb_ipywidgets_js = {}
    # The theme writes `localStorage.mode || default_mode` into the page and logs an error
    # when the result is empty: a first visit's every page did, until a mode was stored.
    config.html_context = {**config.html_context, "default_mode": "auto"}


def setup(app):
    app.connect("config-inited", configure)
    app.connect("doctree-read", number_the_lesson, priority=400)  # before the title collector
    app.connect("html-page-context", page_context, priority=900)  # after the other extensions
    app.add_css_file("ratelab.css")
    app.add_js_file("ratelab-navigation.js", defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
