"""Which student ids the course grades: :func:`usable_student_id` and :func:`lookalike`.

A student id comes from a folder name a student chose (``inbound/<id>+<assignment>+<time>+...``)
and goes on into nbgrader's globs and regexes, the gradebook, every page and ``grades.csv``. So an
id is graded only when it is text that all of them hold as one plain name:

- nothing nbgrader's globs read as a pattern (``*``, ``?``, ``[``), no hidden name, no path;
- no markup (``<`` ``>`` ``&``): formgrader's grading page writes the id into its HTML as it is;
- no separator a CSV or a spreadsheet splits on (``,`` ``;`` tab, quotes, ``|``), no leading
  character a spreadsheet reads as a formula (``=`` ``+`` ``-`` ``@``): nbgrader's own CSV export
  joins fields unquoted, so ``rt3mal,,,,10.0`` would add a row's worth of columns;
- one way to write it (Unicode's NFKC form: a fullwidth ``ａ`` is not an ``a``) in one script
  (Latin with Cyrillic letters in one id is a disguise, not a name);
- not a look-alike of another id (:func:`lookalike`): a Cyrillic ``а`` in place of a Latin ``a``
  must not be graded as, or beside, the student whose id it imitates.
"""

from __future__ import annotations

import re
import unicodedata

#: What nbgrader's globs and regexes read in a student id (``*``, ``?``, ``[``) or skip (a leading
#: dot), a path, what a CSV or spreadsheet splits on, and markup (formgrader's grading page writes the
#: id into its HTML unescaped, nbconvert's templates do not escape: ``<plaintext>`` would end the page).
_UNUSABLE = re.compile(r"""[*?\[\]/\\,;|"'`<>&]|^\.""")
#: What a spreadsheet reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@")
#: Scripts one name may mix (Japanese writes one word in three).
_ONE_WRITING = ({"HIRAGANA", "KATAKANA", "CJK"},)
#: Letters of other scripts drawn like a Latin letter (Unicode's confusables for these scripts,
#: lower case: ids are compared case-folded).
_LOOKS_LATIN = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k", "ӏ": "l",
    "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "с": "c", "ѕ": "s", "т": "t", "у": "y", "х": "x",
    "ԁ": "d", "ԝ": "w", "ɡ": "g", "ь": "b",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
})


def _script(ch: str) -> str | None:
    """The script of a letter, as the first word of its Unicode name (``LATIN``, ``CYRILLIC``);
    None for what every script shares (digits, punctuation, marks)."""
    if not ch.isalpha():
        return None
    return unicodedata.name(ch, "UNKNOWN").split()[0]


def scripts(student_id: str) -> set[str]:
    return {s for s in map(_script, student_id) if s}


def usable_student_id(student_id: str) -> bool:
    """Whether the course grades ``student_id`` as one student (the module says what that takes;
    :func:`lookalike` is the check against the other ids)."""
    if not (student_id and student_id.isprintable() and student_id == student_id.strip()):
        return False
    if _UNUSABLE.search(student_id) or student_id.startswith(FORMULA_STARTS):
        return False
    if unicodedata.normalize("NFKC", student_id) != student_id:
        return False
    found = scripts(student_id)
    return len(found) <= 1 or any(found <= one for one in _ONE_WRITING)


def skeleton(student_id: str) -> str:
    """What ``student_id`` looks like: case-folded, letters of other scripts drawn like Latin ones
    read as those (an accent stays: ``josé`` and ``jose`` may be two students)."""
    return unicodedata.normalize("NFKC", student_id.casefold()).translate(_LOOKS_LATIN)


def lookalike(student_id: str, others) -> str | None:
    """The id among ``others`` that ``student_id`` imitates, or None. Two ids that look alike are
    told apart by who wrote plain ASCII: the ASCII one is the student, the other the disguise (of
    two ids both beyond ASCII, each is refused). Ids that differ in case alone are different
    accounts, as nbgrader and Linux take them."""
    if student_id.isascii():
        return None
    mine = skeleton(student_id)
    for other in others:
        if other != student_id and skeleton(other) == mine:
            return other
    return None
