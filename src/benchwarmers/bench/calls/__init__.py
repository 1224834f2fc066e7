"""Calling a model: the one service that paces, calls, classifies and scrubs."""
