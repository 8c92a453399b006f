"""DING: exactly-once, screen-verified mail notices into a seat's terminal (docs/delivery.md §DING).

``notice`` builds the frame, ``screen`` and ``harness`` read a captured pane, ``ownership`` is
the persisted delivery state machine, ``terminal`` talks to the seat's own tmux server,
``watch`` wakes on inbox/status mutations, and ``notifier`` is the loop behind ``st2 ding``.
"""
