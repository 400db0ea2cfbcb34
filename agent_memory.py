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
from typing import Any, Callable, Iterator, Mapping, Protocol, runtime_checkable

__all__ = [
    "ADD_THRESHOLD",
    "DEFAULT_BUFFER_LINES",
    "DEFAULT_FACTS_LIMIT_ENV",
    "DEFAULT_FACTS_LIMIT_USER",
    "ENTRY_SEP",
    "MERGE_THRESHOLD",
    "AgentMemoryError",
    "AnthropicClient",
    "Buffer",
    "CapacityError",
    "FactStore",
    "InvalidInputError",
    "LLMClient",
    "LLMError",
    "MatchError",
    "MemoryConfig",
    "MemoryDisabledError",
    "OpenAIClient",
    "ScanError",
    "format_buffer_line",
    "llm_from_env",
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


@functools.lru_cache(maxsize=None)
def _logger() -> Any:
    """The module's logger; ``logging`` is imported on first use to keep the import fast."""
    import logging

    return logging.getLogger(__name__)



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


@dataclasses.dataclass(frozen=True)
class MemoryConfig:
    """Settings of a ``MemoryManager``; JSON keys are the field names.

    The first twelve fields are those of the Go package; the last four govern
    the episode lifecycle. ``MemoryConfig()`` gives the defaults. Construction
    validates every field and raises ``InvalidInputError`` naming the bad one;
    the config is frozen, so change it with ``dataclasses.replace``, which
    validates again.
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
                value = float(value) if abs(value) < 2**53 else math.inf
                object.__setattr__(self, field.name, value)
            if type(value) is not kind:
                raise InvalidInputError(
                    f"config key {field.name!r} must be {kind.__name__}, got {type(value).__name__} {value!r}"
                )
            if kind is float and not math.isfinite(value):
                raise InvalidInputError(f"config key {field.name!r} must be a finite number, got {value!r}")
        for name, low, high in _INT_RANGES:
            if not low <= getattr(self, name) <= high:
                raise InvalidInputError(
                    f"config key {name!r} must be between {low} and {high:,}, got {getattr(self, name)}"
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
_INT_RANGES = [("facts_limit_user", 1, 1_000_000), ("facts_limit_env", 1, 1_000_000), ("buffer_lines", 0, 100_000),
               ("min_turns_for_extraction", 0, 1_000_000), ("max_episodes", 0, 10_000_000),
               ("episode_ttl_days", 0, 36_500)]


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
    if kind is float and isinstance(value, int) and abs(value) >= 2**53:
        return math.inf  # refused as not finite, instead of an OverflowError
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
# else is matched on folded views: NFKC (full-width "ＩＧＮＯＲＥ" reads
# "ignore"), case-folded, Cyrillic and Greek look-alikes mapped to Latin, and
# for phrasing, runs of spaces and punctuation made one space. Every pattern is
# a sequence of bounded pieces, no unbounded quantifier inside another, so the
# scan stays linear on hostile input.

_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
# Every format (Cf) character of Unicode 15, plus invisible characters filed
# elsewhere: combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# Mongolian variation selectors, variation selectors, the braille blank, and
# private-use characters (no visible meaning). A test checks the Cf list
# against the running Python's unicodedata.
_INVISIBLE_CANDIDATES = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff\u2800\ue000-\uf8ff\U000f0000-\U0010ffff]"
)
# A subdivision flag (🏴󠁧󠁢󠁳󠁣󠁴󠁿) is the one legitimate use of tag characters.
_FLAG_TAG_SEQUENCE = re.compile("\U0001F3F4[\U000E0030-\U000E0039\U000E0061-\U000E007A]{1,7}\U000E007F")
_JOINING_SCRIPTS = ((0x0600, 0x08FF), (0x0900, 0x0DFF), (0x0F00, 0x0FFF), (0x1800, 0x18AF),
                    (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))  # Arabic, Syriac, Indic, Tibetan, Mongolian


def _is_emoji(char: str) -> bool:
    code = ord(char)
    return (
        0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or code in (0xFE0F, 0x20E3)
        or unicodedata.category(char) == "So"
    )


def _in_joining_script(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _JOINING_SCRIPTS) and unicodedata.category(char)[0] in "LM"


def _invisible_is_legitimate(text: str, at: int) -> bool:
    """Is the invisible character at ``at`` part of ordinary writing?"""
    code = ord(text[at])
    before = text[at - 1] if at > 0 else ""
    after = text[at + 1] if at + 1 < len(text) else ""
    if code in (0xFE0E, 0xFE0F):  # text or emoji presentation of the character before: ❤️, 1️⃣
        return bool(before) and (_is_emoji(before) or before in "0123456789#*") and before not in "\ufe0e\ufe0f"
    if 0xE0100 <= code <= 0xE01EF:  # one ideographic variation selector after a CJK ideograph: 葛󠄀
        return bool(before) and unicodedata.name(before, "").startswith("CJK")
    if code == 0x200D and before and after and _is_emoji(before) and _is_emoji(after):
        return True  # 👨‍👩‍👧: the joiner is part of the emoji
    if code in (0x200C, 0x200D) and before and after:
        return _in_joining_script(before) and _in_joining_script(after)  # Persian, Hindi, …
    return False


def _find_invisible(text: str) -> str | None:
    """Return a description of the first invisible character, or None."""
    flags = [match.span() for match in _FLAG_TAG_SEQUENCE.finditer(text)] if "\U0001F3F4" in text else []
    for match in _INVISIBLE_CANDIDATES.finditer(text):
        at = match.start()
        if _invisible_is_legitimate(text, at) or any(start < at < end for start, end in flags):
            continue
        char = match.group()
        return f"U+{ord(char):04X} {unicodedata.name(char, 'format character')} at position {at}"
    return None


# Each rule: (threat, what it looks like, view, triggers, pattern). The pattern
# runs only when one of the trigger substrings occurs in the view, which keeps
# the scan of an ordinary fact to a few substring tests. Views: "words" is the
# folded text with every run of non-word characters turned into one space;
# "folded" keeps punctuation; "nfkc" keeps case, for credential shapes. Triggers
# are tested on "folded" for "words" rules (every word of a match occurs there).
_W = r"(?: [a-z0-9]{1,24}){0,3}"  # up to three filler words
_SECRET_NAME = r"[a-z0-9_]{0,40}(?:key|token|secret|pass|pwd|cred|auth)[a-z0-9_]{0,40}"
_SECRET_FILE = (r"(?:\.env\b(?!\.(?:example|sample|template|dist))|\.netrc|\.pgpass|\.npmrc|\.pypirc|"
                r"\.git-credentials|\.aws/credentials|\.docker/config\.json|/etc/shadow|"
                r"id_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub))")
_SECRET_FILE_TRIGGERS = (".env", ".netrc", ".pgpass", ".npmrc", ".pypirc", "credentials", "id_rsa", "id_dsa",
                         "id_ecdsa", "id_ed25519", "shadow", "config.json")
_NETWORK_TOOL = r"\b(?:curl|wget|httpie|nc|ncat|scp|rsync|sftp|ftp|iwr|irm|invoke-webrequest|invoke-restmethod)\b"
_RULE_TABLE = [
    # -- prompt injection: instructions aimed at the model, not facts about the world
    ("prompt_injection", "an instruction to ignore earlier instructions", "words",
     ("ignore", "disregard", "forget", "override", "bypass", "overrule"),
     rf"\b(?:ignore|disregard|forget){_W} (?:previous|prior|above|earlier|preceding|former|original|initial)"
     rf"{_W} (?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|commands|"
     r"constraints|restrictions|programming|policies)\b"
     r"|\b(?:ignore|disregard|forget|override|bypass|overrule) (?:all |any |every )?(?:of )?(?:your|my|these)"
     rf"{_W} (?:instructions|guidelines|guardrails|programming|directives|system prompt|rules)\b"
     r"|\b(?:ignore|disregard|forget) (?:all |any )?(?:system|developer|safety) (?:prompts?|instructions|rules)\b"
     r"|\b(?:ignore|disregard|forget) (?:the |all |everything )?above\b"
     r"|\b(?:ignore|disregard|forget) (?:everything|anything|all|what) (?:above|before|previously|so far|"
     r"(?:you (?:were|have been|ve been)|i) (?:told|said|instructed|wrote))\b"),
    ("prompt_injection", "an attempt to change the assistant's role", "words", ("now", "longer", "pretend", "act"),
     r"\byou are now (?:a |an |in )?(?:different|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|dan|"
     r"god mode)\b"
     r"|\bfrom now on,? you (?:must|will|shall|should|are to) (?:obey|ignore|only|follow|act|answer|respond)\b"
     r"|\byou are now (?:a |an )?new (?:ai|assistant|persona|character|identity|model)\b"
     r"|\byou are no longer (?:an? )?(?:ai|assistant|bound|restricted|limited|claude|chatgpt)\b"
     r"|\bpretend (?:that )?(?:you are|to be|you have) (?:an? )?(?:different|unrestricted|unfiltered|"
     r"jailbroken|no rules|no restrictions|no guidelines|no limits)\b"
     r"|\bact as (?:an? )?(?:unrestricted|unfiltered|jailbroken|uncensored|dan)\b"),
    ("prompt_injection", "new instructions for the assistant", "words",
     ("instructions", "rules", "orders", "directives", "prompt"),
     r"\b(?:follow|obey|execute) (?:these|the following|my|this) new (?:instructions|rules|orders|directives)\b"
     r"|\b(?:here are|these are) (?:your|the) new (?:instructions|rules|orders|directives)\b"
     r"|\b(?:here is|this is) (?:your|the) new system prompt\b"
     r"|\b(?:reveal|print|show|output|repeat|leak|dump|disclose) (?:me )?(?:your|me the|us the) (?:full |entire |"
     r"hidden |original |secret )?(?:system prompt|initial prompt|hidden instructions|instructions)\b"),
    ("prompt_injection", "new instructions for the assistant", "folded", ("instructions", ":"),
     r"(?:^|[\n.!?]\s{0,3})(?:new|updated|real) instructions\s{0,3}:"
     r"|(?:^|\n)\s{0,3}(?:system|assistant)\s{0,2}:\s{0,3}(?:you |the assistant|ignore|from now on)"),
    ("prompt_injection", "an instruction to ignore earlier instructions", "folded", ("ignor", "忽略"),
     r"\bignor(?:e|ieren sie|iere|ez|a|ar) (?:toutes |todas |alle |all )?(?:les |las |los )?"
     r"(?:vorherigen|bisherigen|instructions pr[ée]c[ée]dentes|instrucciones anteriores)"
     r"|忽略(?:之前|以上|先前|上面|前面)的?(?:所有)?(?:指令|指示|说明|规则)"),
    ("prompt_injection", "an instruction to hide something from the user", "words",
     ("tell", "inform", "mention", "reveal", "without", "know", "from the user"),
     r"\b(?:do not|don t|never) (?:tell|inform|mention (?:this |it )?to|reveal (?:this |it )?to) the user\b(?! s\b)"
     r"|\b(?:do not|don t|never) let the user (?:know|see|find out|notice)\b"
     r"|\b(?:keep|hide) (?:this|it|that) (?:secret |hidden )?from the user\b"
     r"|\bwithout (?:telling|informing) the user\b(?! s\b)"),
    ("prompt_injection", "a chat-template role marker", "folded", ("<", "[inst", "[/inst", "human", "assistant"),
     r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)\|>"
     r"|<(?:start|end)_of_turn>|\[/?inst\]|<</?sys>>|<\s{0,3}/\s{0,3}system\s{0,3}>"
     r"|<\s{0,3}/?\s{0,3}system[-_](?:reminder|message|prompt|instructions?)\s{0,3}>"
     r"|\n\s{0,3}\n\s{0,3}(?:human|assistant)\s{0,2}:"),
    # -- exfiltration and persistence commands
    ("exfiltration", "a network command carrying a secret", "folded", ("$",),
     rf"(?:{_NETWORK_TOOL}|\bhttps?\s{{1,5}}(?:get|post|put|patch|-))[^\n]{{0,200}}"
     rf"(?:\$\{{?{_SECRET_NAME}|\$\(\s{{0,3}}(?:env|printenv|cat|base64|gpg|tar|set)\b)"
     rf"|\$\{{?{_SECRET_NAME}\}}?[^\n|]{{0,40}}\|\s{{0,3}}{_NETWORK_TOOL}"),
    ("exfiltration", "a command reading a secrets file", "folded", _SECRET_FILE_TRIGGERS,
     r"\b(?:cat|tac|less|head|tail|base64|xxd|strings|gpg)(?:\s{1,5}-[^\s|;&]{1,20}(?:\s{1,5}\d{1,9})?){0,4}"
     rf"\s{{1,5}}[^\s|;&]{{0,120}}{_SECRET_FILE}"
     rf"|{_NETWORK_TOOL}[^\n]{{0,200}}{_SECRET_FILE}"),
    ("exfiltration", "a command sending the environment out", "folded", ("|",),
     rf"\b(?:env|printenv|set|export -p)\s{{0,3}}\|\s{{0,3}}(?:[a-z]{{1,10}}\s{{1,3}}){{0,2}}{_NETWORK_TOOL}"),
    ("exfiltration", "a write to authorized_keys", "folded", ("authorized_keys",),
     r">>?\s{0,5}[^\s]{0,120}authorized_keys|\btee\b(?:\s{1,5}-a)?\s{1,5}[^\s]{0,120}authorized_keys"),
    ("exfiltration", "a download run as a program", "folded", ("|", "<(", "$("),
     rf"{_NETWORK_TOOL}[^\n|]{{0,300}}\|\s{{0,5}}(?:sudo\s{{1,5}})?"
     r"(?:(?:ba|z|k|da|fi)?sh|python[0-9.]{0,4}|perl|ruby|node|php|iex|invoke-expression)\b"
     r"|\b(?:(?:ba|z|da)?sh|source|\.)\s{1,5}<\(\s{0,5}(?:curl|wget)\b"
     r"|\b(?:ba|z|da)?sh\s{1,5}-c\s{1,5}[\"']?\$\(\s{0,5}(?:curl|wget)\b"),
    ("exfiltration", "a reverse shell", "folded", ("/dev/tcp", "-e ", "--exec", "--sh-exec", "mkfifo", "socat"),
     r"/dev/tcp/|\bnc(?:at)?\b[^\n]{0,80}\s(?:-e|--exec|--sh-exec)\s|\bmkfifo\b[^\n]{0,120}\bnc(?:at)?\b"
     r"|\bsocat\b[^\n]{0,120}\bexec:"),
    ("exfiltration", "an instruction to send secrets somewhere", "folded",
     ("http", "webhook", "pastebin", "ngrok", "requestbin", "@"),
     r"\b(?:send|upload|exfiltrate|forward|leak|email|copy)\b[^\n]{0,60}(?:api keys?|secrets|credentials|"
     r"passwords|tokens|env vars|environment variables|\.env\b|ssh keys?|private keys?)[^\n]{0,60}"
     r"(?:https?://|webhook|pastebin|ngrok|requestbin|@[a-z0-9-]{1,63}\.[a-z]{2,})"),
    # -- credentials (never echoed back)
    ("credential", "an OpenAI or Anthropic API key", "nfkc", ("sk-",),
     r"\bsk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_-]{20,}"  # a bare sk- must look random: digits and capitals
     r"|\bsk-(?=[A-Za-z0-9_-]{0,80}\d)(?=[A-Za-z0-9_-]{0,80}[A-Z])[A-Za-z0-9_-]{20,}"),
    ("credential", "an AWS access key id", "nfkc", ("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])"),
    ("credential", "a webhook URL with its secret", "nfkc", ("hooks.slack.com", "/api/webhooks/"),
     r"hooks\.slack\.com/services/T[A-Za-z0-9]{6,}/B[A-Za-z0-9]{6,}/[A-Za-z0-9]{12,}"
     r"|discord(?:app)?\.com/api/webhooks/\d{5,}/[A-Za-z0-9_-]{20,}"),
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
    ("credential", "a bearer or basic auth token", "folded", ("bearer", "basic"),
     r"\bbearer\s{1,5}[a-z0-9._~+/-]{20,}|\bauthorization\s{0,3}:\s{0,3}basic\s{1,5}[a-z0-9+/]{8,}={0,2}"),
    ("credential", "a URL with a password", "nfkc", ("://",),
     r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s/:@]{0,64}:[^\s/@$<{][^\s/@]{2,63}@"),
    ("credential", "a password on a command line", "folded", ("-p",),
     r"\b(?:mysql|mysqldump|mariadb)\b[^\n]{0,80}\s-p[^\s'\"]{4,}"),
    ("credential", "a password or secret assignment", "folded",
     ("pass", "pwd", "secret", "key", "token"),
     r"(?<![a-z0-9])[a-z0-9_]{0,20}(?:password|passwd|secret|api[_-]?key|access[_-]?key|access[_-]?token|"
     r"auth[_-]?token|client[_-]?secret|private[_-]?key|secret[_-]?key|token)\b['\"]?"
     r"(?:\s{0,3}(?:[:=]|=>)\s{0,3}|\s{1,3}(?:is|was)\s{1,3})['\"]?"
     # a literal that looks like a secret: not a reference, placeholder or path; has a digit or symbol
     r"(?![<${%*(\[/~]|\.{1,2}/|x{3}|process\.env|os\.(?:environ|getenv)|env\b|settings\.|config\.|"
     r"(?:none|null|nil|required|optional|true|false)\b|(?:your|my|example|sample|placeholder|changeme|dummy|fake)[_-])"
     r"(?![^\s'\",;]{0,80}\.(?:pem|key|crt|cer|p12|pfx|json|ya?ml|txt|ini|cfg)\b)"
     r"(?=[^\s'\",;]{0,64}[0-9!@#%^&*+=/?~._-])[^\s'\",;]{6,}"),
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
# Cyrillic and Greek letters that look like Latin ones, for "іgnore" written with a Cyrillic і.
_LOOKALIKES = str.maketrans("аеорсухіјѕԁɡԛԝοαειτκνρυχ", "aeopcyxijsdgqwoaeitkvpux")
_NON_WORD = re.compile(r"[\W_]+")
_COMBINING_MARKS = re.compile("[\u0300-\u036f]")  # "i̇gnore" (i + combining dot) reads "ignore"


def _word_view(folded: str) -> str:
    if folded.isascii():
        return " ".join(folded.translate(_ASCII_PUNCTUATION).split())
    return _NON_WORD.sub(" ", folded).strip()


def scan_content(content: str) -> None:
    """Raise ``ScanError`` if ``content`` is unsafe to put in a system prompt.

    Refused: more than 65,536 characters (before or after NFKC folding);
    invisible or direction-changing characters (an emoji's zero-width joiner
    or presentation selector, a joiner between letters of a script that needs
    it, and subdivision flags are allowed); control characters other than
    ``\\n \\r \\t``, and unpaired surrogates; prompt-injection phrasing;
    exfiltration and persistence commands; credentials. The error's ``threat``
    names the rule and its message says what to do instead. A credential is
    never echoed back.
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
    nfkc = folded = content
    if not content.isascii():
        invisible = _find_invisible(content)
        if invisible:
            raise ScanError(
                "invisible_unicode",
                f"content holds an invisible character ({invisible}); invisible text can hide "
                "instructions from the reader. Remove it and try again.",
            )
        nfkc = unicodedata.normalize("NFKC", content)
        if len(nfkc) > _MAX_SCAN_CHARS:
            raise ScanError("too_large", f"content expands to {len(nfkc):,} characters under Unicode "
                                         f"normalisation; the limit is {_MAX_SCAN_CHARS:,}. Store a short summary instead.")
        folded = _COMBINING_MARKS.sub("", nfkc.casefold().translate(_LOOKALIKES))
    else:
        folded = content.casefold()
    views = {"nfkc": nfkc, "folded": folded}
    for threat, what, trigger_view, view, triggers, pattern in _scan_rules():
        for trigger in triggers:
            if trigger in views[trigger_view]:
                break
        else:
            continue
        if view not in views:
            views[view] = _word_view(folded)
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
_SURROGATE = re.compile("[\ud800-\udfff]")
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
    surrogate = _SURROGATE.search(text)
    if surrogate:
        raise InvalidInputError(f"{name} holds an unpaired surrogate (U+{ord(surrogate.group()):04X}) at position "
                                f"{surrogate.start()}, which cannot be stored as UTF-8; fix the text's decoding")
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
    """Make a rename durable. Best effort: some platforms and file systems cannot."""
    if os.name != "posix":
        return  # Windows cannot open a directory for fsync; NTFS journals the rename.
    try:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        _logger().debug("cannot fsync directory %s: %s", directory, exc)


def _atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old or the new file.

    A symlink is followed: its target is replaced, the link stays.
    """
    import tempfile

    path = Path(os.path.realpath(path))
    data = text.encode("utf-8")
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise AgentMemoryError(f"cannot write in {path.parent}: {exc.strerror or exc}; "
                               "check its permissions and free space") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise AgentMemoryError(f"cannot write {path}: {exc.strerror or exc}; the file is unchanged") from None
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
        if len(hits) > 1 and old_text in entries:  # the whole of one entry picks it out
            hits = [entries.index(old_text)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise MatchError(
                0,
                f"old_text {_preview(old_text)!r} matches no entry in {target}; read the current "
                "entries and copy a distinctive part of the one you mean",
            )
        shown = ", ".join(repr(_preview(entries[i], 120)) for i in hits[:5])
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
        if not self._dir.exists():  # decide before creating anything, so a refused write leaves no trace
            updated = edit([])
            if not updated:
                return []
            self._check_size(target, [], updated)
        with _locked(self._dir):
            entries = _parse_entries(_read_text(path).strip())
            updated = edit(list(entries))
            if updated is None or updated == entries:
                return entries
            self._check_size(target, entries, updated)
            _atomic_write(path, ENTRY_SEP.join(updated) + "\n" if updated else "")
            return updated

    def _check_size(self, target: str, entries: list[str], updated: list[str]) -> None:
        """``CapacityError`` if ``updated`` passes the cap and is larger than ``entries``."""
        current, new_size, limit = _size(entries), _size(updated), self._caps[target]
        if new_size > limit and new_size > current:
            raise CapacityError(
                target, limit, current, new_size - current,
                f"{target} memory would exceed its limit: {current}/{limit} chars used, this write "
                f"needs {new_size - current} more. Remove or replace an entry that is no longer "
                f"useful (or consolidate related ones), then try again. Entries: "
                + "; ".join(f"[{i}] {_preview(e, 60)}" for i, e in enumerate(entries)),
            )


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


def _one_line(text: str) -> str:
    """``text`` on one line: every line break Python knows, and tabs, become spaces."""
    return " ".join(text.replace("\t", " ").splitlines())


def format_buffer_line(role: str, message: str) -> str:
    """``"HH:MM  role  message"`` with the current UTC time, on one line."""
    return f"{time.strftime('%H:%M', time.gmtime())}  {_one_line(role)}  {_one_line(message)}"


# ------------------------------------------------------------ LLM clients ----
#
# Memory needs an LLM only for judgement calls: the unclear band of
# merge-on-write, consolidation, episode extraction and ranking. Any object with
# ``simple_call(system, user) -> str`` will do. The two clients below speak the
# OpenAI chat-completions and Anthropic Messages APIs over urllib, so they run
# wherever Python runs: a hosted API, a local Ollama or llama.cpp server, a
# corporate proxy (HTTPS_PROXY, NO_PROXY and SSL_CERT_FILE work as in urllib).


@runtime_checkable
class LLMClient(Protocol):
    """What memory needs from an LLM: one blocking call, system + user in, text out.

    Implementations raise ``LLMError`` on failure and should bound their own time.
    """

    def simple_call(self, system: str, user: str) -> str: ...


_RETRY_STATUSES = frozenset({408, 409, 429})
_MAX_REPLY_BYTES = 8 * 1024 * 1024
_MAX_RETRY_AFTER = 20.0
_BACKOFF_BASE = 0.5


class _Retryable(Exception):
    """A failure worth another attempt (timeout, connection error, 429, 5xx)."""

    def __init__(self, message: str, status: int | None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class _HTTPClient:
    """Shared transport: JSON POST with a timeout, retries with backoff, honest errors."""

    _kind = "LLM server"
    _default_base_url = ""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, max_tokens: int = 2048,
                 ssl_context: Any = None) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError("model must be a non-empty string, such as 'gpt-4o-mini' or 'llama3.1'")
        base_url = self._default_base_url if base_url is None else base_url
        if not isinstance(base_url, str) or not re.match(r"https?://[^\s/]", base_url):
            raise InvalidInputError(f"base_url must start with http:// or https://, got {base_url!r}")
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            raise InvalidInputError("api_key must be a non-empty string or None")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise InvalidInputError(f"timeout must be a positive number of seconds, got {timeout!r}")
        for name, value in (("max_retries", max_retries), ("max_tokens", max_tokens)):
            if type(value) is not int or value < (0 if name == "max_retries" else 1):
                raise InvalidInputError(f"{name} must be a {'non-negative' if name == 'max_retries' else 'positive'} integer, got {value!r}")
        self.model = model.strip()
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self._api_key = api_key.strip() if api_key else None
        self._ssl_context = ssl_context
        self._opener: Any = None
        self._sleep = time.sleep  # tests replace it to observe backoff without waiting

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

    def simple_call(self, system: str, user: str) -> str:
        """Send one system + user message; return the reply text or raise ``LLMError``."""
        if not isinstance(system, str) or not isinstance(user, str):
            raise InvalidInputError("system and user must be strings")
        return self._extract(self._post(system, user))

    # -- provider specifics -------------------------------------------------

    def _request(self, system: str, user: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        raise NotImplementedError

    def _extract(self, reply: Any) -> str:
        raise NotImplementedError

    def _adapt(self, status: int, error: Any) -> bool:
        """Adjust the request after a 400 the server explains; True to try again at once."""
        return False

    # -- transport -----------------------------------------------------------

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _post(self, system: str, user: str) -> Any:
        attempt = 0
        while True:
            url, headers, body = self._request(system, user)
            try:
                return self._post_once(url, headers, body)
            except _Retryable as failure:
                if attempt >= self.max_retries:
                    raise LLMError(self._redact(str(failure)), failure.status) from None
                delay = failure.retry_after
                if delay is None:
                    import random

                    delay = _BACKOFF_BASE * 2 ** attempt + random.uniform(0, _BACKOFF_BASE)
                _logger().debug("LLM call failed (%s); retry %d in %.2fs", self._redact(str(failure)),
                                attempt + 1, delay)
                self._sleep(delay)
                attempt += 1
            except _Adapted:
                continue

    def _open(self, request: Any) -> Any:
        import urllib.request

        if self._opener is None:
            handlers = [urllib.request.HTTPSHandler(context=self._ssl_context)] if self._ssl_context else []
            self._opener = urllib.request.build_opener(*handlers)  # keeps the proxy handler
        return self._opener.open(request, timeout=self.timeout)

    def _post_once(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> Any:
        import http.client
        import json
        import ssl
        import urllib.error
        import urllib.request

        where = f"{self._kind} at {self.base_url}"
        request = urllib.request.Request(
            url, data=json.dumps(body).encode("utf-8"), method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json",
                     "User-Agent": f"agent_memory/{__version__}", **headers},
        )
        deadline = time.monotonic() + self.timeout
        try:
            with self._open(request) as response:
                raw = _read_bounded(response, deadline)
                status = response.status
        except urllib.error.HTTPError as error:
            with error:
                detail, parsed = _error_detail(error.read(65536))
            message = f"{where} answered HTTP {error.code}: {detail}"
            if error.code in _RETRY_STATUSES or error.code >= 500:
                raise _Retryable(message, error.code, _retry_after(error.headers.get("Retry-After"))) from None
            if error.code == 400 and self._adapt(error.code, parsed):
                raise _Adapted() from None
            raise LLMError(self._redact(message + _hint(error.code)), error.code) from None
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, ssl.SSLError):
                raise LLMError(self._redact(
                    f"TLS failure talking to {where}: {reason}; if a proxy or private CA signs its "
                    "certificate, point SSL_CERT_FILE at the CA bundle or pass ssl_context"), None) from None
            raise _Retryable(f"cannot reach {where}: {reason}", None) from None
        except (OSError, http.client.HTTPException) as error:  # timeouts, resets mid-reply
            raise _Retryable(f"{where} failed: {type(error).__name__}: {error or 'timed out'}", None) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise LLMError(self._redact(
                f"{where} answered HTTP {status} with a body that is not JSON: {_preview(raw.decode('utf-8', 'replace'), 80)!r}; "
                "check that base_url points at the API, not a web page"), status) from None


class _Adapted(Exception):
    """The request was adjusted after a 400 the server explained; send it again."""


def _read_bounded(response: Any, deadline: float) -> bytes:
    """Read a reply body, refusing more than 8 MiB or reading past the deadline."""
    chunks, size = [], 0
    while True:
        chunk = response.read(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > _MAX_REPLY_BYTES:
            raise LLMError(f"reply larger than {_MAX_REPLY_BYTES // 2**20} MiB; is base_url right?", response.status)
        if time.monotonic() > deadline:
            raise TimeoutError("the reply took longer than the timeout")


def _error_detail(raw: bytes) -> tuple[str, Any]:
    """The server's own error text (OpenAI, Anthropic and Ollama shapes), and the parsed body."""
    import json

    text = raw.decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return (_preview(text, 300) or "no details"), None
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    if isinstance(error, dict):
        message = error.get("message") or error.get("type") or json.dumps(error)
    else:
        message = str(error)
    return _preview(str(message), 300), parsed


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or HTTP date), capped."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return None
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


def _hint(status: int) -> str:
    if status in (401, 403):
        return " (check the API key and that it may use this model)"
    if status == 404:
        return " (check base_url and the model name)"
    return ""



class OpenAIClient(_HTTPClient):
    """Any OpenAI-compatible chat-completions server.

    OpenAI (the default ``base_url``), Ollama (``http://localhost:11434/v1``),
    llama.cpp server (``http://localhost:8080/v1``), vLLM
    (``http://localhost:8000/v1``), LM Studio (``http://localhost:1234/v1``),
    OpenRouter (``https://openrouter.ai/api/v1``). The key is sent as a bearer
    token only when given; local servers need none. Models that refuse
    ``max_tokens`` or ``temperature`` (OpenAI's reasoning models) are retried
    once with ``max_completion_tokens`` and the default temperature.
    """

    _kind = "OpenAI-compatible server"
    _default_base_url = "https://api.openai.com/v1"

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, max_tokens: int = 2048,
                 ssl_context: Any = None) -> None:
        super().__init__(model, base_url, api_key, timeout, max_retries, max_tokens, ssl_context)
        self._token_param = "max_tokens"
        self._send_temperature = True

    def _request(self, system: str, user: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            self._token_param: self.max_tokens,
        }
        if self._send_temperature:
            body["temperature"] = 0
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        return f"{self.base_url}/chat/completions", headers, body

    def _adapt(self, status: int, error: Any) -> bool:
        param = error.get("error", {}).get("param") if isinstance(error, dict) else None
        if param == "max_tokens" and self._token_param == "max_tokens":
            self._token_param = "max_completion_tokens"
            return True
        if param == "temperature" and self._send_temperature:
            self._send_temperature = False
            return True
        return False

    def _extract(self, reply: Any) -> str:
        try:
            message = reply["choices"][0]["message"]
            content = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(f"{self._kind} at {self.base_url} sent a reply without choices[0].message: "
                           f"{_preview(str(reply), 120)!r}", 200) from None
        if isinstance(content, list):  # a list of content parts
            content = "".join(part.get("text", "") for part in content
                              if isinstance(part, dict) and part.get("type") in ("text", None))
        if not isinstance(content, str) or not content.strip():
            refusal = message.get("refusal") if isinstance(message, dict) else None
            why = f"the model refused: {_preview(str(refusal), 120)}" if refusal else "the reply holds no text"
            raise LLMError(f"{self._kind} at {self.base_url}: {why}", 200)
        return content


class AnthropicClient(_HTTPClient):
    """The Anthropic Messages API (``POST {base_url}/v1/messages``)."""

    _kind = "Anthropic API"
    _default_base_url = "https://api.anthropic.com"

    def __init__(self, model: str, base_url: str = "https://api.anthropic.com", api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 2, max_tokens: int = 2048,
                 ssl_context: Any = None) -> None:
        super().__init__(model, base_url, api_key, timeout, max_retries, max_tokens, ssl_context)

    def _request(self, system: str, user: str) -> tuple[str, dict[str, str], dict[str, Any]]:
        body = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": 0,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        }
        headers = {"anthropic-version": "2023-06-01"}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        path = "/messages" if self.base_url.endswith("/v1") else "/v1/messages"
        return self.base_url + path, headers, body

    def _extract(self, reply: Any) -> str:
        blocks = reply.get("content") if isinstance(reply, dict) else None
        if not isinstance(blocks, list):
            raise LLMError(f"{self._kind} at {self.base_url} sent a reply without content blocks: "
                           f"{_preview(str(reply), 120)!r}", 200)
        text = "".join(block.get("text", "") for block in blocks
                       if isinstance(block, dict) and block.get("type") == "text")
        if not text.strip():
            raise LLMError(f"{self._kind} at {self.base_url}: the reply holds no text "
                           f"(stop_reason {reply.get('stop_reason')!r})", 200)
        return text


_PROVIDERS = {
    "openai": (OpenAIClient, None, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "ollama": (OpenAIClient, "http://localhost:11434/v1", None, "OLLAMA_BASE_URL"),
    "anthropic": (AnthropicClient, None, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
}


def llm_from_env() -> LLMClient | None:
    """Build a client from environment variables; ``None`` when none are set.

    ``AGENT_MEMORY_LLM_PROVIDER`` (``openai``, ``anthropic`` or ``ollama``) and
    ``AGENT_MEMORY_LLM_MODEL`` turn it on. ``AGENT_MEMORY_LLM_BASE_URL`` and
    ``AGENT_MEMORY_LLM_API_KEY`` fall back to the provider's usual
    ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` or ``ANTHROPIC_BASE_URL``/
    ``ANTHROPIC_API_KEY``; ``AGENT_MEMORY_LLM_TIMEOUT`` sets the timeout in
    seconds. A half-configured environment raises ``InvalidInputError`` naming
    the missing variable.
    """
    env = os.environ
    own = {name: env[name].strip() for name in env
           if name.startswith("AGENT_MEMORY_LLM_") and env[name].strip()}
    if not own:
        return None
    provider, model = own.get("AGENT_MEMORY_LLM_PROVIDER", "").lower(), own.get("AGENT_MEMORY_LLM_MODEL")
    if not provider:
        raise InvalidInputError(f"{', '.join(sorted(own))} set but AGENT_MEMORY_LLM_PROVIDER is not; "
                                f"set it to one of {', '.join(_PROVIDERS)}")
    if provider not in _PROVIDERS:
        raise InvalidInputError(f"AGENT_MEMORY_LLM_PROVIDER={provider!r} is not known; use one of "
                                f"{', '.join(_PROVIDERS)}")
    if not model:
        raise InvalidInputError(f"AGENT_MEMORY_LLM_PROVIDER={provider} is set but AGENT_MEMORY_LLM_MODEL is not; "
                                "set it to the model name")
    cls, default_url, key_var, url_var = _PROVIDERS[provider]
    base_url = own.get("AGENT_MEMORY_LLM_BASE_URL") or env.get(url_var, "").strip() or default_url
    api_key = own.get("AGENT_MEMORY_LLM_API_KEY") or (env.get(key_var, "").strip() if key_var else "") or None
    if api_key is None and base_url is None and key_var:
        raise InvalidInputError(f"AGENT_MEMORY_LLM_PROVIDER={provider} needs an API key: set "
                                f"AGENT_MEMORY_LLM_API_KEY or {key_var} (or AGENT_MEMORY_LLM_BASE_URL "
                                "for a server that needs none)")
    timeout = 60.0
    if "AGENT_MEMORY_LLM_TIMEOUT" in own:
        try:
            timeout = float(own["AGENT_MEMORY_LLM_TIMEOUT"])
        except ValueError:
            raise InvalidInputError("AGENT_MEMORY_LLM_TIMEOUT must be a number of seconds, got "
                                    f"{own['AGENT_MEMORY_LLM_TIMEOUT']!r}") from None
    return cls(model, base_url=base_url or cls._default_base_url, api_key=api_key, timeout=timeout)
