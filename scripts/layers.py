#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mailroom's layers, bottom up, and the check that every #include points down.

The table LAYERS below is the one statement of the architecture (docs/design.md, "Layers",
shows it). Each layer owns files: a folder of src/ and some of the installed headers. A file
may include its own layer's files, and the face of a layer below it: that layer's installed
headers and the src/ headers listed as its face; everything else in a layer's src/ folder is
private to it. apps/ and src/matrix see only the public headers (no detail/, no src/). Only
the transport includes <mpi.h> (and the public mpi.hpp, for users who call MPI themselves).

  scripts/layers.py [--root DIR]     check; print each wrong include, exit 1 if any
  scripts/layers.py --count          the same, and a summary (files, edges, wrong edges)
  scripts/layers.py --markdown       the table for docs/design.md ("Layers"), which must match
"""
import argparse
import re
import sys
from pathlib import Path

# Bottom up: (layer, its src/ folder, its installed headers (under include/mailroom), the src/
# headers that the layers above may include (its face), what it owns).
LAYERS = [
    ("common", "src/common",
     ["config.hpp", "error.hpp", "pe.hpp", "version.hpp", "statistics.hpp",
      "detail/thread.hpp", "detail/small_pool.hpp", "detail/callback.hpp",
      "detail/reduction.hpp", "detail/signature.hpp", "detail/index_division.hpp"],
     ["common/environment.hpp", "common/guard.hpp", "common/hooks.hpp", "common/pe_local.hpp",
      "common/trace.hpp"],
     "errors with call sites and the fatal path, the `MAILROOM_*` table, tracing, per-PE globals "
     "(for the simulated machine), mailbox signatures, scope guards, which worker a thread is, "
     "division of global indices"),
    ("transport", "src/transport",
     ["simulate.hpp"],
     ["transport/transport.hpp"],
     "the only code that includes `<mpi.h>` (and the public `mpi.hpp`): init and node layout, channels of byte buffers, "
     "collective contexts, groups, node memory, windows; the simulated machine behind the same "
     "classes, one file per concept per backend"),
    ("aggregation", "src/aggregation",
     ["plan.hpp", "detail/buffer.hpp", "detail/records.hpp", "detail/conveyor_core.hpp",
      "detail/pieces.hpp"],
     ["aggregation/exchange.hpp", "aggregation/memory_plan.hpp", "aggregation/routes.hpp"],
     "the exchange (buffer pool, node slots, arrivals by conveyor id), conveyor_core (lanes, "
     "credits, backlog, forwarding, end of stream), large messages in pieces, routing (direct, "
     "node, mesh), the capacity plan"),
    ("termination", "src/termination",
     ["termination.hpp"],
     ["termination/protocols.hpp"],
     "the dependency graph's analysis (SCCs in topological order, entries) and the protocols "
     "that close its components: end of stream, quiescence waves for cycles and rings"),
    ("runtime", "src/runtime",
     ["runtime.hpp", "mpi.hpp", "task.hpp", "future.hpp", "team.hpp", "detail/tasks.hpp",
      "detail/scheduler.hpp", "detail/send_context.hpp", "detail/lambda_registry.hpp"],
     ["runtime/engine.hpp", "runtime/lifetime.hpp", "runtime/team_state.hpp"],
     "runtime (starts the layers below it; those above start on first use), the progress engine "
     "and watchdog, selector and mailbox cores, workers, tasks and futures, teams, the lambda "
     "registry"),
    ("api", None,
     ["mailbox.hpp", "selector.hpp", "actor.hpp", "join.hpp", "serialized.hpp", "conveyor.hpp",
      "distribution.hpp", "detail/reduce_cache.hpp",
      "detail/mailboxes.hpp", "detail/sends.hpp", "detail/inplace.hpp"],
     [],
     "selectors and actors (typed, variable-size, serialized, lambda and bound messages), "
     "joins, priorities, conveyors, distributions: header-only, on the runtime's cores"),
    ("pgas", "src/pgas",
     ["symmetric.hpp", "collectives.hpp", "gather.hpp", "distributed.hpp", "global_array.hpp"],
     [],
     "the symmetric heap (shared within a node) and one-sided operations, collectives, gather, distributed arrays, the global view (global_array: a page cache written back at barriers)"),
    ("matrix", "src/matrix",
     ["sparse_matrix.hpp", "generators.hpp", "matrix_market.hpp"],
     [],
     "mailroom::matrix, a library on the public API only: CSR matrices, generators, Matrix "
     "Market files"),
    ("apps", "apps", ["mailroom.hpp"], [],
     "mailroom-bench and its kernels, on the public API only (mailroom.hpp, the umbrella, sits "
     "here: it reaches every layer)"),
]

PUBLIC_ONLY = {"matrix", "apps"}  # may include installed non-detail headers only
MPI_ALLOWED = {"transport"}  # and the public mpi.hpp
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def build_index():
    level, owner, face = {}, {}, set()
    for i, (name, folder, headers, src_face, _) in enumerate(LAYERS):
        level[name] = i
        for h in headers:
            owner["include/mailroom/" + h] = name
        if folder:
            owner[folder + "/"] = name
        face.update("src/" + f for f in src_face)
    return level, owner, face


def layer_of(rel, owner):
    if rel in owner:
        return owner[rel]
    best = None
    for key, name in owner.items():
        if key.endswith("/") and rel.startswith(key) and (best is None or len(key) > len(best[0])):
            best = (key, name)
    return best[1] if best else None


def resolve(root, src_file, target):
    """The project file an #include "target" names, relative to root, or None (a system one)."""
    candidates = [src_file.parent / target, root / "include" / target, root / "src" / target,
                  root / "apps" / target]
    for c in candidates:
        if c.is_file():
            return c.resolve().relative_to(root).as_posix()
    return None


def check(root):
    level, owner, face = build_index()
    files = sorted([*root.glob("include/mailroom/**/*.hpp"), *root.glob("src/**/*.[ch]pp"),
                    *root.glob("apps/**/*.[ch]pp")])
    problems, edges, unowned = [], set(), []
    for f in files:
        rel = f.relative_to(root).as_posix()
        mine = layer_of(rel, owner)
        if mine is None:
            unowned.append(rel)
            continue
        for lineno, line in enumerate(f.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            where = f"{rel}:{lineno}"
            if target == "mpi.h":
                if mine not in MPI_ALLOWED and rel != "include/mailroom/mpi.hpp":
                    problems.append(f"{where}: <mpi.h> outside the transport ({mine})")
                continue
            if kind == "<" and not target.startswith("mailroom/"):
                continue  # the system's and the dependencies' headers
            dep = resolve(root, f, target)
            if dep is None:
                continue
            theirs = layer_of(dep, owner)
            if theirs is None:
                problems.append(f"{where}: includes {dep}, which no layer owns")
                continue
            if theirs == mine:
                continue
            edges.add((mine, theirs, rel, dep))
            if level[theirs] > level[mine]:
                problems.append(f"{where}: {mine} includes {dep} of {theirs}, a layer above it")
            elif dep.startswith("src/") and dep not in face:
                problems.append(f"{where}: {mine} includes {dep}, private to {theirs}")
            elif mine in PUBLIC_ONLY and (dep.startswith("src/") or "/detail/" in dep):
                problems.append(f"{where}: {mine} sees the public headers only, not {dep}")
    for rel in unowned:
        problems.append(f"{rel}: in no layer (add it to LAYERS in scripts/layers.py)")
    return files, edges, problems


def markdown():
    """The table docs/design.md shows, between its layers:begin and layers:end markers."""
    rows = ["| layer | folder | installed headers | face in `src/` | owns |", "|---|---|---|---|---|"]
    for name, folder, headers, src_face, owns in LAYERS:
        code = lambda xs: ", ".join(f"`{x}`" for x in xs) or "-"
        rows.append(f"| {name} | {code([folder] if folder else [])} | {code(headers)} | "
                    f"{code(src_face)} | {owns} |")
    return "\n".join(rows) + "\n"


def check_design(root):
    text = (root / "docs" / "design.md").read_text()
    m = re.search(r"<!-- layers:begin -->\n(.*?)<!-- layers:end -->", text, re.S)
    if m is None:
        return ["docs/design.md: no <!-- layers:begin --> ... <!-- layers:end --> table"]
    if m.group(1) != markdown():
        return ["docs/design.md: its table of layers differs from scripts/layers.py's "
                "(scripts/layers.py --markdown prints it)"]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=Path(__file__).resolve().parent.parent, type=Path)
    ap.add_argument("--count", action="store_true", help="print a summary as well")
    ap.add_argument("--markdown", action="store_true", help="print the table for docs/design.md")
    args = ap.parse_args()
    root = args.root.resolve()
    if args.markdown:
        print(markdown(), end="")
        return 0
    files, edges, problems = check(root)
    problems += check_design(root)
    for p in problems:
        print(p)
    if args.count:
        folders = {(a, b) for a, b, _, _ in edges}
        print(f"{len(files)} files, {len(edges)} includes across layers "
              f"({len(folders)} layer pairs), {len(problems)} wrong")
    if problems:
        print(f"layers: {len(problems)} include(s) against the order in scripts/layers.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
