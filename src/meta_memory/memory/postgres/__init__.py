"""The PostgreSQL backend: realm stores, the recall index, the steward's rows and the timeline on one
database that several gateways share (psycopg 3 and its connection pool)."""
