"""The per-problem method adapters: one module per problem type registers its methods."""
