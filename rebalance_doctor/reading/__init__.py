"""Reading logs: from what the user typed to matched lines. Sources (paths, URIs, the node of each file),
blocks (decoding, sniffing, spans, packs), the literal prefilter, the envelope of a line (time, level,
logger, thread), continuation lines, catalog matches shaped as event rows, and the line accounting.
Engine-neutral: both engines read through it. It imports only :mod:`..catalog`."""
