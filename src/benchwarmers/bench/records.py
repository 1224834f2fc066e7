"""The records the bench's callers see, typed: collections, the call log's panels and seats.

They are defined with the rows in `store/records.py`; the server and the CLI take them from here,
so that nothing above the bench imports the store.
"""

from __future__ import annotations

from benchwarmers.store.collection_rows import collection_fields
from benchwarmers.store.records import Collection, CollectionFields, ListedPanel, LoggedSeat, PublicVerdict

__all__ = ["Collection", "CollectionFields", "ListedPanel", "LoggedSeat", "PublicVerdict", "collection_fields"]
