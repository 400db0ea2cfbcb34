"""Memory in an agent loop: two short sessions, the second remembering the first.

    python3 examples/agent_loop.py [MEMORY_DIR]     # a temporary directory if left out

The "model" is a stand-in that plays from a script, so the example runs on any
machine without a network or a key; replace ``call_model`` with your
framework's chat call. Everything memory does here is real.
"""

import json
import os
import sys
import tempfile
import uuid
from datetime import datetime, timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import agent_memory as am

BASE_PROMPT = "You are a coding assistant. Use the memory tool to keep durable facts about the user and project."

# What the stand-in model does for each user message: memory tool calls, then its answer.
SCRIPT = {
    "Hi! Please keep answers short. We're on Postgres 16, port 5433.": (
        [{"action": "add", "target": "user", "content": "Prefers short answers."},
         {"action": "add", "target": "env", "content": "The project uses Postgres 16 on port 5433."}],
        "Noted."),
    "How do I run the tests?": ([], "Run `make test`."),
    "That worked. Remember that tests run with make test.": (
        [{"action": "add", "target": "env", "content": "Tests run with `make test`."}],
        "Saved."),
    "Which port does our database use?": ([], "5433 (Postgres 16), from memory."),
    "What did we do last time?": ([{"action": "search", "query": "tests"}], "We set up the test command."),
}


def call_model(system: str, history: list, user: str, tools: list) -> tuple:
    """Stand-in for a chat API: returns (tool calls, answer). Yours sends system, history and tools."""
    return SCRIPT[user]


def run_session(memory: am.MemoryManager, tool: am.MemoryTool, user_messages: list) -> str:
    session_id = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:8]
    memory.start_session()  # a fresh snapshot of the facts, an empty buffer
    transcript = []  # "role: text" lines, for the episode kept at the end
    for user in user_messages:
        # Rebuilt every turn: the facts part stays the same all session (a stable prompt prefix);
        # the buffer of this session's turns, at its end, grows.
        system = BASE_PROMPT + "\n\n" + memory.build_system_prompt()
        calls, answer = call_model(system, transcript, user, [{"name": tool.name, "description": tool.description,
                                                               "parameters": tool.schema}])
        print(f"  user: {user}")
        for arguments in calls:
            reply = json.loads(tool.call(arguments))  # never raises; the reply goes back to the model
            text = reply.get("message") or reply.get("error")
            print(f"    memory {arguments['action']} -> " + text.replace("\n", "\n      "))
        print(f"  assistant: {answer}")
        memory.append_buffer("user", user)
        memory.append_buffer("assistant", answer)
        transcript += [f"user: {user}", f"assistant: {answer}"]
    # Keeps an episode (an LLM summary, or a digest without one) if the session had 3 turns or more.
    memory.on_session_end(session_id, turns=len(user_messages), messages=transcript)
    return session_id


def main() -> None:
    directory = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="agent-memory-example-")
    memory = am.MemoryManager(directory, llm=am.llm_from_env())  # llm None: everything still works
    tool = am.MemoryTool(memory)
    episodes = am.EpisodeStore(os.path.join(directory, "episodes"))
    print(f"Memory directory: {directory}")
    for number, user_messages in enumerate((list(SCRIPT)[:3], list(SCRIPT)[3:]), 1):
        print(f"\nSession {number}")
        session_id = run_session(memory, tool, user_messages)
        kept = any(meta.session_id == session_id for meta in episodes.read_index())
        print(f"  (ended after {len(user_messages)} turns: "
              f"{'an episode was kept' if kept else 'too short to keep an episode'})")
    memory.start_session()
    print("\nThe memory block in the next session's system prompt:\n")
    print(memory.build_system_prompt())


if __name__ == "__main__":
    main()
