"""Hostile declarations: what a generated ``agent.kdl`` at the declaration bound (1 MiB) costs.

1. ~50k unknown nodes (the class of the issue's 280k-node file, cut to the 1 MiB read bound):
   ``load_agent`` lists 100 diagnostics and counts the rest; median of 5 against ckdl parsing
   the same text (the irreducible cost of reading it at all), as the ratio.
2. A 3 KB declaration nested 500 deep: ``load_agent`` refuses it at the nesting bound; median ms.
3. A ``catalog.kdl`` of 1,000 ``notify`` blocks (issue 31: 38 s when each block was placed by
   walking the text before it): ``parse_catalog_declaration`` median ms, and its ratio to ckdl
   parsing the same text.
``--smoke`` runs the same path once each, the first file cut to a sixteenth of the bound and
the third to 1/16 of the blocks.
Last line: RESULT unknown_nodes=<n> load_ms=<x> ratio_parse=<y> diagnostics=<d> deep_ms=<z>
notify_blocks=<b> notify_ms=<m> notify_ratio_parse=<r>
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

ROUNDS = 5
NOTIFY_BLOCKS = 1000
SMOKE_ROUNDS, SMOKE_FRACTION = 1, 16


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the same path once, at a sixteenth of the bound")
    smoke = parser.parse_args().smoke
    rounds = SMOKE_ROUNDS if smoke else ROUNDS
    import ckdl

    from st2.declarations import load_agent
    from st2.fs.read import DECLARATION_LIMIT

    limit = DECLARATION_LIMIT // SMOKE_FRACTION if smoke else DECLARATION_LIMIT
    with tempfile.TemporaryDirectory() as scratch:
        seat = Path(scratch) / "agents" / "h" / "w"
        seat.mkdir(parents=True)
        lines = ['agent "w" {', '    argv "sh" "-c" "true"']
        size = sum(len(line) + 1 for line in lines) + 2
        count = 0
        while size + 24 < limit:
            line = f"    unknown{count} 1"
            lines.append(line)
            size += len(line) + 1
            count += 1
        text = "\n".join(lines) + "\n}\n"
        path = seat / "agent.kdl"
        path.write_text(text)
        diagnostics = len(load_agent(path)[1])
        load = statistics.median(timed(lambda: load_agent(path)) for _ in range(rounds))
        parse = statistics.median(timed(lambda: ckdl.parse(text, version=2)) for _ in range(rounds))
        print(f"{count} unknown nodes in {len(text.encode())} bytes: load_agent {load:.0f} ms "
              f"({diagnostics} diagnostics), ckdl.parse alone {parse:.0f} ms")
        path.write_text('agent "w" {\n    argv "sh"\n    ' + "x {" * 500 + "}" * 500 + "\n}\n")
        deep = statistics.median(timed(lambda: load_agent(path)) for _ in range(rounds))
        print(f"500-deep declaration refused in {deep:.1f} ms")
    from st2.declarations.catalog import parse_catalog_declaration

    blocks = NOTIFY_BLOCKS // SMOKE_FRACTION if smoke else NOTIFY_BLOCKS
    catalog = "catalog {\n" + "".join(f'    notify {{\n        on "blocked"\n        argv "true" "{index}"\n    }}\n'
                                       for index in range(blocks)) + "}\n"
    assert len(parse_catalog_declaration(catalog)[0].notify) == blocks
    notify = statistics.median(timed(lambda: parse_catalog_declaration(catalog)) for _ in range(rounds))
    notify_parse = statistics.median(timed(lambda: ckdl.parse(catalog, version=2)) for _ in range(rounds))
    print(f"{blocks} notify blocks: parse_catalog_declaration {notify:.0f} ms, ckdl.parse alone {notify_parse:.1f} ms")
    print(f"RESULT unknown_nodes={count} load_ms={load:.0f} ratio_parse={load / parse:.2f} "
          f"diagnostics={diagnostics} deep_ms={deep:.1f} notify_blocks={blocks} notify_ms={notify:.0f} "
          f"notify_ratio_parse={notify / notify_parse:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
