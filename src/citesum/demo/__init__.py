"""A deterministic synthetic haystack: our own demo corpus and test fixture, with known fact-to-document gold."""
