r"""Answers: ``\boxed{}`` extraction, the exact comparison of answer forms, and the
time-limited equivalence check with its worker process."""
