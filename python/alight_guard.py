"""alight's pytest plugin for grading (src/eval/grade/pytest-results.ts).

Loaded with `-p alight_guard` before any code under test is imported, it takes the grade's key (a file it reads and
removes, so that code that runs later cannot read it), watches the run for tampering and, when pytest is done, writes
each test's outcome and what it saw, signed with the key, to the grade's results folder. The grader trusts passing
results only when the signature holds and nothing was seen. What it watches, between collection and each test and at
the end: the collected test functions' code, profile and trace hooks, the objects of the test framework that decide
and report outcomes, the implementations of those hooks, and where an xfail was raised from. It runs in the process
under test, so code that finds it can defeat it: it raises the bar; the grader's static flags are the other half.

Written for every Python and pytest that SWE-bench images carry (3.6+, pytest 3+).
"""

import ast
import json
import os
import re
import sys
import threading
import types
import unittest

import pytest

# The guard's own state; None when the grade gave no key (a nested pytest, or a run outside a grade).
_guard = None

# Test code as the grader's guards name it (src/data/patch.ts): tests, testing folders, test_*.py, *_test(s).py,
# conftest.py.
_test_path = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_tests?\.py$|(^|/)conftest\.py$")

# The framework's objects that decide and report an outcome: their identity (and their code's) must not change.
_framework_modules = (
    "pytest",
    "_pytest.reports",
    "_pytest.runner",
    "_pytest.outcomes",
    "_pytest.skipping",
    "_pytest.python",
    "_pytest.terminal",
    "_pytest.main",
    "_pytest.assertion.rewrite",
    "_pytest.python_api",
    "_pytest.approx",
    "unittest.case",
    "pluggy",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy.callers",
    "pluggy.hooks",
    "pluggy.manager",
)

_outcome_hooks = (
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_runtest_teardown",
    "pytest_pyfunc_call",
    "pytest_runtest_makereport",
    "pytest_runtest_logreport",
    "pytest_report_teststatus",
    "pytest_terminal_summary",
    "pytest_sessionfinish",
)


class Tampered(Exception):
    """Raised into the test that was tampered with, so that it cannot pass either."""


class _Guard:
    def __init__(self, folder, key):
        self.folder = folder
        self.key = key
        self.config = None
        self.outcomes = {}
        self.findings = []
        self.code = {}
        self.hooks = None
        self.framework = None
        self.impls = None

    def saw(self, what):
        if what not in self.findings and len(self.findings) < 20:
            self.findings.append(what)


def _remove_tree(path):
    """A folder of files removed (shutil's import costs each grade more than this)."""
    for name in os.listdir(path) if os.path.isdir(path) else []:
        os.unlink(os.path.join(path, name))
    if os.path.isdir(path):
        os.rmdir(path)


def _hmac_sha256(key, message):
    """HMAC-SHA256 (RFC 2104) on the interpreter's built-in SHA-256: importing hashlib loads OpenSSL, which costs a
    grade's pytest run more than the rest of the plugin. `key` is at most a block (64 bytes)."""
    sha256 = None
    for name in ("_sha2", "_sha256"):
        try:
            sha256 = __import__(name).sha256
            break
        except ImportError:
            pass
    if sha256 is None:
        from hashlib import sha256
    key = key.ljust(64, b"\0")
    inner = sha256(bytes(b ^ 0x36 for b in key) + message).digest()
    return sha256(bytes(b ^ 0x5C for b in key) + inner).hexdigest()


def _take_key():
    """The grade's key and results folder, taken out of the environment and off the disk before any code under test."""
    folder = os.environ.pop("ALIGHT_RESULTS", None)
    here = os.path.dirname(os.path.abspath(__file__))
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if p and os.path.abspath(p) != here)
    if not os.environ["PYTHONPATH"]:
        del os.environ["PYTHONPATH"]
    if os.environ.get("PYTEST_ADDOPTS", "").strip() == "-p alight_guard":
        del os.environ["PYTEST_ADDOPTS"]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    _remove_tree(os.path.join(here, "__pycache__"))
    if not folder:
        return None
    try:
        with open(os.path.join(folder, "key")) as f:
            key = f.read().strip()
        os.unlink(os.path.join(folder, "key"))
    except OSError:
        return None
    return _Guard(folder, key)


def _hooks():
    """The profile and trace hooks in force: sys's, threading's for new threads, and sys.monitoring's tools."""
    seen = [sys.getprofile(), sys.gettrace(), getattr(threading, "_profile_hook", None)]
    seen.append(getattr(threading, "_trace_hook", None))
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        seen.extend(monitoring.get_tool(i) for i in range(6))
    return tuple(id(h) if h is not None else None for h in seen)


def _owners():
    """The outcome modules' namespaces and those of the classes they define, by name."""
    for name in _framework_modules:
        module = sys.modules.get(name)
        if module is None:
            continue
        yield name, vars(module)
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and value.__module__ == name:
                yield name + "." + attr, vars(value)


def _parts(value):
    """What of a member must stay: a function's code and outcome exception (pytest.xfail.Exception); else nothing."""
    if isinstance(value, types.FunctionType):
        return value.__code__, value.__dict__.get("Exception")
    return None, None


def _framework():
    """Each outcome namespace with its size and its members, each with the parts of it that must stay."""
    snapshot = []
    for owner, space in _owners():
        members = [(k, v, _parts(v)) for k, v in list(space.items())]
        snapshot.append([owner, space, len(space), members, set(space)])
    return snapshot


def _framework_changes(snapshot):
    """The members replaced, rewritten or removed since the snapshot, and the functions or descriptors added (pytest
    itself adds plain values to its classes as it runs: those join the snapshot)."""
    changed = []
    for entry in snapshot:
        owner, space, size, members, known = entry
        if len(space) != size:
            for key in set(space) - known:
                if callable(space[key]) or hasattr(type(space[key]), "__get__"):
                    changed.append(owner + "." + key)
            entry[2], entry[4] = len(space), known | set(space)
        for key, value, parts in members:
            now = space.get(key)
            if now is not value or (parts[0] is not None and _parts(now) != parts):
                changed.append(owner + "." + key)
    return changed


def _impls(config):
    """The implementations of the hooks that run a test and report it."""
    out = {}
    for name in _outcome_hooks:
        caller = getattr(config.hook, name, None)
        get = getattr(caller, "get_hookimpls", None)
        out[name] = tuple(get()) if get is not None else ()
    return out


def _non_test(config, filename):
    """Whether code from `filename` is the code under test: a file of the workspace that is not test code, or none."""
    if not os.path.isfile(filename):
        return True
    if _is_framework(filename):
        return False
    root = str(getattr(config, "rootpath", None) or config.rootdir)
    path = os.path.abspath(filename)
    if not path.startswith(root.rstrip(os.sep) + os.sep):
        return False
    return not _test_path.search(os.path.relpath(path, root).replace(os.sep, "/"))


def _as_logged(config, nodeid):
    """A node id as pytest's log names it: its path relative to where pytest ran, not to the rootdir."""
    root = str(getattr(config, "rootpath", None) or config.rootdir)
    if os.path.abspath(root) == _invoked:
        return nodeid
    path, sep, rest = nodeid.partition("::")
    return os.path.relpath(os.path.join(root, path), _invoked).replace(os.sep, "/") + sep + rest


def _where(code):
    return "%s:%s" % (os.path.basename(code.co_filename), code.co_firstlineno)


def _is_framework(filename):
    parts = filename.replace(os.sep, "/").split("/")
    return any(p in ("_pytest", "pytest", "pluggy") for p in parts[:-1]) or filename == __file__


def _obj(item):
    """A test item's function, if it has one (reading it may run code of the item's own)."""
    try:
        return getattr(item, "obj", None)
    except Exception:
        return None


def _functions(obj):
    """A collected test's function and every function it wraps (decorators), each with its code as collected."""
    seen = []
    while obj is not None and len(seen) < 10:
        obj = getattr(obj, "__func__", obj)
        code = getattr(obj, "__code__", None)
        if code is not None:
            seen.append((obj, code))
        obj = getattr(obj, "__wrapped__", None)
    return seen


def _check(guard, when, item=None, framework=True):
    """What changed since collection (since the session started, for the hooks and the framework)."""
    if _hooks() != guard.hooks:
        guard.saw("a profile or trace hook was installed or changed (" + when + ")")
    if framework:
        for name in _framework_changes(guard.framework):
            guard.saw("the test framework's " + name + " was replaced or rewritten (" + when + ")")
    if framework and guard.impls is not None:
        for name, impls in _impls(guard.config).items():
            if impls != guard.impls.get(name):
                guard.saw("the implementations of " + name + " changed (" + when + ")")
    if item is not None:
        for fn, code in guard.code.get(item.nodeid, ()):
            if fn.__code__ is not code:
                guard.saw("the code of " + item.nodeid + " changed after collection (" + when + ")")
        now_fns = [fn for fn, _ in _functions(_obj(item))]
        if now_fns[:1] != [fn for fn, _ in guard.code.get(item.nodeid, ())][:1]:
            guard.saw("the function of " + item.nodeid + " was replaced after collection (" + when + ")")


def _raise_if_seen(guard, before):
    if len(guard.findings) > before:
        raise Tampered("alight: " + "; ".join(guard.findings[before:]))


def _outcome(report):
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else ("xpassed" if report.passed else "failed")
    if report.failed and report.when != "call":
        return "error"
    return report.outcome


def _sign(guard):
    payload = json.dumps({"outcomes": guard.outcomes, "findings": guard.findings}, sort_keys=True)
    mac = _hmac_sha256(guard.key.encode(), payload.encode())
    with open(os.path.join(guard.folder, "results.json"), "w") as f:
        f.write(mac + "\n" + payload)


# Equality checked where the test compares: an object the code under test made must not pass as the expected value
# by answering "equal" to whatever it is compared with. Type-strict comparison would refuse honest tests (a numpy
# scalar against an int, a repository's own Quantity against a float), so the check is behavioural: no honest value
# equals an object it has never seen, nor two different values of a builtin type.
_scalars = (int, float, complex, str, bytes)
# pytest.approx's classes, by identity (a subclass or a copied __eq__ made elsewhere is not exempt).
_approx = tuple(v for k, v in vars(sys.modules[pytest.approx.__module__]).items() if k.startswith("Approx"))


def _permissive(value):
    """Whether `value` is the test's own "anything goes": an approx, or unittest.mock.ANY (looked up only here, as
    importing unittest.mock costs every grade more than the check)."""
    if type(value) in _approx:
        return True
    import unittest.mock

    return type(value) is type(getattr(unittest.mock, "ANY", None))


def _truthy(value):
    try:
        return bool(value)
    except Exception:
        return False


def _says_equal(a, b):
    try:
        return _truthy(a == b)
    except Exception:
        return False


def _other(value):
    """A value of the same exact builtin type that differs from `value`, or None."""
    kind = type(value)
    if kind is bool:
        return not value
    if kind in (int, float, complex) and value == value and abs(value) != float("inf"):
        return value + 1 + abs(value)
    if kind is str:
        return value + "\x00alight"
    if kind is bytes:
        return value + b"\x00alight"
    return None


def _liar(value, why):
    return "%s.%s %s" % (getattr(type(value), "__module__", "?"), type(value).__name__, why)


def _lies(value, expected, depth=0):
    """Why `value`, found equal to `expected`, lies about equality, or None."""
    if depth > 3:
        return None
    if type(value) not in _scalars + (bool, type(None)) and _says_equal(value, object()):
        unseen = _permissive(value) or _permissive(expected)
        return None if unseen else _liar(value, "equals an object it has never seen")
    other = _other(expected) if type(value) is not type(expected) else None
    if other is not None and _says_equal(value, other):
        return None if _permissive(value) else _liar(value, "equals both %r and %r" % (expected, other))
    pairs = ()
    if type(expected) in (list, tuple) and isinstance(value, (list, tuple)) and len(value) == len(expected) < 1000:
        pairs = zip(value, expected)
    elif type(expected) is dict and isinstance(value, dict) and len(value) == len(expected) < 1000:
        pairs = ((value[k], e) for k, e in expected.items() if k in value)
    for v, e in pairs:
        why = _lies(v, e, depth + 1)
        if why:
            return why
    return None


def _strict_eq(left, right):
    """`left == right` as a rewritten assert computes it, refused (seen, and raised into the test) when the answer
    "equal" comes from a liar on either side."""
    result = left == right
    if _guard is not None and _truthy(result):
        for value, expected in ((left, right), (right, left)):
            why = _lies(value, expected)
            if why is not None:
                _guard.saw("a value compared in a test lies about equality: " + why)
                raise Tampered("alight: " + _guard.findings[-1])
    return result


class _EqualsChecked(ast.NodeTransformer):
    """In a test module as pytest rewrote it, each `==` of an assert (pytest computes it into a temporary named
    `@py_assert…`, a name no source can spell) goes through _strict_eq."""

    def visit_Assign(self, node):
        value, names = node.value, node.targets
        if (
            len(names) == 1
            and isinstance(names[0], ast.Name)
            and names[0].id.startswith("@py_assert")
            and isinstance(value, ast.Compare)
            and len(value.ops) == 1
            and isinstance(value.ops[0], ast.Eq)
        ):
            check = ast.Attribute(value=ast.Name(id="@pytest_ar", ctx=ast.Load()), attr="_alight_eq", ctx=ast.Load())
            call = ast.Call(func=check, args=[value.left, value.comparators[0]], keywords=[])
            node.value = ast.copy_location(call, value)
            ast.fix_missing_locations(node)
        return self.generic_visit(node)


def _check_equalities():
    """Every assert's `==` and unittest's assertEqual checked for liars; a cached rewrite (a pyc, which a patch can
    ship) never read, so that no test module runs without the check."""
    import _pytest.assertion.rewrite as rewrite

    rewrite_asserts = rewrite.rewrite_asserts

    def checked(mod, *args, **kwargs):
        rewrite_asserts(mod, *args, **kwargs)
        _EqualsChecked().visit(mod)

    rewrite.rewrite_asserts = checked
    rewrite._read_pyc = lambda *args, **kwargs: None
    rewrite._alight_eq = _strict_eq
    assert_equal = unittest.TestCase.assertEqual

    def assertEqual(self, first, second, msg=None):
        assert_equal(self, first, second, msg)
        _strict_eq(first, second)

    for name in ("assertEqual", "assertEquals", "failUnlessEqual"):
        if name in vars(unittest.TestCase):
            setattr(unittest.TestCase, name, assertEqual)


_guard = _take_key()
_invoked = os.getcwd()
if _guard is not None:
    _check_equalities()


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    if _guard is None:
        return
    _guard.config = session.config
    _guard.hooks = _hooks()
    _guard.framework = _framework()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """The collected tests' code; hooks that code under test (not a conftest) added while it was imported."""
    if _guard is None:
        return
    for item in session.items:
        _guard.code[item.nodeid] = _functions(_obj(item))
    for name, impls in _impls(session.config).items():
        for impl in impls:
            code = getattr(impl.function, "__code__", None)
            if code is not None and _non_test(session.config, code.co_filename):
                _guard.saw("code under test implements " + name + " (" + _where(code) + ")")
    _guard.impls = _impls(session.config)
    _check(_guard, "while the tests were collected")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if _guard is not None:
        before = len(_guard.findings)
        _check(_guard, "before " + item.nodeid, item)
        _raise_if_seen(_guard, before)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    # Seen, not raised: an exception here would leave pytest's own teardown undone; the grade is refused all the same.
    if _guard is not None:
        _check(_guard, "while " + item.nodeid + " ran", item, framework=False)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    """An xfail raised from the code under test (not the test's own) is a pass only by SWE-bench's rule: seen."""
    excinfo = call.excinfo
    xfailed = getattr(getattr(pytest, "xfail", None), "Exception", None)
    if _guard is None or excinfo is None or xfailed is None or not excinfo.errisinstance(xfailed):
        return None
    tb, raiser = excinfo.tb, None
    while tb is not None:
        if not _is_framework(tb.tb_frame.f_code.co_filename):
            raiser = tb.tb_frame.f_code
        tb = tb.tb_next
    if raiser is not None and _non_test(item.config, raiser.co_filename):
        _guard.saw("an xfail was raised from code under test (" + _where(raiser) + ") in " + item.nodeid)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    if _guard is None or _guard.config is None:
        return
    outcome = _outcome(report)
    # A test's outcome is its call's, unless its setup did not pass or its teardown failed.
    if report.when == "call" or (report.when, outcome) in (
        ("setup", "error"),
        ("setup", "skipped"),
        ("setup", "xfailed"),
        ("teardown", "error"),
    ):
        _guard.outcomes[_as_logged(_guard.config, report.nodeid)] = outcome


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    if _guard is not None and _guard.config is not None:
        _check(_guard, "when the session finished")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if _guard is not None and _guard.config is not None:
        _sign(_guard)
