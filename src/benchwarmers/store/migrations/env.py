"""Alembic environment: migrations run on a connection handed over by `store.db.migrate`."""

from alembic import context

from benchwarmers.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only when someone runs the alembic CLI by hand
    raise SystemExit("run migrations through `benchwarmers` (they migrate on start)")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
