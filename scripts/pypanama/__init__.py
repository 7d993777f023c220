"""Python helpers of the project's scripts (standard library only)."""
