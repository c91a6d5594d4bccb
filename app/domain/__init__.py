"""The data every layer shares: documents, evidence, claims, answers. Imports nothing else from app."""
