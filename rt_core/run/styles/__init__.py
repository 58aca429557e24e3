"""The two prompt styles of one protocol: `chat` (instruction models) and `stem` (base
models), the context every stage call gets, and parsing of what the models write."""
