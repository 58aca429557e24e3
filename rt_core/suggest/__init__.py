"""Suggest a neighbourhood: researchers and papers from different fields who could meet on a
topic. fields.py (how far apart two fields are) is shared with reviewer choice."""
