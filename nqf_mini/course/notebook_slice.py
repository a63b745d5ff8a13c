"""Which cells of a submitted notebook the grader runs (:func:`cells_to_run`).

A chapter's lecture cells cost most of its run time (training runs, explorers) and
almost never feed an exercise, so the grader skips a lecture cell when skipping it
cannot change an answer. Reading the notebook backwards from the answers (the
expressions the grader evaluates once the notebook has run):

* every cell that is not one of the chapter's lecture cells, character for character
  (the student's own cells, skeletons, answers, edited lecture cells), runs;
* a lecture cell runs when it binds a name that a later running cell (or an answer)
  reads; when it may change the object such a name holds (an item or attribute
  assigned, a method called on it, the object passed to a call or iterated, or a
  function called that does one of these to it); or when it changes state beyond
  names (:class:`CellFacts`: the default dtype or device, seeds and draws from a
  global random generator, the environment, ``sys``, attributes of modules, files,
  processes);
* if a cell that runs, or an answer, reaches names in ways its syntax does not show
  (``eval``, ``exec``, ``globals()``, ``locals()``, ``vars()``, ``__import__``, a star
  import, ``get_ipython`` beyond harmless magics), nothing is skipped.

A skipped cell is thus a lecture cell whose only effects are names that no later
running cell reads, figures and printed output: the answers are those of the full
notebook. A cell that raises before it binds a name leaves that name as it was; the
lecture cells of the course do not raise, so the one case where slicing could differ
is a notebook that breaks the lecture itself (its lecture cells then fail either way).
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

#: Calls that change state beyond the names a cell binds (matched on the last name of
#: a dotted call whose base is an imported name, e.g. ``torch.manual_seed``).
GLOBAL_SETTERS = frozenset(
    {
        "set_default_dtype",
        "set_default_device",
        "set_default_tensor_type",
        "manual_seed",
        "seed",
        "set_rng_state",
        "use_deterministic_algorithms",
        "set_num_threads",
        "set_printoptions",
        "filterwarnings",
        "simplefilter",
        "setrecursionlimit",
        "chdir",
        "putenv",
        "unsetenv",
        "seterr",
    }
)
#: Draws from a global random generator (module functions, without ``generator=``).
GLOBAL_DRAWS = frozenset(
    {
        "randn",
        "rand",
        "randint",
        "randperm",
        "randn_like",
        "rand_like",
        "randint_like",
        "normal",
        "bernoulli",
        "multinomial",
        "poisson",
    }
)
#: In-place draws on a tensor (without ``generator=``).
INPLACE_DRAWS = frozenset(
    {
        "normal_",
        "uniform_",
        "random_",
        "bernoulli_",
        "exponential_",
        "cauchy_",
        "log_normal_",
        "geometric_",
    }
)
#: Builtins that write files or change attributes by name.
BUILTIN_WRITERS = frozenset({"open", "setattr", "delattr"})
#: Functions of imported modules (``os``, ``shutil``, ``torch``, ``np``, ...) that
#: write files, start processes or change the working directory.
MODULE_WRITERS = frozenset(
    {
        "save",
        "savez",
        "savez_compressed",
        "savetxt",
        "remove",
        "unlink",
        "rename",
        "replace",
        "rmtree",
        "mkdir",
        "makedirs",
        "system",
        "run",
        "Popen",
        "call",
        "check_call",
        "check_output",
        "chdir",
        "putenv",
        "copy",
        "copyfile",
        "move",
    }
)
#: Methods that write files.
METHOD_WRITERS = frozenset(
    {"savefig", "to_csv", "write_text", "write_bytes", "mkdir", "unlink", "rmdir", "touch"}
)
#: Library functions that change an argument in place (besides names ending in ``_``).
ARGUMENT_MUTATORS = frozenset(
    {
        "next",
        "copyto",
        "fill_diagonal",
        "put",
        "put_along_axis",
        "place",
        "putmask",
        "shuffle",
        "heappush",
        "heappop",
        "heapify",
        "insort",
    }
)
#: Names that read or write other names dynamically.
DYNAMIC = frozenset(
    {
        "eval",
        "exec",
        "globals",
        "locals",
        "vars",
        "__import__",
        "get_ipython",
        "__dict__",
        "__builtins__",
    }
)
#: Magics (IPython syntax, translated to get_ipython() calls) that touch no names.
HARMLESS_MAGICS = frozenset(
    {"matplotlib", "config", "load_ext", "reload_ext", "autoreload", "env", "pip", "conda"}
)
#: Always-present modules that a cell may use without importing them.
SYSTEM_MODULES = frozenset({"os", "sys", "random", "shutil", "subprocess"})


@dataclass(frozen=True)
class Function:
    """What calling a function (or a class) defined in a cell may do."""

    changes: frozenset[str]
    """Module names it may change (mutate, or assign through ``global``)."""
    calls: frozenset[str]
    """Module names it reads (other functions it may call)."""
    effect: bool
    """It changes state beyond names (see the module docstring)."""
    assigns: frozenset[str] = frozenset()
    """Module names it assigns through ``global``."""


@dataclass(frozen=True)
class CellFacts:
    """What a cell does to the notebook's names, as far as its syntax shows."""

    binds: frozenset[str]
    """Names it may bind or delete."""
    replaces: frozenset[str]
    """Names it certainly binds before it reads them: their earlier values are dead."""
    reads: frozenset[str]
    """Names it reads before it has certainly bound them (a function's body counts
    where the function is defined)."""
    changes: frozenset[str]
    """Names whose objects it may change before it has certainly rebound them."""
    imports: frozenset[str]
    """Names it binds by ``import``."""
    uses: frozenset[str]
    """Every name it mentions (the functions it may call among them)."""
    global_effect: bool
    """It changes state beyond its names."""
    dynamic: bool
    """It reaches names in ways its syntax does not show."""
    functions: dict[str, Function] = field(default_factory=dict)
    """The functions and classes it defines."""
    passes: dict[str, frozenset[str]] = field(default_factory=dict)
    """Names it passes to calls of plain names (callee -> names): changed when the
    callee is one of the notebook's own functions."""


def _python(source: str) -> str:
    """The cell's code with IPython syntax (magics, ``!cmd``) translated."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is in every notebook environment
        return source
    return TransformerManager().transform_cell(source)


def _dotted(node: ast.AST) -> list[str]:
    """``a.b.c`` as ["a", "b", "c"]; [] when the base is not a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return []


def _bases(node: ast.AST | None) -> set[str]:
    """The names whose objects an expression may hand on unchanged or as a view:
    ``X``, ``X[i]``, ``X.T``, ``X.view(...)``, ``(X, Y)``, ``*X``."""
    if node is None:
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        return _bases(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return _bases(node.func.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_bases(e) for e in node.elts)) if node.elts else set()
    if isinstance(node, ast.Dict):
        return set().union(*(_bases(v) for v in node.values)) if node.values else set()
    if isinstance(node, ast.IfExp):
        return _bases(node.body) | _bases(node.orelse)
    if isinstance(node, ast.NamedExpr):
        return _bases(node.value)
    return set()


def _mutated(node: ast.AST, passes: dict[str, set[str]] | None = None) -> set[str]:
    """Names whose objects ``node`` may change: item and attribute stores, in-place
    operators, method calls (on the object), ``out=`` arguments, objects iterated, and
    the arguments of calls that change theirs (:data:`ARGUMENT_MUTATORS`, names ending
    in ``_``). Library functions and methods do not change their other arguments; the
    arguments of every other call are collected in ``passes`` (callee -> names), for
    the notebook's own functions. Without ``passes`` (inside a function's body) every
    argument counts."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assign, ast.Delete)):
            for target in getattr(sub, "targets", []):
                for t in ast.walk(target):
                    if isinstance(t, (ast.Attribute, ast.Subscript)):
                        out |= _bases(t.value)
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
            out |= _bases(sub.target)
        elif isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Attribute):
                out |= _bases(sub.func.value)
            dotted = _dotted(sub.func)
            last = dotted[-1] if dotted else getattr(sub.func, "attr", "")
            args: set[str] = set()
            for arg in [*sub.args, *(k.value for k in sub.keywords if k.arg)]:
                args |= _bases(arg)
            out |= set().union(
                *(_bases(k.value) for k in sub.keywords if k.arg == "out" or k.arg is None)
            )
            if passes is None or last in ARGUMENT_MUTATORS or last.endswith("_"):
                out |= args
            elif len(dotted) == 1:
                passes.setdefault(dotted[0], set()).update(args)
        elif isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
            out |= _bases(sub.iter)
    return out


class _Effects(ast.NodeVisitor):
    """Imports, global effects and dynamic name access of a syntax tree."""

    def __init__(self, imports: set[str] | None = None) -> None:
        self.imports: set[str] = set(imports or ())
        self.effect = False
        self.dynamic = False

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in DYNAMIC:
            self.dynamic = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in DYNAMIC:
            self.dynamic = True
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.dynamic = True
            self.imports.add(alias.asname or alias.name)

    def _stores(self, targets: Sequence[ast.AST]) -> None:
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, (ast.Attribute, ast.Subscript)):
                    if _bases(sub) & (self.imports | SYSTEM_MODULES):
                        self.effect = True  # an attribute of a module, os.environ

    def visit_Assign(self, node: ast.Assign) -> None:
        self._stores(node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._stores([node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._stores([node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._stores(node.targets)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        dotted = _dotted(node.func)
        last = dotted[-1] if dotted else getattr(node.func, "attr", None)
        keywords = {k.arg for k in node.keywords}
        shell = node.func
        if (
            isinstance(shell, ast.Attribute)
            and isinstance(shell.value, ast.Call)
            and isinstance(shell.value.func, ast.Name)
            and shell.value.func.id == "get_ipython"
        ):
            # IPython syntax: harmless magics and shell commands touch no names
            magic = node.args[0] if node.args else None
            harmless = shell.attr in ("system", "getoutput") or (
                shell.attr == "run_line_magic"
                and isinstance(magic, ast.Constant)
                and magic.value in HARMLESS_MAGICS
            )
            self.dynamic = self.dynamic or not harmless
            self.effect = True
            for arg in node.args:
                self.visit(arg)
            return
        if isinstance(node.func, ast.Name) and last in BUILTIN_WRITERS:
            self.effect = True
        if isinstance(node.func, ast.Attribute) and last in METHOD_WRITERS:
            self.effect = True
        if len(dotted) >= 2 and dotted[0] in self.imports | SYSTEM_MODULES:
            if last in GLOBAL_SETTERS or last in MODULE_WRITERS:
                self.effect = True
            if dotted[0] == "random":
                self.effect = True
            if last in GLOBAL_DRAWS and "generator" not in keywords:
                self.effect = True
            if "random" in dotted[1:-1] and last not in ("default_rng", "Generator"):
                self.effect = True
        if last in INPLACE_DRAWS and "generator" not in keywords:
            self.effect = True
        self.generic_visit(node)


def _scope_names(node: ast.AST) -> tuple[set[str], set[str]]:
    """(module names the function, lambda, class or comprehension ``node`` reads when
    it runs, module names it assigns through ``global``)."""
    if isinstance(node, ast.expr):
        node = ast.Expr(value=node)
    table = symtable.symtable(ast.unparse(node), "<scope>", "exec")
    reads: set[str] = set()
    assigns: set[str] = set()

    def walk(t: symtable.SymbolTable) -> None:
        for symbol in t.get_symbols():
            if symbol.is_global():
                if symbol.is_referenced():
                    reads.add(symbol.get_name())
                if symbol.is_declared_global() and symbol.is_assigned():
                    assigns.add(symbol.get_name())
        for child in t.get_children():
            walk(child)

    for child in table.get_children():
        walk(child)
    return reads, assigns


def _loads(node: ast.AST | None) -> set[str]:
    """Module names an expression or simple statement reads when it runs (a lambda's
    or comprehension's own variables excluded)."""
    if node is None:
        return set()
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return _scope_names(node)[0]
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, (ast.Load, ast.Del)) else set()
    out: set[str] = set()
    for child in ast.iter_child_nodes(node):
        out |= _loads(child)
    return out


def _targets(target: ast.AST) -> tuple[set[str], set[str]]:
    """(names a target binds, names it reads): ``a, b`` binds a and b; ``X[i]`` and
    ``X.y`` read X (and i)."""
    if isinstance(target, ast.Name):
        return {target.id}, set()
    if isinstance(target, (ast.Tuple, ast.List)):
        binds: set[str] = set()
        reads: set[str] = set()
        for elt in target.elts:
            b, r = _targets(elt)
            binds |= b
            reads |= r
        return binds, reads
    if isinstance(target, ast.Starred):
        return _targets(target.value)
    return set(), _loads(target)


def _walrus(node: ast.AST) -> set[str]:
    return {n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr)}


class _Flow:
    """Upward-exposed reads and changes of a cell, and the names it certainly binds."""

    def __init__(self, imports: set[str]) -> None:
        self.reads: set[str] = set()
        self.changes: set[str] = set()
        self.passes: dict[str, set[str]] = {}
        self.functions: dict[str, Function] = {}
        self.imports = imports

    def _use(self, node: ast.AST | None, bound: set[str]) -> None:
        if node is not None:
            self.reads |= _loads(node) - bound
            passes: dict[str, set[str]] = {}
            self.changes |= _mutated(node, passes) - bound
            for callee, names in passes.items():
                self.passes.setdefault(callee, set()).update(names - bound)

    def _define(self, stmt: ast.AST, name: str, bound: set[str]) -> None:
        reads, assigns = _scope_names(stmt)
        effects = _Effects(self.imports)
        effects.visit(stmt)
        changes = (_mutated(stmt) & reads) - self.imports | assigns
        self.functions[name] = Function(
            frozenset(changes), frozenset(reads), effects.effect, frozenset(assigns)
        )
        self.reads |= reads - bound

    def body(self, stmts: list[ast.stmt], bound: set[str]) -> None:
        """Walk ``stmts``; ``bound`` grows with what they certainly bind (a statement
        that raises ends the cell, so only branches and loops make a binding
        uncertain)."""
        for stmt in stmts:
            self.statement(stmt, bound)

    def statement(self, stmt: ast.stmt, bound: set[str]) -> None:
        if isinstance(stmt, (ast.If, ast.While)):
            self._use(stmt.test, bound)
            inner = bound | _walrus(stmt.test)
            self.body(stmt.body, set(inner))
            self.body(stmt.orelse, set(inner))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._use(stmt.iter, bound)
            self.changes |= _bases(stmt.iter) - bound
            names, reads = _targets(stmt.target)
            self.reads |= reads - bound
            self.body(stmt.body, bound | names)
            self.body(stmt.orelse, set(bound))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self._use(item.context_expr, bound)
                if item.optional_vars is not None:
                    names, reads = _targets(item.optional_vars)
                    self.reads |= reads - bound
                    bound |= names
            self.body(stmt.body, bound)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            tried = cast(ast.Try, stmt)  # TryStar (3.11+) has the same fields
            self.body(tried.body, set(bound))
            for handler in tried.handlers:
                self._use(handler.type, bound)
                self.body(handler.body, bound | ({handler.name} if handler.name else set()))
            self.body(tried.orelse, set(bound))
            self.body(tried.finalbody, set(bound))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._define(stmt, stmt.name, bound)
            bound.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bound |= {a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"}
        elif isinstance(stmt, ast.Assign):
            self._use(stmt.value, bound)
            new: set[str] = set()
            for target in stmt.targets:
                names, reads = _targets(target)
                self.reads |= reads - bound
                self.changes |= (
                    _mutated(ast.Assign(targets=[target], value=ast.Constant(None))) - bound
                )
                new |= names
            if isinstance(stmt.value, ast.Lambda):
                for name in new:
                    self._define(stmt.value, name, bound)
            bound |= new | _walrus(stmt.value)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            self._use(getattr(stmt, "value", None), bound)
            names, reads = _targets(stmt.target)
            if isinstance(stmt, ast.AugAssign):
                reads |= names
                self.changes |= names - bound
            self.reads |= reads - bound
            self.changes |= _bases(stmt.target) - bound - names
            if getattr(stmt, "value", None) is not None:
                bound |= names
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                names, reads = _targets(target)
                self.reads |= (names | reads) - bound
                if not names:
                    self.changes |= _bases(target) - bound
                bound -= names
        elif not isinstance(stmt, (ast.Global, ast.Nonlocal)):
            self._use(stmt, bound)
            bound |= _walrus(stmt)


def cell_facts(source: str) -> CellFacts:
    """The :class:`CellFacts` of one code cell (a cell that does not parse does
    nothing, so it binds and reads nothing)."""
    code = _python(source)
    try:
        tree = ast.parse(code)
        table = symtable.symtable(code, "<cell>", "exec")
    except (SyntaxError, ValueError):
        empty: frozenset[str] = frozenset()
        return CellFacts(empty, empty, empty, empty, empty, empty, False, False)
    effects = _Effects()
    effects.visit(tree)
    binds = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    flow = _Flow(effects.imports)
    bound: set[str] = set()
    flow.body(tree.body, bound)
    for function in flow.functions.values():
        binds |= function.assigns  # `global` assignments, when it is called
    return CellFacts(
        binds=frozenset(binds),
        replaces=frozenset(bound - flow.reads - flow.changes),
        reads=frozenset(flow.reads),
        changes=frozenset(flow.changes),
        imports=frozenset(effects.imports),
        uses=frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)),
        global_effect=effects.effect,
        dynamic=effects.dynamic,
        functions=flow.functions,
        passes={k: frozenset(v) for k, v in flow.passes.items()},
    )


def _callable_effects(facts: list[CellFacts]) -> dict[str, Function]:
    """Every function the notebook defines, with what calling it may change, the
    functions it calls included (a fixed point; definitions of one name merged)."""
    merged: dict[str, Function] = {}
    for f in facts:
        for name, fn in f.functions.items():
            old = merged.get(name, Function(frozenset(), frozenset(), False))
            merged[name] = Function(
                old.changes | fn.changes,
                old.calls | fn.calls,
                old.effect or fn.effect,
                old.assigns | fn.assigns,
            )
    changed = True
    while changed:
        changed = False
        for name, fn in merged.items():
            callees = [merged[c] for c in fn.calls if c in merged and c != name]
            changes = fn.changes.union(*(c.changes for c in callees))
            effect = fn.effect or any(c.effect for c in callees)
            if changes != fn.changes or effect != fn.effect:
                merged[name] = Function(changes, fn.calls, effect, fn.assigns)
                changed = True
    return merged


def cells_to_run(sources: list[str], lecture: set[str], answers: list[str]) -> list[int]:
    """The indices (into ``sources``, the notebook's code cells in order) of the cells
    to run so that the ``answers`` (expressions evaluated after the last cell) come out
    as in the full notebook; ``lecture``: the sources of the chapter's lecture cells."""
    every = list(range(len(sources)))
    facts = [cell_facts(s) for s in sources]
    needed: set[str] = set()
    for expr in answers:
        found = cell_facts(expr)
        if found.dynamic:
            return every
        needed |= found.reads | found.changes
    functions = _callable_effects(facts)
    imported = set().union(*(f.imports for f in facts), SYSTEM_MODULES)
    named = set().union(*(f.binds for f in facts)) - imported
    run = []
    for index in reversed(every):
        f = facts[index]
        called = [functions[n] for n in f.uses if n in functions]
        changes = f.changes.union(
            *(c.changes for c in called),
            *(names for callee, names in f.passes.items() if callee in functions),
        )
        if (
            sources[index].strip() not in lecture
            or f.global_effect
            or f.dynamic
            or any(c.effect for c in called)
            or f.binds & needed
            or changes & needed & named
        ):
            run.append(index)
            needed = (needed - f.replaces) | f.reads | f.changes
    if any(facts[i].dynamic for i in run):
        return every
    return sorted(run)
