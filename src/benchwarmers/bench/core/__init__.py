"""What every layer of the bench shares: seat outcomes and the records passed between layers."""
