"""Grading submitted notebooks: the sandbox, the worker inside it, and the grader outside.

The grader (:mod:`.grader`) never trusts the submission's process: the student's cells run in a
confined worker (:mod:`.sandbox`, :mod:`.worker`), which then only answers "call your answer
with these inputs"; expected values and the instructor's cases stay in the grader.
"""
