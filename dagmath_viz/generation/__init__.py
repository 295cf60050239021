"""From a model to trajectories: ``dagmath generate`` and the gold construction ``dagmath gold``.

Modules, one stage each:

- ``problems``: read and validate the problems file.
- ``prompts``: our system prompt, the authors' user prompt, the gold stages' prompts, and
  every JSON schema.
- ``client``: one chat-completions call returning JSON, with every retry (``openai``).
- ``store``: the journal that makes runs resumable, atomic result files.
- ``progress``: the progress bar / periodic lines.
- ``generate``: the ``generate`` run; ``gold``: the three-stage gold run, whose checks
  (arithmetic, parents and pruning, edges) are in ``gold_checks``.
- ``cli``: ``register(subparsers)`` adds both subcommands to ``dagmath``.
"""
