"""Ideas from facets: what each paper states (purpose, mechanism, evaluation, gap), pairings
of one field's mechanism with another field's purpose, proposals written from a pairing,
and reviews that check a proposal against a rubric that can be computed. For base models,
which cannot plan or judge (README, "The embedded model is a base model")."""
