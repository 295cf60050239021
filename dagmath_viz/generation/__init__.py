"""From a model to trajectories: ``dagmath generate`` and the gold construction ``dagmath gold``.

Modules, one stage each:

- ``problems``: read and validate the problems file.
- ``prompts``: our system prompt, the authors' user prompt, the solution schema.
- ``client``: one chat-completions call returning JSON, with every retry (``openai``).
- ``store``: the journal that makes runs resumable, atomic result files.
- ``progress``: the progress bar / periodic lines.
- ``generate``: the ``generate`` run; ``gold``: the three-stage gold run.
- ``cli``: ``register(subparsers)`` adds both subcommands to ``dagmath``.
"""
