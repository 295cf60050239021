"""From a model to trajectories: ``dagmath generate`` and the gold construction ``dagmath gold``.

Modules, one stage each:

- ``problems``: read and validate the problems file.
- ``prompts``: our system prompt, the authors' user prompt, the gold stages' prompts, and
  every JSON schema.
- ``client``: one chat-completions call returning JSON, with every retry (``openai``),
  the pre-flight check and the breaker that stop a run that cannot succeed.
- ``bounded``: every response body read within size, inflation and nesting caps.
- ``store``: the journal that makes runs resumable, atomic result files.
- ``progress``: the progress bar / periodic lines.
- ``generate``: the ``generate`` run; ``gold``: the three-stage gold run, whose checks
  (arithmetic, parents and pruning, edges) are in ``gold_checks``; the SymPy arithmetic
  check runs in ``arith_worker``, a process behind a deadline.
- ``cli``: ``register(subparsers)`` adds both subcommands to ``dagmath``.
"""
