"""catalog.kdl ``notify`` blocks: the operator hooks over fleet events, each problem at its own
line and column (unit tier)."""

from __future__ import annotations

import pytest

from st2.declarations.catalog import CatalogDeclaration, NotifyHook, parse_catalog_declaration


def summary(diagnostics) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.span.line, d.span.column, d.message) for d in diagnostics]


def test_notify_blocks_are_read_in_order_with_their_defaults_and_position():
    declaration, diagnostics = parse_catalog_declaration(
        'catalog {\n'
        '    notify {\n'
        '        on "blocked" "parked" "pause"\n'
        '        argv "notify-send" "st2" "a seat needs you"\n'
        '    }\n'
        '    notify { on "diagnostic"; command "curl -sf --data-binary @- http://127.0.0.1:8080/st2"; '
        'timeout "3s"; rate-limit "0" }\n'
        '}\n')
    assert diagnostics == []
    assert declaration.notify == (
        NotifyHook(("blocked", "parked", "pause"), ("notify-send", "st2", "a seat needs you"), 10.0, 60.0,
                   "catalog.kdl:2:5"),
        NotifyHook(("diagnostic",), ("sh", "-c", "curl -sf --data-binary @- http://127.0.0.1:8080/st2"), 3.0, 0.0,
                   "catalog.kdl:6:5"))


@pytest.mark.parametrize("block, expected", [
    ('notify {\n        on "blockd"\n        argv "x"\n    }',
     [("invalid-value", 3, 12, "`on` names no event kind 'blockd' (kinds: blocked, parked, context, compaction, "
                               "pause, usage-stale, diagnostic, stale, resource, hold)")]),
    ('notify {\n        argv "x"\n    }',
     [("invalid-value", 2, 5, "`notify` needs `on` naming the event kinds it runs for")]),
    ('notify {\n        on "stale"\n    }',
     [("invalid-value", 2, 5, "`notify` needs exactly one of `argv`, `command` or `apprise`")]),
    ('notify {\n        on "stale"\n        argv "a"\n        command "b"\n    }',
     [("argv-and-command", 2, 5, "`notify` needs exactly one of `argv`, `command` or `apprise`")]),
    ('notify {\n        on "stale"\n        argv\n    }',
     [("empty-argv", 4, 9, "`argv` needs at least one string")]),
    ('notify {\n        on "stale"\n        argv "a" 3\n    }',
     [("invalid-value", 4, 18, "`argv` accepts only string arguments, found 3")]),
    ('notify {\n        on "stale"\n        argv "a"\n        timeout "0s"\n    }',
     [("invalid-value", 5, 17, 'timeout "0s" is not a positive duration')]),
    ('notify {\n        on "stale"\n        argv "a"\n        rate-limit "often"\n    }',
     [("invalid-value", 5, 20, 'rate-limit "often" is not a duration')]),
    ('notify {\n        on "stale"\n        argv "a"\n        timeout "99999999999d"\n    }',
     [("invalid-value", 5, 17, 'timeout "99999999999d" is longer than the maximum, 365d')]),
    ('notify {\n        on "stale"\n        argv "a"\n        rate-limit "' + "9" * 400 + 'h"\n    }',
     [("invalid-value", 5, 20, f'rate-limit "{"9" * 24}…" (401 characters) is longer than the maximum, 365d')]),
    ('notify {\n        on "stale"\n        argv "a"\n        colour "red"\n    }',
     [("unknown-node", 5, 9, "unknown notify field `colour` (expected on, argv, command, apprise, timeout or rate-limit)")]),
    ('notify "x" {\n        on "stale"\n        argv "a"\n    }',
     [("invalid-value", 2, 12, "`notify` takes no arguments")]),
    ('notify {\n        on "stale"\n        on "blocked"\n        argv "a"\n    }',
     [("duplicate-field", 4, 9, "`on` is declared more than once in `notify`")]),
], ids=lambda value: f"{len(value)}-characters" if isinstance(value, str) and len(value) > 500 else None)
def test_a_malformed_notify_block_is_refused_at_its_line_and_column(block, expected):
    declaration, diagnostics = parse_catalog_declaration("catalog {\n    " + block + "\n}\n")
    assert summary(diagnostics) == expected
    assert declaration == CatalogDeclaration()


def notify_blocks(count: int) -> str:
    return "catalog {\n" + "".join(f'    notify {{\n        on "blocked"\n        argv "true" "{index}"\n    }}\n'
                                    for index in range(count)) + "}\n"


def parse_work(monkeypatch, count: int) -> int:
    """How many nodes the span walk visits and characters the line index scans while
    ``count`` notify blocks are parsed (the work a quadratic placement repeats per block)."""
    from st2.declarations import spans

    work = [0]
    walk_node, index_text = spans._Walker.node, spans.SourceText.__init__

    def counted_node(self, *arguments, **keywords):
        work[0] += 1
        return walk_node(self, *arguments, **keywords)

    def counted_index(self, text):
        work[0] += len(text)
        index_text(self, text)

    monkeypatch.setattr(spans._Walker, "node", counted_node)
    monkeypatch.setattr(spans.SourceText, "__init__", counted_index)
    declaration, diagnostics = parse_catalog_declaration(notify_blocks(count))
    assert diagnostics == [] and len(declaration.notify) == count
    assert declaration.notify[-1].where == f"catalog.kdl:{2 + 4 * (count - 1)}:5"
    return work[0]


def test_notify_blocks_are_placed_in_linear_work(monkeypatch):
    # Four times the blocks is four times the work (sixteen when each block is placed by walking
    # and indexing the text before it, as 1,000 blocks once took 38 s to parse).
    small, large = parse_work(monkeypatch, 50), parse_work(monkeypatch, 200)
    assert large <= 5 * small, (small, large)
