"""The event table: rows from any engine as one polars DataFrame in canonical order (:mod:`.event_table`),
logs loaded into a :class:`~.loading.LogSet` (:mod:`.loading`), and the event store on disk (:mod:`.store`)."""
