"""One module per category of the hostile-input suite; each lists its CASES (see ../README.md)."""
