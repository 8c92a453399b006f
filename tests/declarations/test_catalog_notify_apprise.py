"""catalog.kdl ``notify { apprise … }``: apprise URLs instead of ``argv`` or ``command``, each
problem at its own line and column, and a URL never repeated in a message (it may hold a token)
(unit tier)."""

from __future__ import annotations

import pytest

from st2.declarations.catalog import CatalogDeclaration, NotifyHook, parse_catalog_declaration


def summary(diagnostics) -> list[tuple[str, str, int, int, str]]:
    return [(d.code, d.source, d.span.line, d.span.column, d.message) for d in diagnostics]


def test_an_apprise_block_is_read_with_its_urls_in_order():
    declaration, diagnostics = parse_catalog_declaration(
        'catalog {\n'
        '    notify {\n'
        '        on "blocked" "pause"\n'
        '        apprise "json://127.0.0.1:8080/st2" "ntfy://st2-fleet" "tgram://123:abc/456"\n'
        '        rate-limit "5m"\n'
        '    }\n'
        '}\n')
    assert diagnostics == []
    assert declaration.notify == (
        NotifyHook(("blocked", "pause"), (), 10.0, 300.0, "catalog.kdl:2:5",
                   ("json://127.0.0.1:8080/st2", "ntfy://st2-fleet", "tgram://123:abc/456")),)


BAD_URL = ("invalid-value", "catalog.kdl", 4, 29, "`apprise` URL 2 is not an apprise URL (scheme://…, at most 4096 "
                                                  "characters, nothing unprintable)")


@pytest.mark.parametrize("block, expected", [
    ('notify {\n        on "stale"\n        apprise "ntfy://ok" "secret-token-no-scheme"\n    }', [BAD_URL]),
    ('notify {\n        on "stale"\n        apprise "ntfy://ok" "ntfy://a b"\n    }', [BAD_URL]),
    ('notify {\n        on "stale"\n        apprise "ntfy://ok" "ntfy://\\u{7}x"\n    }', [BAD_URL]),
    ('notify {\n        on "stale"\n        apprise "ntfy://' + "x" * 4100 + '"\n    }',
     [("invalid-value", "catalog.kdl", 4, 17, "`apprise` URL 1 is not an apprise URL (scheme://…, at most 4096 "
                                             "characters, nothing unprintable)")]),
    ('notify {\n        on "stale"\n        apprise\n    }',
     [("invalid-value", "catalog.kdl", 4, 9, "`apprise` needs at least one string")]),
    ('notify {\n        on "stale"\n        apprise "ntfy://ok" 3\n    }',
     [("invalid-value", "catalog.kdl", 4, 29, "`apprise` accepts only string arguments, found 3")]),
    ('notify {\n        on "stale"\n        argv "notify-send"\n        apprise "ntfy://ok"\n    }',
     [("invalid-value", "catalog.kdl", 2, 5, "`notify` needs exactly one of `argv`, `command` or `apprise`")]),
    ('notify {\n        on "stale"\n        command "true"\n        apprise "ntfy://ok"\n    }',
     [("invalid-value", "catalog.kdl", 2, 5, "`notify` needs exactly one of `argv`, `command` or `apprise`")]),
    ('notify {\n        on "stale"\n        apprise "ntfy://a"\n        apprise "ntfy://b"\n    }',
     [("duplicate-field", "catalog.kdl", 5, 9, "`apprise` is declared more than once in `notify`")]),
], ids=lambda value: f"{len(value)}-characters" if isinstance(value, str) and len(value) > 500 else None)
def test_a_malformed_apprise_block_is_refused_at_its_file_line_and_column(block, expected):
    declaration, diagnostics = parse_catalog_declaration("catalog {\n    " + block + "\n}\n")
    assert summary(diagnostics) == expected
    assert declaration == CatalogDeclaration()
    assert not any("secret-token" in str(diagnostic) for diagnostic in diagnostics)


def test_the_rendered_diagnostic_names_file_line_and_column():
    _, [diagnostic] = parse_catalog_declaration(
        'catalog {\n    notify {\n        on "stale"\n        apprise "nope"\n    }\n}\n')
    assert str(diagnostic).splitlines()[0].startswith("catalog.kdl:4:17: error[invalid-value]: `apprise` URL 1 ")
