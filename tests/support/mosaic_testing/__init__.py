"""Helpers shared by the test folders: real logs' locations, hand-built logs, tools' text
(and the network namespaces of tests/corpus/test_hosts.py, which benchmarks/hosts.py uses too).

pytest finds this package through ``pythonpath = ["tests/support"]``
(pyproject.toml), which puts no other folder on the path: the test folders
(``tests/darshan``, ``tests/corpus``, ...) never become top-level names that
could shadow an installed package (pydarshan's ``darshan``).
"""
