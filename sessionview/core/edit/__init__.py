"""Editing, one job per module.

- :mod:`.change`: a :class:`~.change.Change` (apply, inverse), whether it is a no-op, its counts;
- :mod:`.encode`: a message value encoded the way the session's format writes it (asking the adapter);
- :mod:`.plan`: the planners (edit, delete, truncate, compact);
- :mod:`.integrity`: tool-call pairs a change would split, and the nearest valid range;
- :mod:`.preview`: what a change will do, as preview rows and as a unified diff;
- :mod:`.writeback`: commit a change to storage (a typed :class:`~.writeback.Outcome`);
- :mod:`.history`: this run's operations, undo and redo (bounded, private stacks);
- :mod:`.summary`: the inputs of a compaction summary (digest, summarizer command).
"""
