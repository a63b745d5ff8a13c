"""The HTML elements that have no end tag: the tests that parse the built pages with
:class:`html.parser.HTMLParser` push every other start tag on a stack and pop it at its end."""

VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }
)
