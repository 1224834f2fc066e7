"""The typed records name exactly what is stored: a table's columns."""

from __future__ import annotations

from benchwarmers.store import schema
from benchwarmers.store.records import Collection, CollectionFields, PanelRow, SeatRow


def keys(record: type) -> set[str]:
    return set(record.__required_keys__) | set(record.__optional_keys__)


def test_row_records_are_their_tables_columns():
    assert keys(PanelRow) == set(schema.panels.c.keys())
    assert keys(SeatRow) == set(schema.seats.c.keys())
    assert keys(Collection) == set(schema.collections.c.keys()) - {"id", "updated_at"}
    assert keys(CollectionFields) == keys(Collection) - {"created_at"}
