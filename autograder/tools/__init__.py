"""Instructor commands (``python -m autograder ...``); nothing here runs in a kernel."""

import sys

# nbformat validates notebooks with jsonschema, which imports rfc3987_syntax when it
# is installed and so builds 39 Lark parsers (about 2 s of CPU) for an "iri" string
# format that no notebook or Jupyter schema uses. Every command and worker here
# imports this package before nbformat: to jsonschema, the module is absent, and
# that one format goes unchecked. (nbgrader's own processes are spared by the
# environment instead: the README's install leaves the package out.)
sys.modules.setdefault("rfc3987_syntax", None)
