"""The transaction coordinator's producer-id part (idempotent producers only)."""
