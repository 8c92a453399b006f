"""The agent-facing bus guide (``st2 message guide``): how a seat uses mail and declares presence.

Every harness driver hands this text to its harness through the harness's own instruction slot:
the Codex wrapper as the thread's developer instructions (``thread/start``), the opencode wrapper
as each prompt's session system prompt, and the Claude, pi and omp wrappers as an appended system
prompt (``--append-system-prompt``, on every launch and resume); a plain ``argv`` seat gets it
only from ``st2 message guide``. Every command it names is checked against the real CLI by a test.
Its presence rules are the shipped bus contract (docs/delivery.md §Presence holds): busy before
executing work, available only while yielding or ready, dnd only as an explicit hold — busy never
holds delivery; a fresh dnd is the one hold (:mod:`st2.delivery.hold`), for DING and both native
pumps alike.
"""

GUIDE = """\
# The st2 bus

You are one seat on the st2 bus. Other agents, operators and services reach you only through
mail: each message is a file in your inbox. A line in your terminal such as
`[DING] new st2 message: [id:k3v9qx] <subject> (from <sender>); check your inbox` says one has
arrived. The `[id:…]` is the last six letters of the message's filename and never changes, so an
id you have already handled can be skipped.

## Presence: say what you are doing

- Immediately before you start executing a unit of work (its commands, edits and checks), declare
  yourself busy, and stay busy until you reach a point where you can stop:

      st2 status --set busy

- Declare yourself available only while you are yielding or ready for new work — never while you
  are still working:

      st2 status --set available

- Use dnd only for an explicit hold. It is the only presence that holds back new-mail notices;
  busy does not, so you keep hearing about mail while you work. A dnd that nobody renews ages to
  unknown after fifteen minutes.

      st2 status --set dnd

## Handling mail

    st2 message ls
    st2 message read <filename>
    st2 message reply <filename> -m "your answer"
    st2 message archive <filename>

Archive a message as soon as you have acted on it, not at the end of the task. After a restart
every unarchived message is still in your inbox; before acting on one, check whether you already
handled it, and if so archive it without acting again.

Start a conversation, follow one, or check what you sent:

    st2 message send <identity> --subject "short subject" -m "the body"
    st2 message thread <filename> --tree
    st2 message sent --json
    st2 agents --json --enrich

Conversations that began on the bus stay on the bus: questions, blockers and "done" all go back
with `st2 message reply`. Nobody watches your terminal unless a person typed there.

Subjects and sender names are single lines: no line breaks, no `---`, no control characters. A
message over 1 MiB is refused; put large content in a file and send its path.
"""


def guide_text() -> str:
    return GUIDE
