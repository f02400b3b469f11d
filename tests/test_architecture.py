"""The guard of the layout: which code may import what, and how long modules and functions get.

The source is read with `ast` and nothing is imported, so a breach is found even in a module
that would not import. Every import counts, wherever it stands (in a function, under
`TYPE_CHECKING`); relative imports are resolved first. The rules:

- `casino/`, the game, imports nothing from `ledger` or `api`; `ledger/`, the money, which
  knows nothing of cards, imports nothing from `casino` or `api`.
- In a context of the service, `api/domain/<context>/`, only `routes.py` (the HTTP edge)
  imports `litestar` or `api.http` (its `schemas.py` and `views.py` may build on the shared
  bases of `api.http.schemas`), and only `routes.py`, `schemas.py` and `views.py` import
  `pydantic`. The service code reaches none of them, nor the commands (`cli.py`), through a
  context's modules: it takes and returns plain values, dataclasses and Structs; the adapters
  (`routes.py`, `cli.py`) present them through the schemas.
- No module of `casino/`, `ledger/` or `api/` is longer than 400 lines, and no function
  (method, nested function) longer than 60, counted from its `def` to its last line.

A module that must break a size rule says why in its docstring, in so many words:
"This module is longer than 400 lines because ..." exempts the module, and
"`name` is longer than 60 lines because ..." exempts the function `name` (its own name or
its dotted path, `Class.method`, `outer.inner`), and no other.
"""

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
SIZED_PACKAGES = ("casino", "ledger", "api")
DOMAIN = ROOT / "api" / "domain"
HTTP_EDGE_MODULES = frozenset({"routes.py"})
PYDANTIC_MODULES = frozenset({"routes.py", "schemas.py", "views.py"})
PRESENTATION_MODULES = frozenset({"schemas.py", "views.py"})
ADAPTER_MODULES = frozenset({"routes.py", "cli.py"})


@dataclass(frozen=True, slots=True)
class Function:
    """A function as the size rule sees it."""

    path: str  # dotted within its module: `Class.method`, `outer.inner`
    lines: int
    first_line: int


def _python_files(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py"))


def _domain_files() -> list[Path]:
    return sorted(DOMAIN.glob("*/**/*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _package_of(path: Path) -> list[str]:
    """The package relative imports start from, as parts: `api/http/x.py` and
    `api/http/__init__.py` -> api, http."""
    return list(path.relative_to(ROOT).parts[:-1])


def _imports(path: Path) -> set[str]:
    return _imports_of(_tree(path), _package_of(path))


def _imports_of(tree: ast.Module, package: list[str]) -> set[str]:
    """Every module name the tree imports; `from a import b` counts as `a` and as `a.b`
    (`b` may be a submodule). Relative imports are resolved against `package`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def _forbidden_imports(files: list[Path], packages: tuple[str, ...]) -> list[str]:
    breaches = []
    for path in files:
        names = {name for name in _imports(path) if _within(name, packages)}
        # `from a import b` counts `a.b` too; name `a` alone when it is already named.
        shortest = sorted(name for name in names if name.rpartition(".")[0] not in names)
        breaches += [f"{_name(path)} imports {name}" for name in shortest]
    return breaches


def _functions(node: ast.AST, prefix: str = "") -> Iterator[Function]:
    """Every function under `node`, however deeply nested, with its dotted path."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            path = f"{prefix}{child.name}"
            lines = (child.end_lineno or child.lineno) - child.lineno + 1
            yield Function(path, lines, child.lineno)
            yield from _functions(child, f"{path}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def _says_longer(docstring: str | None, subject: str) -> bool:
    """Whether the docstring says "<subject> is longer than", across line breaks too."""
    text = " ".join((docstring or "").split())
    return f"{subject} is longer than" in text


def _exempt_module(path: Path) -> bool:
    return _says_longer(ast.get_docstring(_tree(path)), "module")


def _exempt_function(path: Path, function: Function) -> bool:
    docstring = ast.get_docstring(_tree(path))
    names = {function.path, function.path.rsplit(".", 1)[-1]}
    return any(_says_longer(docstring, f"`{name}`") for name in names)


def _assert_none(breaches: list[str]) -> None:
    """Fails naming every breach, one a line, not the first few."""
    assert not breaches, "\n".join(["", *breaches])


# imports


def test_casino_imports_neither_the_ledger_nor_the_service() -> None:
    _assert_none(_forbidden_imports(_python_files("casino"), ("ledger", "api")))


def test_the_ledger_imports_neither_the_game_nor_the_service() -> None:
    _assert_none(_forbidden_imports(_python_files("ledger"), ("casino", "api")))


def test_only_a_contexts_routes_import_litestar() -> None:
    files = [path for path in _domain_files() if path.name not in HTTP_EDGE_MODULES]
    _assert_none(_forbidden_imports(files, ("litestar",)))


def test_only_a_contexts_routes_import_the_http_edge_beyond_its_schema_bases() -> None:
    files = [path for path in _domain_files() if path.name not in HTTP_EDGE_MODULES]
    breaches = _forbidden_imports(files, ("api.http",))
    allowed = [
        f"{_name(path)} imports api.http.schemas"
        for path in _domain_files()
        if path.name in PRESENTATION_MODULES
    ]
    _assert_none([breach for breach in breaches if breach not in allowed])


def test_only_a_contexts_routes_schemas_and_views_import_pydantic() -> None:
    files = [path for path in _domain_files() if path.name not in PYDANTIC_MODULES]
    _assert_none(_forbidden_imports(files, ("pydantic",)))


def test_service_code_reaches_no_routes_schemas_views_or_commands() -> None:
    outer = PYDANTIC_MODULES | ADAPTER_MODULES
    outer_modules = tuple(
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in _domain_files()
        if path.name in outer
    )
    files = [path for path in _domain_files() if path.name not in outer]
    _assert_none(_forbidden_imports(files, outer_modules))


# sizes


def test_no_module_is_longer_than_400_lines_unless_it_says_why() -> None:
    too_long = [
        f"{_name(path)}: {lines} lines"
        for path in _python_files(*SIZED_PACKAGES)
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
        and not _exempt_module(path)
    ]
    _assert_none(too_long)


def test_no_function_is_longer_than_60_lines_unless_its_module_says_why() -> None:
    too_long = [
        f"{_name(path)}:{function.first_line} {function.path}: {function.lines} lines"
        for path in _python_files(*SIZED_PACKAGES)
        for function in _functions(_tree(path))
        if function.lines > MAX_FUNCTION_LINES and not _exempt_function(path, function)
    ]
    _assert_none(too_long)


# the guard itself


def test_relative_imports_are_resolved_against_the_package() -> None:
    tree = ast.parse("from ..errors import NotFound\nfrom . import routes\n")
    assert _imports_of(tree, ["api", "domain", "example"]) == {
        "api.domain.errors",
        "api.domain.errors.NotFound",
        "api.domain.example",
        "api.domain.example.routes",
    }


def test_imports_inside_functions_and_type_checking_blocks_count() -> None:
    tree = ast.parse(
        "if TYPE_CHECKING:\n    import litestar\ndef f():\n    from pydantic import BaseModel\n"
    )
    assert {"litestar", "pydantic"} <= _imports_of(tree, ["api"])


def test_nested_functions_and_methods_are_measured_by_their_dotted_path() -> None:
    tree = ast.parse("class C:\n    def m(self):\n        def inner():\n            pass\n")
    assert [(f.path, f.lines) for f in _functions(tree)] == [("C.m", 3), ("C.m.inner", 2)]


def test_only_the_stated_phrase_exempts_a_function() -> None:
    docstring = """Hands.

    `_insert` is longer
    than 60 lines because one statement builds the rows.
    """
    assert _says_longer(docstring, "`_insert`")
    assert not _says_longer(docstring, "`_other`")
    assert not _says_longer("Waits longer than the timeout.", "module")
