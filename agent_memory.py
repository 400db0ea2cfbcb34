"""Persistent memory for LLM agents, in one standard-library module.

An agent forgets everything when its session ends. This module gives it three
tiers of memory, each with a different lifetime and cost:

1. Facts: two small markdown files, ``user.md`` (who the user is, what they
   prefer) and ``env.md`` (the project, its tools and their quirks). Entries are
   separated by a line holding only ``§``. Each file has a character cap, because
   both are pasted into every system prompt. The agent edits them through the
   ``memory`` tool (add, replace, remove, consolidate).
2. Buffer: a ring buffer of one-line turn summaries for the current session.
3. Episodes: durable summaries an LLM extracts when a session ends, searchable
   later.

Merge-on-write. When the agent adds a fact that memory already holds, the write
should fold into the existing entry instead of filling the cap with restatements.
Each fact is turned into a vector by random projection (hashed word features
times a seeded Gaussian matrix) and compared with the stored facts by cosine:
clearly the same (cosine >= MERGE_THRESHOLD) merges, clearly different
(<= ADD_THRESHOLD) is added, and only the unclear middle band asks an LLM.
Two facts that disagree on a number, version, date, name or negation are never
merged automatically, however similar their words. Everything works with no LLM
at all: the middle band is then added.

Files on disk. A memory directory holds ``user.md`` and ``env.md`` (plain UTF-8
a person can read and edit), ``episodes/``, and a lock file. Every change is a
read-modify-write under a cross-process lock, written to a temporary file,
fsynced and renamed into place, so several agents may share one directory and a
crash never leaves half a file. A file that cannot be read is never overwritten.

Trust. Everything that can reach a system prompt is untrusted: the agent's
writes, the LLM's outputs and the files on disk. ``scan_content`` refuses
invisible Unicode, control characters, prompt-injection phrasing, credentials
and exfiltration commands before anything is stored.

Try it::

    python3 -m unittest -v                 # the test suite
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import os
import re
import sys
import time
import unicodedata
from collections import deque
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

__all__ = [
    "ADD_THRESHOLD",
    "DEFAULT_BUFFER_LINES",
    "DEFAULT_FACTS_LIMIT_ENV",
    "DEFAULT_FACTS_LIMIT_USER",
    "ENTRY_SEP",
    "MERGE_THRESHOLD",
    "AgentMemoryError",
    "Buffer",
    "CapacityError",
    "FactStore",
    "InvalidInputError",
    "LLMError",
    "MatchError",
    "MemoryConfig",
    "MemoryDisabledError",
    "ScanError",
    "format_buffer_line",
    "scan_content",
]

__version__ = "0.1.0"

MERGE_THRESHOLD = 0.7
ADD_THRESHOLD = 0.3
DEFAULT_FACTS_LIMIT_USER = 1500
DEFAULT_FACTS_LIMIT_ENV = 2500
DEFAULT_BUFFER_LINES = 20
ENTRY_SEP = "\n§\n"

_MAX_SCAN_CHARS = 65_536
_TARGETS = ("user", "env")



# ---------------------------------------------------------------- errors ----


class AgentMemoryError(Exception):
    """Base class of every error this module raises on purpose."""


class InvalidInputError(AgentMemoryError, ValueError):
    """A bad argument: unknown target, empty text, wrong type, bad config value."""


class ScanError(AgentMemoryError):
    """Content failed the security scan.

    ``threat`` is a short stable id: ``invisible_unicode``, ``control_char``,
    ``prompt_injection``, ``credential``, ``exfiltration`` or ``too_large``.
    """

    def __init__(self, threat: str, message: str) -> None:
        super().__init__(message)
        self.threat = threat


class CapacityError(AgentMemoryError):
    """A write would push a fact file past its cap.

    ``limit`` is the cap, ``current`` the characters in use now and ``needed``
    the characters the write would add (all counted in code points).
    """

    def __init__(self, target: str, limit: int, current: int, needed: int, message: str) -> None:
        super().__init__(message)
        self.target = target
        self.limit = limit
        self.current = current
        self.needed = needed


class MatchError(AgentMemoryError):
    """``old_text`` matched no entry or more than one; ``matches`` says how many."""

    def __init__(self, matches: int, message: str) -> None:
        super().__init__(message)
        self.matches = matches


class MemoryDisabledError(AgentMemoryError):
    """A write on a manager whose config has ``enabled=False``."""


class LLMError(AgentMemoryError):
    """An LLM call failed; ``status`` is the HTTP status, or None without one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def _preview(text: str, width: int = 40) -> str:
    """One line of at most ``width`` characters, for error messages."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


# ---------------------------------------------------------------- config ----


@dataclasses.dataclass
class MemoryConfig:
    """Settings of a ``MemoryManager``; JSON keys are the field names.

    The first twelve fields are those of the Go package; the last four govern
    the episode lifecycle. ``MemoryConfig()`` gives the defaults. Construction
    validates every field and raises ``InvalidInputError`` naming the bad one.
    """

    enabled: bool = True
    facts_limit_user: int = DEFAULT_FACTS_LIMIT_USER
    facts_limit_env: int = DEFAULT_FACTS_LIMIT_ENV
    buffer_lines: int = DEFAULT_BUFFER_LINES
    buffer_enabled: bool = True
    merge_on_write: bool = True
    extract_on_end: bool = True
    llm_search: bool = True
    llm_extract: bool = True
    llm_consolidate: bool = True
    merge_threshold: float = MERGE_THRESHOLD
    add_threshold: float = ADD_THRESHOLD
    min_turns_for_extraction: int = 3
    max_episodes: int = 500
    episode_ttl_days: int = 0
    episode_dedup_threshold: float = 0.9

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            kind = _FIELD_KINDS[field.type]
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
                setattr(self, field.name, value)
            if type(value) is not kind:
                raise InvalidInputError(
                    f"config key {field.name!r} must be {kind.__name__}, got {type(value).__name__} {value!r}"
                )
            if kind is float and not math.isfinite(value):
                raise InvalidInputError(f"config key {field.name!r} must be a finite number, got {value!r}")
        for name in ("facts_limit_user", "facts_limit_env"):
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"config key {name!r} must be positive, got {getattr(self, name)}")
        for name in ("buffer_lines", "min_turns_for_extraction", "max_episodes", "episode_ttl_days"):
            if getattr(self, name) < 0:
                raise InvalidInputError(
                    f"config key {name!r} must be zero or positive, got {getattr(self, name)}"
                )
        _check_thresholds(self.merge_threshold, self.add_threshold)
        if not 0.0 < self.episode_dedup_threshold <= 1.0:
            raise InvalidInputError(
                f"config key 'episode_dedup_threshold' must be in (0, 1], got {self.episode_dedup_threshold}"
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryConfig:
        """Build a config from parsed JSON; missing keys keep their defaults.

        Unknown keys and wrong types raise ``InvalidInputError``. Numbers may be
        given as numeric strings (``"2200"``), as environment-driven configs do.
        """
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"config must be a JSON object, got {type(data).__name__}")
        known = {field.name: _FIELD_KINDS[field.type] for field in dataclasses.fields(cls)}
        values = {}
        for key, value in data.items():
            if key not in known:
                raise InvalidInputError(
                    f"unknown config key {key!r}; known keys: {', '.join(sorted(known))}"
                )
            values[key] = _coerce_number(key, value, known[key])
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict; ``from_dict(to_dict())`` round-trips."""
        return dataclasses.asdict(self)


_FIELD_KINDS = {"bool": bool, "int": int, "float": float}


def _coerce_number(key: str, value: Any, kind: type) -> Any:
    """Turn numeric strings and integral floats into the field's number type."""
    if kind is bool or isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise InvalidInputError(f"config key {key!r} must be a number, got {value!r}") from None
        value = number
    if kind is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _check_thresholds(merge_threshold: float, add_threshold: float) -> None:
    if not 0.0 < add_threshold < merge_threshold <= 1.0:
        raise InvalidInputError(
            f"thresholds must satisfy 0 < add_threshold < merge_threshold <= 1, "
            f"got add_threshold={add_threshold}, merge_threshold={merge_threshold}"
        )


# --------------------------------------------------------- security scan ----
#
# Characters a reader cannot see are looked for in the raw text. Everything
# else is matched on folded views (NFKC, so full-width "ＩＧＮＯＲＥ" reads
# "ignore"; case-folded; for phrasing, runs of spaces and punctuation made one
# space). Every pattern is a sequence of bounded pieces, no unbounded
# quantifier inside another, so the scan stays linear on hostile input.

_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")
# Every format (Cf) character of Unicode 15, plus invisible characters filed
# elsewhere: combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# Mongolian variation selectors, variation selectors. A test checks the list
# against the running Python's unicodedata.
_INVISIBLE_CANDIDATES = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_VARIATION_SELECTORS = frozenset(range(0xFE00, 0xFE10)) | frozenset(range(0xE0100, 0xE01F0))
_JOINERS = frozenset({0x200C, 0x200D})


def _is_emoji(char: str) -> bool:
    code = ord(char)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or code in (0xFE0F, 0x20E3)
        or unicodedata.category(char) == "So"
    )


def _is_joining_letter(char: str) -> bool:
    # Arabic, Persian and the Indic scripts need ZWNJ/ZWJ between letters.
    return ord(char) >= 0x0590 and unicodedata.category(char)[0] in "LM"


def _joiner_is_legitimate(text: str, at: int) -> bool:
    if at == 0 or at == len(text) - 1:
        return False
    before, after = text[at - 1], text[at + 1]
    if ord(text[at]) == 0x200D and _is_emoji(before) and _is_emoji(after):
        return True  # 👨‍👩‍👧: the joiner is part of the emoji
    return _is_joining_letter(before) and _is_joining_letter(after)


def _find_invisible(text: str) -> str | None:
    """Return a description of the first invisible character, or None."""
    for match in _INVISIBLE_CANDIDATES.finditer(text):
        char, at = match.group(), match.start()
        code = ord(char)
        if code in _VARIATION_SELECTORS:
            # One selector after a visible character picks a glyph (❤️);
            # a run of them, or one of the supplementary ones, can smuggle bytes.
            if at > 0 and ord(text[at - 1]) not in _VARIATION_SELECTORS and code < 0xE0100:
                continue
        elif code in _JOINERS and _joiner_is_legitimate(text, at):
            continue
        return f"U+{code:04X} {unicodedata.name(char, 'format character')} at position {at}"
    return None


# Each rule: (threat, what it looks like, view, triggers, pattern). The pattern
# runs only when one of the trigger substrings occurs in the view, which keeps
# the scan of an ordinary fact to a few substring tests. Views: "words" is the
# folded text with every run of non-word characters turned into one space;
# "folded" keeps punctuation; "nfkc" keeps case, for credential shapes. Triggers
# are tested on "folded" for "words" rules (every word of a match occurs there).
_W = r"(?: [a-z0-9]{1,24}){0,3}"  # up to three filler words
_OVERRIDE_VERBS = ("ignore", "disregard", "forget", "override", "bypass", "overrule")
_SECRET_NAME = r"[a-z0-9_]{0,40}(?:key|token|secret|pass|pwd|cred|auth)[a-z0-9_]{0,40}"
_RULE_TABLE = [
    # -- prompt injection: instructions aimed at the model, not facts about the world
    ("prompt_injection", "an instruction to ignore earlier instructions", "words", _OVERRIDE_VERBS,
     rf"\b(?:ignore|disregard|forget|override|bypass|overrule){_W} "
     r"(?:previous|prior|above|earlier|preceding|former|original|initial|system|developer|safety)"
     rf"{_W} (?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|commands|"
     r"context|messages|constraints|restrictions|programming|policies)\b"
     r"|\b(?:ignore|disregard|forget|override|bypass|overrule) (?:all|any|every|your|my|these|the)"
     rf"{_W} (?:instructions|guidelines|guardrails|programming|directives|system prompt)\b"
     r"|\b(?:ignore|disregard|forget) (?:everything|anything|all) "
     r"(?:above|before|previously|said|so far|you (?:were|have been|ve been) told)\b"),
    ("prompt_injection", "an attempt to change the assistant's role", "words", ("now", "longer"),
     r"\byou are now (?:a |an |the |in )?(?:different|new|unrestricted|unfiltered|uncensored|"
     r"jailbroken|evil|rogue|dan|developer mode|god mode)\b"
     r"|\byou are no longer (?:an? )?(?:ai|assistant|bound|restricted|limited|claude|chatgpt)\b"),
    ("prompt_injection", "an attempt to change the assistant's role", "words", ("pretend", "act"),
     r"\bpretend (?:that )?(?:you are|to be|you have) (?:an? )?(?:different|unrestricted|unfiltered|"
     r"jailbroken|no rules|no restrictions|no guidelines|no limits)\b"
     r"|\bact as (?:an? )?(?:unrestricted|unfiltered|jailbroken|uncensored)\b"),
    ("prompt_injection", "new instructions for the assistant", "words",
     ("instructions", "rules", "orders", "directives", "prompt"),
     r"\b(?:follow|obey|use|execute) (?:these|the following|my|the|this) new "
     r"(?:instructions|rules|orders|directives)\b"
     r"|\b(?:here are|these are) (?:your|the) new (?:instructions|rules|orders|directives)\b"
     r"|\bnew system prompt\b"
     r"|\b(?:reveal|print|show|output|repeat|leak|dump|disclose) (?:me )?(?:your|the) (?:full |entire |"
     r"hidden |original |secret )?(?:system prompt|initial prompt|hidden instructions)\b"),
    ("prompt_injection", "an instruction to hide something from the user", "words",
     ("tell", "inform", "notify", "alert", "mention", "reveal", "without"),
     r"\b(?:do not|don t|never) (?:tell|inform|notify|alert|mention (?:this |it )?to|"
     r"reveal (?:this |it )?to) the user\b(?! s\b)"
     r"|\bwithout (?:telling|informing|notifying|alerting) the user\b(?! s\b)"),
    ("prompt_injection", "a chat-template role marker", "folded", ("<", "[inst", "[/inst"),
     r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>"
     r"|\[/?inst\]|<</?sys>>|<\s{0,3}/?\s{0,3}(?:system|instructions?)\s{0,3}>"),
    # -- exfiltration and persistence commands
    ("exfiltration", "a download command carrying a secret variable", "folded", ("$",),
     rf"\b(?:curl|wget|http|httpie|nc|ncat)\b[^\n]{{0,200}}\$\{{?{_SECRET_NAME}"),
    ("exfiltration", "a command printing a secrets file", "folded",
     (".env", ".netrc", ".pgpass", ".npmrc", ".pypirc", "credentials", "id_rsa", "id_ed25519",
      "id_ecdsa", "shadow", "config.json"),
     r"\b(?:cat|tac|less|head|tail|base64|xxd|strings|type)(?:\s{1,5}-[^\s|;&]{1,20}(?:\s{1,5}\d{1,9})?){0,4}"
     r"\s{1,5}[^\s|;&]{0,120}"
     r"(?:\.env\b|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|\.aws/credentials|"
     r"\.docker/config\.json|id_rsa|id_ed25519|id_ecdsa|/etc/shadow)"),
    ("exfiltration", "a write to authorized_keys", "folded", ("authorized_keys",),
     r"(?:>|\btee\b)[^\n]{0,120}authorized_keys"),
    ("exfiltration", "a download piped into a shell", "folded", ("|", "<("),
     r"\b(?:curl|wget)\b[^\n|]{0,300}\|\s{0,5}(?:sudo\s{1,5})?(?:ba|z|k|da|fi)?sh\b"
     r"|\b(?:ba|z)?sh\s{1,5}<\(\s{0,5}(?:curl|wget)\b"),
    ("exfiltration", "a reverse shell", "folded", ("/dev/tcp", "-e "),
     r"/dev/tcp/|\bnc(?:at)?\s{1,5}(?:-\w{1,5}\s{1,5}){0,4}-e\s"),
    ("exfiltration", "an instruction to send secrets somewhere", "folded",
     ("http", "webhook", "pastebin", "ngrok", "requestbin"),
     r"\b(?:send|post|upload|exfiltrate|forward|leak|email)\b[^\n]{0,80}\b(?:api keys?|secrets?|"
     r"credentials|passwords?|tokens?|env vars|environment variables|\.env)\b[^\n]{0,80}"
     r"(?:https?://|webhook|pastebin|ngrok|requestbin)"),
    # -- credentials (never echoed back)
    ("credential", "an OpenAI or Anthropic API key", "nfkc", ("sk-",),
     r"\bsk-(?:proj-|ant-(?:api\d\d-)?|svcacct-)?(?=[A-Za-z0-9_-]{0,80}\d)[A-Za-z0-9_-]{20,}"),
    ("credential", "an AWS access key id", "nfkc", ("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("credential", "a GitHub token", "nfkc", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ("credential", "a GitLab token", "nfkc", ("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("credential", "a Slack token", "nfkc", ("xox",), r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("credential", "a Stripe key", "nfkc", ("_live_", "_test_"), r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("credential", "a Google API key", "nfkc", ("AIza",), r"\bAIza[0-9A-Za-z_-]{35}"),
    ("credential", "a Hugging Face token", "nfkc", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    ("credential", "an npm token", "nfkc", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}"),
    ("credential", "a JSON Web Token", "nfkc", ("eyJ",),
     r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("credential", "a private key", "nfkc", ("PRIVATE KEY", "PuTTY"),
     r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d"),
    ("credential", "a bearer token", "folded", ("bearer",), r"\bbearer\s{1,5}[a-z0-9._~+/-]{20,}"),
    ("credential", "a URL with a password", "nfkc", ("://",),
     r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s/:@]{1,64}:[^\s/@]{3,64}@"),
    ("credential", "a password or secret assignment", "folded", ("pass", "pwd", "secret", "key", "token"),
     r"\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|"
     r"private[_-]?key|secret[_-]?key)\b\s{0,3}[:=]\s{0,3}['\"]?(?![<${%*]|x{3})[^\s'\",;]{6,}"),
]


@functools.lru_cache(maxsize=None)
def _scan_rules() -> list[tuple[str, str, str, str, tuple[str, ...], re.Pattern[str]]]:
    """The rule table, compiled on first use to keep the import fast."""
    return [(threat, what, "folded" if view == "words" else view, view, triggers, re.compile(pattern))
            for threat, what, view, triggers, pattern in _RULE_TABLE]

_ADVICE = {
    "prompt_injection": "memory is pasted into the system prompt, so it may only hold plain facts. "
                        "Rephrase it as a fact about the user or the environment.",
    "exfiltration": "memory must not carry commands that leak secrets or plant access. "
                    "Describe the fact without the command.",
    "credential": "secrets must not be stored in memory. Store where the secret lives instead "
                  "(for example 'the key is in the OPENAI_API_KEY environment variable').",
}
_ASCII_PUNCTUATION = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"})
_NON_WORD = re.compile(r"[\W_]+")


def _word_view(folded: str) -> str:
    if folded.isascii():
        return " ".join(folded.translate(_ASCII_PUNCTUATION).split())
    return _NON_WORD.sub(" ", folded).strip()


def scan_content(content: str) -> None:
    """Raise ``ScanError`` if ``content`` is unsafe to put in a system prompt.

    Refused: more than 65,536 characters; invisible or direction-changing
    characters (a zero-width joiner inside an emoji, or between letters of a
    script that needs it, is allowed); control characters other than
    ``\\n \\r \\t``; prompt-injection phrasing; exfiltration and persistence
    commands; credentials. The error's ``threat`` names the rule and its
    message says what to do instead. A credential is never echoed back.
    """
    if not isinstance(content, str):
        raise InvalidInputError(f"content must be a string, got {type(content).__name__}")
    if len(content) > _MAX_SCAN_CHARS:
        raise ScanError(
            "too_large",
            f"content is {len(content):,} characters; the limit is {_MAX_SCAN_CHARS:,}. "
            "Store a short summary instead.",
        )
    control = _CONTROL_CHARS.search(content)
    if control:
        raise ScanError(
            "control_char",
            f"content holds control character U+{ord(control.group()):04X} at position {control.start()}; "
            "only newline, carriage return and tab are allowed. Remove it and try again.",
        )
    nfkc = content
    if not content.isascii():
        invisible = _find_invisible(content)
        if invisible:
            raise ScanError(
                "invisible_unicode",
                f"content holds an invisible character ({invisible}); invisible text can hide "
                "instructions from the reader. Remove it and try again.",
            )
        nfkc = unicodedata.normalize("NFKC", content)
    views = {"nfkc": nfkc, "folded": nfkc.casefold()}
    for threat, what, trigger_view, view, triggers, pattern in _scan_rules():
        for trigger in triggers:
            if trigger in views[trigger_view]:
                break
        else:
            continue
        if view not in views:
            views[view] = _word_view(views["folded"])
        match = pattern.search(views[view])
        if match:
            shown = "" if threat == "credential" else f": {_preview(match.group(), 50)!r}"
            raise ScanError(threat, f"content looks like {what}{shown}; {_ADVICE[threat]}")


# ------------------------------------------------------------------ facts ----
#
# A fact file is UTF-8 text: entries separated by a line holding only "§".
# Every change holds an exclusive lock on "<dir>/.lock" for the whole
# read-modify-write, re-reads the file under it, and replaces the file
# atomically (unique temp file in the same directory, fsync, os.replace,
# fsync of the directory). Reads need no lock: a rename is atomic, so a reader
# sees the old file or the new one, never a mix.

_SEP_LINE = re.compile(r"^[ \t]*§[ \t]*$", re.MULTILINE)
_LOCK_NAME = ".lock"


def _check_target(target: str) -> str:
    if target not in _TARGETS:
        raise InvalidInputError(f"target must be 'user' or 'env', got {target!r}")
    return target


def _check_text(name: str, value: str) -> str:
    """Return ``value`` stripped, with newlines normalised; refuse empty or non-str."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        raise InvalidInputError(f"{name} is empty; give the text of the fact")
    return text


def _check_entry(content: str) -> str:
    text = _check_text("content", content)
    if _SEP_LINE.search(text):
        raise InvalidInputError(
            "content holds a line that is only '§', the entry separator; it would split into two "
            "entries. Remove that line, or write the two facts separately."
        )
    return text


def _parse_entries(text: str) -> list[str]:
    return [entry.strip() for entry in _SEP_LINE.split(text) if entry.strip()]


def _decode(path: Path, data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentMemoryError(
            f"{path} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); it will "
            "not be changed. Fix its encoding or move it aside, then try again."
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_text(path: Path) -> str:
    """The file's text, ``""`` when it does not exist; ``AgentMemoryError`` if unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise AgentMemoryError(f"cannot read {path}: {exc.strerror or exc}; check the path and its permissions") from None
    return _decode(path, data)


def _make_dir(directory: Path) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise AgentMemoryError(f"cannot create memory directory {directory}: {exc.strerror or exc}") from None


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return  # Windows cannot open a directory for fsync; NTFS journals the rename.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old or the new file."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold the directory's cross-process lock (creating the directory if needed)."""
    _make_dir(directory)
    try:
        fd = os.open(directory / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise AgentMemoryError(f"cannot open lock file in {directory}: {exc.strerror or exc}") from None
    try:
        _lock_fd(fd)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


if os.name == "nt":  # pragma: no cover - exercised on Windows only

    def _lock_fd(fd: int) -> None:
        import msvcrt

        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                return
            except OSError:
                continue

else:

    def _lock_fd(fd: int) -> None:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)


def _size(entries: list[str]) -> int:
    return len(ENTRY_SEP.join(entries))


class FactStore:
    """The two fact files of one memory directory, ``user.md`` and ``env.md``.

    Caps count characters of the stored text (entries joined by ``ENTRY_SEP``).
    Every method that changes a file is atomic and safe across processes; when
    it raises, every file is exactly as it was. The directory (``~`` is
    expanded) is created with mode 0700 on the first write, never on a read.
    """

    def __init__(self, directory: str | os.PathLike[str], cap_user: int = DEFAULT_FACTS_LIMIT_USER,
                 cap_env: int = DEFAULT_FACTS_LIMIT_ENV) -> None:
        for name, cap in (("cap_user", cap_user), ("cap_env", cap_env)):
            if type(cap) is not int or cap <= 0:
                raise InvalidInputError(f"{name} must be a positive integer, got {cap!r}")
        self._dir = Path(directory).expanduser()
        self._caps = {"user": cap_user, "env": cap_env}

    def _path(self, target: str) -> Path:
        """The file that holds ``target``'s entries."""
        return self._dir / f"{_check_target(target)}.md"

    def read(self, target: str) -> str:
        """The whole file, stripped, with ``\\n`` line endings; ``""`` if it does not exist."""
        return _read_text(self._path(target)).strip()

    def entries(self, target: str) -> list[str]:
        """The file's entries, in order."""
        return _parse_entries(self.read(target))

    def _usage(self, target: str) -> tuple[int, int]:
        """``(used, limit)`` in characters."""
        return _size(self.entries(target)), self._caps[_check_target(target)]

    def add(self, target: str, content: str) -> None:
        """Append an entry; an exact duplicate is a silent no-op."""
        content = _check_entry(content)

        def edit(entries: list[str]) -> list[str] | None:
            return None if content in entries else entries + [content]

        self._update(target, edit)

    def replace(self, target: str, old_text: str, content: str) -> None:
        """Replace the one entry containing ``old_text`` with ``content``."""
        content = _check_entry(content)
        old_text = _check_text("old_text", old_text)

        def edit(entries: list[str]) -> list[str]:
            index = self._match(target, entries, old_text)
            if content in entries:  # already stored elsewhere: keep that copy only
                return entries[:index] + entries[index + 1:] if entries[index] != content else entries
            return entries[:index] + [content] + entries[index + 1:]

        self._update(target, edit)

    def remove(self, target: str, old_text: str) -> None:
        """Remove the one entry containing ``old_text``; the others keep their order."""
        old_text = _check_text("old_text", old_text)

        def edit(entries: list[str]) -> list[str]:
            index = self._match(target, entries, old_text)
            return entries[:index] + entries[index + 1:]

        self._update(target, edit)

    @staticmethod
    def _match(target: str, entries: list[str], old_text: str) -> int:
        """Index of the single entry containing ``old_text``; ``MatchError`` otherwise."""
        hits = [i for i, entry in enumerate(entries) if old_text in entry]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise MatchError(
                0,
                f"old_text {_preview(old_text)!r} matches no entry in {target}; read the current "
                "entries and copy a distinctive part of the one you mean",
            )
        shown = ", ".join(repr(_preview(entries[i])) for i in hits[:5])
        raise MatchError(
            len(hits),
            f"old_text {_preview(old_text)!r} matches {len(hits)} entries in {target}; use a longer "
            f"substring (matches: {shown})",
        )

    def _update(self, target: str, edit: Callable[[list[str]], list[str] | None]) -> list[str]:
        """Run ``edit(entries) -> new entries or None`` under the lock and store the result.

        Returns the entries now on disk. ``CapacityError`` if the result would
        pass the cap and grows the file (a shrinking edit of an over-full,
        hand-edited file is allowed, so the agent can always make room).
        """
        path = self._path(target)
        with _locked(self._dir):
            entries = _parse_entries(_read_text(path).strip())
            updated = edit(list(entries))
            if updated is None or updated == entries:
                return entries
            current, new_size, limit = _size(entries), _size(updated), self._caps[target]
            if new_size > limit and new_size > current:
                raise CapacityError(
                    target, limit, current, new_size - current,
                    f"{target} memory would exceed its limit: {current}/{limit} chars used, this write "
                    f"needs {new_size - current} more. Remove or replace an entry that is no longer "
                    f"useful (or consolidate related ones), then try again. Entries: "
                    + "; ".join(f"[{i}] {_preview(e, 60)}" for i, e in enumerate(entries)),
                )
            _atomic_write(path, ENTRY_SEP.join(updated) + "\n" if updated else "")
            return updated


# ----------------------------------------------------------------- buffer ----


class Buffer:
    """A ring buffer of one-line turn summaries for the current session.

    ``cap <= 0`` disables it: appends are discarded. Not thread-safe; the agent
    loop that owns it serialises access.
    """

    def __init__(self, cap: int) -> None:
        if type(cap) is not int:
            raise InvalidInputError(f"buffer cap must be an integer, got {cap!r}")
        self._cap = cap
        self._lines: deque[str] = deque(maxlen=max(cap, 0))

    @property
    def cap(self) -> int:
        return self._cap

    def append(self, line: str) -> None:
        """Add a line (newlines and tabs become spaces), evicting the oldest at capacity."""
        if not isinstance(line, str):
            raise InvalidInputError(f"buffer line must be a string, got {type(line).__name__}")
        if self._cap > 0:
            self._lines.append(_one_line(line))

    def lines(self) -> list[str]:
        """A copy of the lines, oldest first."""
        return list(self._lines)

    def clear(self) -> None:
        self._lines.clear()

    def __len__(self) -> int:
        return len(self._lines)


_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t]")


def _one_line(text: str) -> str:
    return _LINE_BREAKS.sub(" ", text)


def format_buffer_line(role: str, message: str) -> str:
    """``"HH:MM  role  message"`` with the current UTC time, on one line."""
    return f"{time.strftime('%H:%M', time.gmtime())}  {_one_line(role)}  {_one_line(message)}"
