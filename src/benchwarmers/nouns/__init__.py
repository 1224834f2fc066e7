"""The bench's nouns, defined once: typed, frozen models and enums that every layer shares."""
