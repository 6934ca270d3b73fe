"""Writing what was said next to the picture: ``photo.txt`` and XMP sidecars.

Owns the sidecar writer (``writer``: atomic writes, naming, what may be overwritten), the formats
it can write, each a named kind with its naming, bytes and reader (``formats``), the XMP with its
IPTC accessibility fields (``xmp``) and the ledger of what CapDesk wrote where (``ledger``), so that
a person's own edits are never overwritten.

May import: describe/ (the ``AltText`` it writes), ``safe_files`` and the shared vocabulary.
"""
