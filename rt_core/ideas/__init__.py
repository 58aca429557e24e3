"""The notebook of every idea: the bank (bank.py), seen before (seen.py) and exports
(export.py). The rows themselves are kept by the store (store/ideas.py)."""
