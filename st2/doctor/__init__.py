"""`st2 doctor`: advisories and failures about the catalog, its records and its tasks."""
