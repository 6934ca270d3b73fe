"""Where a document's pictures wait to be described (capdesk.altfill.documents.PictureStore): any entry
name a document may hold, however long, gives a file with the picture's bytes, once per picture."""

from __future__ import annotations

from capdesk.altfill.documents import PictureStore


def test_a_name_longer_than_the_file_system_takes_is_stored_under_a_short_one():
    store = PictureStore()
    try:
        long = "word/media/" + "照片" * 45 + ".png"  # 270 bytes of name: over the 255 a file name may have
        data = b"\x89PNG\r\n\x1a\n picture bytes"
        first = store.add(data, long)
        again = store.add(data, "word/media/" + "图" * 90 + ".png")  # the same picture under another long name
        assert first == again and first.read_bytes() == data and first.suffix == ".png"
        assert store.add(b"other bytes", "media/short.jpg").name == "short.jpg"
    finally:
        store.close()
